// Where a GPU thread's time goes in a zstd Huffman literal stream (issue 18), on the blocks of one
// 4 MiB zstd-1 frame of the sample:
//   - one thread: clock64() around building a block's table and decoding its first stream, the
//     stream read from global memory, from a copy in shared memory, the table in global memory;
//   - one warp taken apart (lanes_probe): one lane, one block's four streams, eight blocks, the
//     literal kernel's 32 lanes, 32 lanes on one stream; each lane's finish time;
//   - the same work timed with CUDA events, beside the library's literal kernel and copies of its
//     shape (clone_kernel) with one difference each, on 8 blocks and on a batch of 256 frames.
// Printed in cycles per decoded symbol (events: at the device's clock rate) and GB/s.
//
//   build-dev/bench/zstd_huffman_probe [--edge E]
//   bench/zstd_huffman_probe.sh [--edge E]       (one GPU-machine call, built alone)
#include <cuda_runtime_api.h>
#include <zstd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "cli/sample.hpp"
#include "codec/portable/zstd_block_decode.hpp"
#include "cuda/zstd_decode_kernels.cuh"
#include "cuda/zstd_gpu_jobs.hpp"
#include "kernel_timing.hpp"

namespace {

namespace portable = zarrdirect::codec::portable;
namespace detail = portable::zstd_detail;
using namespace kernel_timing;

constexpr unsigned kStreamCopyBytes = 40 * 1024;

__global__ void probe(const portable::ZstdBlockJob* job_ptr, const std::uint8_t* src, std::uint8_t* scratch,
                      long long* cycles, int* statuses) {
  __shared__ detail::HuffmanTable table;
  __shared__ alignas(16) std::uint8_t stream_copy[kStreamCopyBytes];
  if (threadIdx.x != 0) return;
  const portable::ZstdBlockJob& job = *job_ptr;
  long long t0 = clock64();
  statuses[0] = static_cast<int>(portable::zstd_build_huffman_table(job, src, table));
  long long t1 = clock64();
  const std::uint64_t segment = (job.literal_size + 3) / 4;
  statuses[1] = static_cast<int>(detail::huffman_decode_stream(table, src + job.literals_src, job.stream_sizes[0],
                                                               scratch + job.literals, segment));
  long long t2 = clock64();
  const std::uint32_t size = job.stream_sizes[0] < kStreamCopyBytes ? job.stream_sizes[0] : kStreamCopyBytes;
  for (std::uint32_t i = 0; i < size; ++i) stream_copy[i] = src[job.literals_src + i];
  long long t3 = clock64();
  statuses[2] = static_cast<int>(detail::huffman_decode_stream(table, stream_copy, size, scratch + job.literals, segment));
  long long t4 = clock64();
  // The table copied to a global buffer (the scratch past the literals) and used from there.
  detail::HuffmanTable* global_table = reinterpret_cast<detail::HuffmanTable*>(scratch + job.literals + 4 * segment + 64 -
                                                                               (job.literals + 4 * segment) % 8);
  *global_table = table;
  long long t5 = clock64();
  statuses[3] = static_cast<int>(detail::huffman_decode_stream(*global_table, src + job.literals_src, job.stream_sizes[0],
                                                               scratch + job.literals, segment));
  long long t6 = clock64();
  cycles[0] = t1 - t0;
  cycles[1] = t2 - t1;
  cycles[2] = t4 - t3;
  cycles[3] = t6 - t5;
  cycles[4] = static_cast<long long>(segment);
}

// The literal kernel's shape taken apart: which lanes of one warp decode what, each lane's cycles.
// mode 0: lane 0 alone (block 0, stream 0); 1: four lanes, block 0's four streams; 2: eight lanes,
// stream 0 of blocks 0-7 (eight tables); 3: 32 lanes, block lane / 4, stream lane % 4 (the kernel);
// 4: 32 lanes all decoding block 0's stream 0 (same control flow and addresses).
__global__ void lanes_probe(const portable::ZstdBlockJob* jobs, const std::uint8_t* src, std::uint8_t* scratch,
                            long long* cycles, long long* finish, int mode) {
  __shared__ detail::HuffmanTable tables[8];
  const unsigned lane = threadIdx.x;
  unsigned block = 0, stream = 0;
  bool active = false;
  switch (mode) {
    case 0: active = lane == 0; break;
    case 1: active = lane < 4; stream = lane; break;
    case 2: active = lane < 8; block = lane; break;
    case 3: active = true; block = lane / 4; stream = lane % 4; break;
    default: active = true; break;
  }
  const bool builds = active && stream == 0 && (mode != 4 || lane == 0);
  long long t0 = clock64();
  if (builds) portable::zstd_build_huffman_table(jobs[block], src, tables[block]);
  __syncthreads();
  long long t1 = clock64();
  if (active) portable::zstd_block_detail::decode_huffman_stream_slot(jobs[block], stream, tables[block], src, scratch);
  long long t2 = clock64();
  cycles[2 * lane] = t1 - t0;
  cycles[2 * lane + 1] = active ? t2 - t1 : 0;
  finish[lane] = active ? t2 : 0;  // lanes that run apart finish apart
}

// The kernel's layout (mode 3) with the stream loop written here, every lane running the same
// number of rounds with a __syncwarp() after each: if the warp's lanes drift apart in the shared
// loop, this keeps them together.
__device__ long long synced_stream(const detail::HuffmanTable& table, const std::uint8_t* stream, std::uint64_t size,
                                   std::uint8_t* out, std::uint64_t count, std::uint64_t rounds) {
  detail::BackwardBits bits;
  bits.init(stream, size);
  const std::uint32_t code_shift = 64 - table.max_bits;
  std::uint64_t i = 0;
  for (std::uint64_t r = 0; r < rounds; ++r) {
    if (i + 8 <= count) {
      std::uint64_t word = 0;
      for (std::uint32_t half = 0; half < 8; half += 4)
        bits.skip(detail::huffman_decode_four(table, bits.left_aligned(), code_shift, word, half));
      // Rounded down to 8 bytes: the timing, not the output, is what this loop is for.
      *reinterpret_cast<std::uint64_t*>(reinterpret_cast<std::uintptr_t>(out + i) & ~std::uintptr_t{7}) = word;
      i += 8;
    }
    __syncwarp();
  }
  return bits.pos;
}

__global__ void synced_probe(const portable::ZstdBlockJob* jobs, const std::uint8_t* src, std::uint8_t* scratch,
                             long long* cycles, long long* finish) {
  __shared__ detail::HuffmanTable tables[8];
  const unsigned lane = threadIdx.x, block = lane / 4, stream = lane % 4;
  if (stream == 0) portable::zstd_build_huffman_table(jobs[block], src, tables[block]);
  __syncthreads();
  const portable::ZstdBlockJob& job = jobs[block];
  const auto where = portable::zstd_block_detail::huffman_stream_slot(job, stream);
  // Every lane runs as many rounds as the longest stream (the first) needs.
  const std::uint64_t rounds = portable::zstd_block_detail::huffman_stream_slot(job, 0).count / 8;
  long long t1 = clock64();
  const long long left = synced_stream(tables[block], src + where.src, job.stream_sizes[stream], scratch + where.out,
                                       where.count, rounds);
  long long t2 = clock64();
  cycles[2 * lane] = left;
  cycles[2 * lane + 1] = t2 - t1;
  finish[lane] = t2;
}

// The literal kernel's shape (8 blocks of 32 lanes a block of threads, a table per block in
// shared memory): the grid-stride loop, the table builds, the barrier, then each lane's stream
// decoded by `decode(job, slot, table)` and its status stored. Lane timings of the first round of
// block of threads 0 go to `stamps`: finish (0-31), start (32-63), after the barrier (64-95), so
// the build's share and lanes that ran apart (they finish apart) show.
template <bool kSyncWarp, typename Decode>
__device__ __forceinline__ void clone_body(const portable::ZstdBlockJob* jobs, std::uint32_t block_count,
                                           const std::uint8_t* src, long long* stamps, Decode decode) {
  __shared__ detail::HuffmanTable tables[8];
  const unsigned group = threadIdx.x / 4, slot = threadIdx.x % 4;
  for (std::uint64_t first = static_cast<std::uint64_t>(blockIdx.x) * 8; first < block_count;
       first += static_cast<std::uint64_t>(gridDim.x) * 8) {
    const std::uint64_t b = first + group;
    const bool mine = b < block_count;
    const bool stamp = blockIdx.x == 0 && first == 0;
    if (stamp) stamps[32 + threadIdx.x] = clock64();
    if (mine && slot == 0) portable::zstd_build_huffman_table(jobs[b], src, tables[group]);
    __syncthreads();
    if (kSyncWarp) __syncwarp();
    if (stamp) stamps[64 + threadIdx.x] = clock64();
    if (mine) decode(jobs[b], slot, tables[group]);
    if (stamp) stamps[threadIdx.x] = clock64();
    __syncthreads();
  }
}

// Measured (H100, session 16): this shape with the library's stream decode is as slow as the
// library's kernel (742 cycles a symbol on blocks 0-7) while the lanes probe, the same work
// without the loop, __launch_bounds__ and __restrict__, ran at 203. The kernels below take the
// differences apart: kSyncWarp reconverges the warp after the barrier (eight lanes building eight
// tables diverge in the build; if they stayed apart, the warp would run the decode once per group
// of lanes); kMaxThreads 1024 leaves the launch unbounded, as the lanes probe is; clone_unbounded
// drops __restrict__ as well; compact_clone swaps the stream loop.
// Measured (H100, session 17): none of those; the status. With the status dropped
// (StatusDroppedDecode) the clone ran at 196 cycles a symbol against 737, in one round (no loop)
// at 795: the stream loop's early returns, whose status was kept, were the cost. The library's
// loop has had none since (zstd_huffman.hpp); this probe's LibraryStreamDecode runs that loop.
struct LibraryStreamDecode {
  const std::uint8_t* src;
  std::uint8_t* scratch;
  __device__ void operator()(const portable::ZstdBlockJob& job, unsigned slot, const detail::HuffmanTable& table) const {
    portable::zstd_block_detail::slot_statuses(scratch, job)[slot] =
        portable::zstd_block_detail::decode_huffman_stream_slot(job, slot, table, src, scratch);
  }
};

// The library's stream decode with its status dropped, as the lanes probe does: if the compiler
// then drops the checks that only feed the status, the loop shrinks.
struct StatusDroppedDecode {
  const std::uint8_t* src;
  std::uint8_t* scratch;
  __device__ void operator()(const portable::ZstdBlockJob& job, unsigned slot, const detail::HuffmanTable& table) const {
    portable::zstd_block_detail::decode_huffman_stream_slot(job, slot, table, src, scratch);
  }
};

template <bool kSyncWarp, int kMaxThreads = 32, typename Decode = LibraryStreamDecode>
__global__ void __launch_bounds__(kMaxThreads) clone_kernel(const portable::ZstdBlockJob* __restrict__ jobs,
                                                   std::uint32_t block_count, const std::uint8_t* __restrict__ src,
                                                   std::uint8_t* __restrict__ scratch, long long* stamps) {
  clone_body<kSyncWarp>(jobs, block_count, src, stamps, Decode{src, scratch});
}

// One round, no grid-stride loop: blocks 0-7 only, as the lanes probe lays them.
__global__ void __launch_bounds__(32) single_round_clone(const portable::ZstdBlockJob* __restrict__ jobs,
                                                         const std::uint8_t* __restrict__ src,
                                                         std::uint8_t* __restrict__ scratch, long long* stamps) {
  __shared__ detail::HuffmanTable tables[8];
  const unsigned group = threadIdx.x / 4, slot = threadIdx.x % 4;
  stamps[32 + threadIdx.x] = clock64();
  if (slot == 0) portable::zstd_build_huffman_table(jobs[group], src, tables[group]);
  __syncthreads();
  stamps[64 + threadIdx.x] = clock64();
  LibraryStreamDecode{src, scratch}(jobs[group], slot, tables[group]);
  stamps[threadIdx.x] = clock64();
}

__global__ void clone_unbounded(const portable::ZstdBlockJob* jobs, std::uint32_t block_count, const std::uint8_t* src,
                                std::uint8_t* scratch, long long* stamps) {
  clone_body<false>(jobs, block_count, src, stamps, LibraryStreamDecode{src, scratch});
}

// The stream loop with its reload split in two: the common case (8 bytes wholly above the
// stream's start) inline, everything else (the stream's first bytes, past its start) in a call.
// In the library's loop those rare paths are inlined between the hot instructions; the fast
// kernels' loops span 8.5 KB of code, the slow ones' 11.5 KB (SASS, session 16). Decodes the
// stream's whole groups of 8 symbols into `out` (8-byte aligned); returns the bits left.
__device__ __noinline__ std::uint64_t cold_window(detail::BackwardBits& bits) { return bits.left_aligned(); }

__device__ long long compact_stream(const detail::HuffmanTable& table, const std::uint8_t* stream, std::uint64_t size,
                                    std::uint8_t* out, std::uint64_t count) {
  detail::BackwardBits bits;
  if (!bits.init(stream, size)) return -1;
  const std::uint32_t code_shift = 64 - table.max_bits;
  for (std::uint64_t i = 0; i + 8 <= count; i += 8) {
    std::uint64_t word = 0;
    for (std::uint32_t half = 0; half < 8; half += 4) {
      std::uint64_t window;
      if (bits.pos > 64) {
        // The 8 bytes ending with the one that holds bit pos - 1, bit pos - 1 moved to bit 63.
        const std::int64_t at = ((bits.pos - 1) >> 3) - 7;
        window = detail::load_le64_inside(stream + at) << static_cast<std::uint32_t>(at * 8 + 64 - bits.pos);
      } else {
        window = cold_window(bits);
      }
      bits.skip(detail::huffman_decode_four(table, window, code_shift, word, half));
    }
    *reinterpret_cast<std::uint64_t*>(out + i) = word;
  }
  return bits.pos;
}

// compact_stream where the lane's segment starts on 8 bytes; the library's loop where it does not
// (the short last block of a frame).
struct CompactStreamDecode {
  const std::uint8_t* src;
  std::uint8_t* scratch;
  __device__ void operator()(const portable::ZstdBlockJob& job, unsigned slot, const detail::HuffmanTable& table) const {
    namespace block = portable::zstd_block_detail;
    const block::HuffmanStreamSlot where = block::huffman_stream_slot(job, slot);
    portable::DecodeStatus status = portable::DecodeStatus::ok;
    if ((reinterpret_cast<std::uintptr_t>(scratch + where.out) & 7) != 0) {
      status = block::decode_huffman_stream_slot(job, slot, table, src, scratch);
    } else if (compact_stream(table, src + where.src, job.stream_sizes[slot], scratch + where.out, where.count) < 0) {
      status = portable::DecodeStatus::corrupt;
    }
    block::slot_statuses(scratch, job)[slot] = status;
  }
};

__global__ void __launch_bounds__(32) compact_clone(const portable::ZstdBlockJob* __restrict__ jobs,
                                                    std::uint32_t block_count, const std::uint8_t* __restrict__ src,
                                                    std::uint8_t* __restrict__ scratch, long long* stamps) {
  clone_body<false>(jobs, block_count, src, stamps, CompactStreamDecode{src, scratch});
}

// The largest of the lanes' decode cycles (odd entries of a probe's 64 cycle counts).
long long slowest_decode(const std::vector<long long>& lane_cycles) {
  long long slowest = 0;
  for (int lane = 0; lane < 32; ++lane) slowest = std::max(slowest, lane_cycles[2 * lane + 1]);
  return slowest;
}

}  // namespace

int main(int argc, char** argv) {
  std::uint64_t edge = 128;
  if (argc == 3 && std::strcmp(argv[1], "--edge") == 0) edge = std::strtoull(argv[2], nullptr, 10);
  const std::vector<std::uint16_t> volume = zarrdirect::cli::sample_volume(edge, edge, edge);
  const std::size_t bytes = volume.size() * 2;
  std::vector<std::uint8_t> frame(ZSTD_compressBound(bytes));
  frame.resize(ZSTD_compress(frame.data(), frame.size(), volume.data(), bytes, 1));
  zarrdirect::cuda::ZstdGpuJobs jobs;
  std::uint64_t scratch_bytes = 0;
  if (zarrdirect::cuda::append_zstd_jobs(frame, 0, 0, bytes, scratch_bytes, jobs) != portable::DecodeStatus::ok) return 1;
  const portable::ZstdBlockJob& job = jobs.blocks.front();
  std::printf("block 0: literal bytes %u, streams %u, stream 0 %u bytes\n", job.literal_size, job.streams,
              job.stream_sizes[0]);
  frame.resize(frame.size() + 64, 0);  // room for the aligned 8-byte loads at the stream's end
  std::uint8_t* d_src = device_copy(frame);
  std::uint8_t* d_scratch = device_bytes(scratch_bytes + 8192);  // and a table copy past the literals
  portable::ZstdBlockJob* d_job = device_copy(std::vector<portable::ZstdBlockJob>{job});
  auto* d_cycles = reinterpret_cast<long long*>(device_bytes(8 * sizeof(long long)));
  auto* d_statuses = reinterpret_cast<int*>(device_bytes(8 * sizeof(int)));
  for (int run = 0; run < 3; ++run) {
    probe<<<1, 32>>>(d_job, d_src, d_scratch, d_cycles, d_statuses);
    check(cudaDeviceSynchronize(), "probe");
    const std::vector<long long> cycles = host_copy(d_cycles, 8);
    const std::vector<int> statuses = host_copy(d_statuses, 8);
    const double symbols = static_cast<double>(cycles[4]);
    std::printf("run %d: table %lld cycles; stream (%lld symbols) from global %.1f cycles/symbol, from shared %.1f, "
                "table in global %.1f; statuses %d %d %d %d\n",
                run, cycles[0], cycles[4], cycles[1] / symbols, cycles[2] / symbols, cycles[3] / symbols, statuses[0],
                statuses[1], statuses[2], statuses[3]);
  }
  portable::ZstdBlockJob* d_jobs = device_copy(jobs.blocks);
  auto* d_lane_cycles = reinterpret_cast<long long*>(device_bytes(64 * sizeof(long long)));
  // Lanes' finish times; the clones also write each lane's start (32-63) and barrier (64-95).
  auto* d_finish = reinterpret_cast<long long*>(device_bytes(96 * sizeof(long long)));
  const char* names[] = {"lane 0 alone", "4 lanes, one block's streams", "8 lanes, stream 0 of 8 blocks",
                         "32 lanes as the kernel", "32 lanes, one stream"};
  const double symbols = static_cast<double>((job.literal_size + 3) / 4);
  for (int mode = 0; mode < 5 && jobs.blocks.size() >= 8; ++mode) {
    for (int run = 0; run < 2; ++run) {
      lanes_probe<<<1, 32>>>(d_jobs, d_src, d_scratch, d_lane_cycles, d_finish, mode);
      check(cudaDeviceSynchronize(), "lanes probe");
    }
    const std::vector<long long> lane_cycles = host_copy(d_lane_cycles, 64);
    std::printf("%s: tables %lld cycles, decode %.1f cycles/symbol (slowest lane)\n", names[mode], lane_cycles[0],
                static_cast<double>(slowest_decode(lane_cycles)) / symbols);
    // Each active lane's finish, in thousands of cycles after the first lane's: lanes that the
    // warp ran together finish together.
    const std::vector<long long> finish = host_copy(d_finish, 32);
    long long first = 0;
    for (long long f : finish) first = f != 0 && (first == 0 || f < first) ? f : first;
    std::printf("  finish (k cycles after the first):");
    for (long long f : finish)
      if (f != 0) std::printf(" %lld", (f - first) / 1000);
    std::printf("\n");
  }
  for (int run = 0; run < 2; ++run) {
    synced_probe<<<1, 32>>>(d_jobs, d_src, d_scratch, d_lane_cycles, d_finish);
    check(cudaDeviceSynchronize(), "synced probe");
  }
  const std::vector<long long> lane_cycles = host_copy(d_lane_cycles, 64);
  std::printf("32 lanes as the kernel, loop here with __syncwarp: decode %.1f cycles/symbol (slowest lane), "
              "bits left lane 0 %lld\n", static_cast<double>(slowest_decode(lane_cycles)) / symbols, lane_cycles[0]);
  // The same work timed from the host with events (clock64 cannot be moved around the loop
  // there), and the literal kernel itself on these blocks, eight at a time and all at once.
  int clock_khz = 0;
  check(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0), "clock rate");
  const double cycles_per_ms = clock_khz;
  const auto report = [&](const char* what, double ms) {
    std::printf("%s: %.3f ms, %.1f cycles/symbol at %.0f MHz\n", what, ms, ms * cycles_per_ms / symbols,
                cycles_per_ms / 1000);
  };
  report("events: lanes probe, 32 lanes as the kernel",
         time_runs(3, [&] { lanes_probe<<<1, 32>>>(d_jobs, d_src, d_scratch, d_lane_cycles, d_finish, 3); }).median_ms);
  report("events: synced probe",
         time_runs(3, [&] { synced_probe<<<1, 32>>>(d_jobs, d_src, d_scratch, d_lane_cycles, d_finish); }).median_ms);
  const auto block_total = static_cast<std::uint32_t>(jobs.blocks.size());
  for (std::uint32_t first = 0; first + 8 <= block_total; first += 8) {
    char what[96];
    std::snprintf(what, sizeof what, "events: literal kernel, blocks %u-%u", first, first + 7);
    report(what, time_runs(3, [&] {
                   check(zarrdirect::cuda::launch_zstd_literals(d_jobs + first, 8, d_src, d_scratch, nullptr, 1), "launch");
                 }).median_ms);
  }
  report("events: literal kernel, every block of the frame", time_runs(3, [&] {
           check(zarrdirect::cuda::launch_zstd_literals(d_jobs, block_total, d_src, d_scratch, nullptr, 1), "launch");
         }).median_ms);
  // The clone and its variants on blocks 0-7, each lane's finish printed after.
  const auto finish_spread = [&] {
    const std::vector<long long> stamps = host_copy(d_finish, 96);
    long long first = stamps[0], start = stamps[32], barrier = stamps[64];
    for (int lane = 0; lane < 32; ++lane) {
      first = stamps[lane] < first ? stamps[lane] : first;
      start = stamps[32 + lane] < start ? stamps[32 + lane] : start;
      barrier = stamps[64 + lane] < barrier ? stamps[64 + lane] : barrier;
    }
    std::printf("  tables and barrier %lld k cycles, decode %.1f cycles/symbol (first lane to finish); "
                "finish (k cycles after the first):", (barrier - start) / 1000,
                static_cast<double>(first - barrier) / symbols);
    for (int lane = 0; lane < 32; ++lane) std::printf(" %lld", (stamps[lane] - first) / 1000);
    std::printf("\n");
  };
  report("events: clone kernel, blocks 0-7",
         time_runs(3, [&] { clone_kernel<false><<<1, 32>>>(d_jobs, 8, d_src, d_scratch, d_finish); }).median_ms);
  finish_spread();
  report("events: clone kernel with __syncwarp after the barrier, blocks 0-7",
         time_runs(3, [&] { clone_kernel<true><<<1, 32>>>(d_jobs, 8, d_src, d_scratch, d_finish); }).median_ms);
  finish_spread();
  report("events: clone with __launch_bounds__(1024), blocks 0-7",
         time_runs(3, [&] { clone_kernel<false, 1024><<<1, 32>>>(d_jobs, 8, d_src, d_scratch, d_finish); }).median_ms);
  finish_spread();
  report("events: clone with the compact stream loop, blocks 0-7",
         time_runs(3, [&] { compact_clone<<<1, 32>>>(d_jobs, 8, d_src, d_scratch, d_finish); }).median_ms);
  finish_spread();
  report("events: clone without __launch_bounds__ and __restrict__, blocks 0-7",
         time_runs(3, [&] { clone_unbounded<<<1, 32>>>(d_jobs, 8, d_src, d_scratch, d_finish); }).median_ms);
  finish_spread();
  report("events: clone with the status dropped, blocks 0-7", time_runs(3, [&] {
           clone_kernel<false, 32, StatusDroppedDecode><<<1, 32>>>(d_jobs, 8, d_src, d_scratch, d_finish);
         }).median_ms);
  finish_spread();
  report("events: clone in one round (no loop), blocks 0-7",
         time_runs(3, [&] { single_round_clone<<<1, 32>>>(d_jobs, d_src, d_scratch, d_finish); }).median_ms);
  finish_spread();
  // 256 copies of the frame's jobs (one source, scratch apart): the kernel bench's batch.
  zarrdirect::cuda::ZstdGpuJobs batch;
  const std::uint64_t scratch_stride = (scratch_bytes + 63) / 64 * 64;  // each copy's literals stay aligned
  for (std::uint64_t copy = 0; copy < 256; ++copy)
    zarrdirect::cuda::append_rebased(jobs, 0, copy * bytes, copy * scratch_stride, batch);
  portable::ZstdBlockJob* d_batch = device_copy(batch.blocks);
  std::uint8_t* d_batch_scratch = device_bytes(256 * scratch_stride);
  const auto batch_blocks = static_cast<std::uint32_t>(batch.blocks.size());
  const double batch_bytes = 256.0 * static_cast<double>(bytes);
  const double kernel_ms = time_runs(3, [&] {
    check(zarrdirect::cuda::launch_zstd_literals(d_batch, batch_blocks, d_src, d_batch_scratch, nullptr, 1), "launch");
  }).median_ms;
  const double clone_ms = time_runs(3, [&] {
    clone_kernel<false><<<(batch_blocks + 7) / 8, 32>>>(d_batch, batch_blocks, d_src, d_batch_scratch, d_finish);
  }).median_ms;
  const double synced_ms = time_runs(3, [&] {
    clone_kernel<true><<<(batch_blocks + 7) / 8, 32>>>(d_batch, batch_blocks, d_src, d_batch_scratch, d_finish);
  }).median_ms;
  const double compact_ms = time_runs(3, [&] {
    compact_clone<<<(batch_blocks + 7) / 8, 32>>>(d_batch, batch_blocks, d_src, d_batch_scratch, d_finish);
  }).median_ms;
  std::printf("256 frames (%u blocks): literal kernel %.3f ms (%.1f GB/s), clone kernel %.3f ms (%.1f GB/s), "
              "clone with __syncwarp %.3f ms (%.1f GB/s), compact loop %.3f ms (%.1f GB/s)\n",
              batch_blocks, kernel_ms, batch_bytes / (kernel_ms * 1e6), clone_ms, batch_bytes / (clone_ms * 1e6),
              synced_ms, batch_bytes / (synced_ms * 1e6), compact_ms, batch_bytes / (compact_ms * 1e6));
  // The compact loop's output against the library kernel's (whole groups of 8 symbols only).
  check(zarrdirect::cuda::launch_zstd_literals(d_jobs, block_total, d_src, d_scratch, nullptr, 1), "launch");
  const std::vector<std::uint8_t> expected = host_copy(d_scratch, scratch_bytes);
  compact_clone<<<(block_total + 7) / 8, 32>>>(d_jobs, block_total, d_src, d_scratch, d_finish);
  const std::vector<std::uint8_t> got = host_copy(d_scratch, scratch_bytes);
  std::uint64_t differing = 0;
  for (const portable::ZstdBlockJob& block : jobs.blocks) {
    if (block.literals_type != portable::ZstdLiteralsType::huffman) continue;
    for (std::uint32_t slot = 0; slot < block.streams; ++slot) {
      const auto where = portable::zstd_block_detail::huffman_stream_slot(block, slot);
      for (std::uint64_t i = 0; i < where.count / 8 * 8; ++i)
        differing += expected[where.out + i] != got[where.out + i] ? 1 : 0;
    }
  }
  std::printf("compact loop against the library kernel: %llu literal bytes differ\n",
              static_cast<unsigned long long>(differing));
  return 0;
}

// Where one GPU thread's time goes in a zstd Huffman literal stream (issue 18): clock64() around
// building a block's table and decoding its first stream, with the stream read from global memory
// and, again, from a copy in shared memory. One block of one 4 MiB zstd-1 frame of the sample,
// one thread (latency, not throughput). Printed in cycles per decoded symbol.
//
//   build-dev/bench/zstd_huffman_probe [--edge E]
#include <cuda_runtime_api.h>
#include <zstd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "cli/sample.hpp"
#include "codec/portable/zstd_block_decode.hpp"
#include "cuda/zstd_gpu_jobs.hpp"

namespace {

namespace portable = zarrdirect::codec::portable;
namespace detail = portable::zstd_detail;

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
                            long long* cycles, int mode) {
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
  if (active) {
    const portable::ZstdBlockJob& job = jobs[block];
    std::uint64_t at = job.literals_src;
    for (unsigned i = 0; i < stream; ++i) at += job.stream_sizes[i];
    const std::uint64_t segment = (job.literal_size + 3) / 4;
    detail::huffman_decode_stream(tables[block], src + at, job.stream_sizes[stream],
                                  scratch + job.literals + stream * segment, segment);
  }
  long long t2 = clock64();
  cycles[2 * lane] = t1 - t0;
  cycles[2 * lane + 1] = active ? t2 - t1 : 0;
}

void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) {
    std::fprintf(stderr, "zstd_huffman_probe: %s: %s\n", what, cudaGetErrorString(status));
    std::exit(1);
  }
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
  std::uint8_t *d_src, *d_scratch;
  portable::ZstdBlockJob* d_job;
  long long* d_cycles;
  int* d_statuses;
  check(cudaMalloc(&d_src, frame.size() + 64), "malloc");
  check(cudaMalloc(&d_scratch, scratch_bytes + 8192), "malloc");
  check(cudaMalloc(&d_job, sizeof(job)), "malloc");
  check(cudaMalloc(&d_cycles, 8 * sizeof(long long)), "malloc");
  check(cudaMalloc(&d_statuses, 8 * sizeof(int)), "malloc");
  check(cudaMemcpy(d_src, frame.data(), frame.size(), cudaMemcpyHostToDevice), "copy");
  check(cudaMemcpy(d_job, &job, sizeof(job), cudaMemcpyHostToDevice), "copy");
  for (int run = 0; run < 3; ++run) {
    probe<<<1, 32>>>(d_job, d_src, d_scratch, d_cycles, d_statuses);
    check(cudaDeviceSynchronize(), "probe");
    long long cycles[8];
    int statuses[8];
    check(cudaMemcpy(cycles, d_cycles, sizeof(cycles), cudaMemcpyDeviceToHost), "back");
    check(cudaMemcpy(statuses, d_statuses, sizeof(statuses), cudaMemcpyDeviceToHost), "back");
    const double symbols = static_cast<double>(cycles[4]);
    std::printf("run %d: table %lld cycles; stream (%lld symbols) from global %.1f cycles/symbol, from shared %.1f, "
                "table in global %.1f; statuses %d %d %d %d\n",
                run, cycles[0], cycles[4], cycles[1] / symbols, cycles[2] / symbols, cycles[3] / symbols, statuses[0],
                statuses[1], statuses[2], statuses[3]);
  }
  portable::ZstdBlockJob* d_jobs;
  long long* d_lane_cycles;
  check(cudaMalloc(&d_jobs, jobs.blocks.size() * sizeof(job)), "malloc");
  check(cudaMalloc(&d_lane_cycles, 64 * sizeof(long long)), "malloc");
  check(cudaMemcpy(d_jobs, jobs.blocks.data(), jobs.blocks.size() * sizeof(job), cudaMemcpyHostToDevice), "copy");
  const char* names[] = {"lane 0 alone", "4 lanes, one block's streams", "8 lanes, stream 0 of 8 blocks",
                         "32 lanes as the kernel", "32 lanes, one stream"};
  const double symbols = static_cast<double>((job.literal_size + 3) / 4);
  for (int mode = 0; mode < 5 && jobs.blocks.size() >= 8; ++mode) {
    for (int run = 0; run < 2; ++run) {
      lanes_probe<<<1, 32>>>(d_jobs, d_src, d_scratch, d_lane_cycles, mode);
      check(cudaDeviceSynchronize(), "lanes probe");
    }
    long long lane_cycles[64];
    check(cudaMemcpy(lane_cycles, d_lane_cycles, sizeof(lane_cycles), cudaMemcpyDeviceToHost), "back");
    long long decode = 0;
    for (int lane = 0; lane < 32; ++lane) decode = lane_cycles[2 * lane + 1] > decode ? lane_cycles[2 * lane + 1] : decode;
    std::printf("%s: tables %lld cycles, decode %.1f cycles/symbol (slowest lane)\n", names[mode], lane_cycles[0],
                static_cast<double>(decode) / symbols);
  }
  return 0;
}

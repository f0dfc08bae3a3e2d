// The two steps of the block-parallel zstd decoder on the device. The decoding rules, bounds
// checks included, are codec/portable's, the same code the CPU tests run against libzstd.
#include "cuda/zstd_decode_kernels.cuh"

#include <cstdlib>
#include <initializer_list>

#include "codec/portable/zstd_block_decode.hpp"
#include "codec/portable/zstd_huffman_lanes.hpp"

namespace zarrdirect::cuda {
namespace {

namespace portable = codec::portable;

// Step one, literals, a thread a Huffman stream (lanes 1, kept for comparison: 32 lanes a stream
// were faster at every batch size, below): a block of threads takes kBlocksPerCta zstd blocks at
// a time, four threads each (one per Huffman stream), whose table is built once by the first of
// them into shared memory: a table per thread in global memory (4 KiB each, thousands of them)
// missed every cache, so each symbol waited on device memory (0.7 MB/s a thread, H100, session 13).
constexpr unsigned kBlocksPerCta = 8;
constexpr unsigned kLiteralThreads = kBlocksPerCta * portable::kZstdSequenceSlot;  // 32
// Step one, sequences: a thread per block, each with its block's tables in shared memory (about
// 5.6 KiB a thread: 8 threads keep a block of threads under the 48 KiB of static shared memory).
constexpr unsigned kSequenceThreads = 8;
// Step two: a few warps (frames) a block of threads, or a block of threads a frame.
constexpr unsigned kFrameThreads = 128;
constexpr unsigned kFrameBlockThreads = 256;
constexpr unsigned kWarp = 32;
constexpr unsigned kMaxBlocks = 65535;

unsigned blocks_for(std::uint64_t threads, unsigned per_block) {
  const std::uint64_t blocks = (threads + per_block - 1) / per_block;
  return static_cast<unsigned>(blocks > kMaxBlocks ? kMaxBlocks : blocks);
}

__global__ void __launch_bounds__(kLiteralThreads)
    zstd_literals_kernel(const portable::ZstdBlockJob* __restrict__ blocks, std::uint32_t block_count,
                         const std::uint8_t* __restrict__ src, std::uint8_t* __restrict__ scratch) {
  __shared__ portable::zstd_detail::HuffmanTable tables[kBlocksPerCta];
  __shared__ portable::DecodeStatus table_statuses[kBlocksPerCta];
  const unsigned group = threadIdx.x / portable::kZstdSequenceSlot;
  const unsigned slot = threadIdx.x % portable::kZstdSequenceSlot;
  // Every thread of the block of threads runs the same number of rounds (the __syncthreads).
  for (std::uint64_t first = static_cast<std::uint64_t>(blockIdx.x) * kBlocksPerCta; first < block_count;
       first += static_cast<std::uint64_t>(gridDim.x) * kBlocksPerCta) {
    const std::uint64_t b = first + group;
    const bool mine = b < block_count;
    if (mine && slot == 0) {
      const portable::ZstdBlockJob& job = blocks[b];
      const bool huffman =
          job.type == portable::ZstdBlockType::compressed && job.literals_type == portable::ZstdLiteralsType::huffman;
      table_statuses[group] = huffman ? portable::zstd_build_huffman_table(job, src, tables[group])
                                      : portable::DecodeStatus::ok;
    }
    __syncthreads();
    if (mine) portable::zstd_decode_literal_slot(blocks[b], slot, tables[group], table_statuses[group], src, scratch);
    __syncthreads();  // the tables are rebuilt in the next round
  }
}

// Step one, literals, with kLanes lanes a Huffman stream (codec/portable/zstd_huffman_lanes.hpp):
// a block of threads per zstd block, stream s on threads [s * kLanes, (s + 1) * kLanes), which lie
// in one warp. Every thread of a warp runs every shuffle (a stream that is absent or damaged
// decodes as empty and reports at the end), so the full mask is always right.
constexpr unsigned kAllLanes = 0xffffffffu;

template <unsigned kLanes>
__device__ portable::DecodeStatus decode_stream_with_lanes(const portable::ZstdBlockJob& job, unsigned slot,
                                                           unsigned lane,
                                                           const portable::zstd_detail::HuffmanTable& table,
                                                           const std::uint8_t* src, std::uint8_t* scratch) {
  namespace zd = portable::zstd_detail;
  const bool present = slot < job.streams;
  portable::zstd_block_detail::HuffmanStreamSlot where;
  const std::uint8_t* stream = nullptr;
  std::uint64_t size = 0;
  if (present) {
    where = portable::zstd_block_detail::huffman_stream_slot(job, slot);
    stream = src + where.src;
    size = job.stream_sizes[slot];
  }
  const std::int64_t stream_bits = present ? zd::huffman_stream_bits(stream, size) : 0;
  const zd::HuffmanShare share = zd::huffman_lane_share(stream_bits > 0 ? stream_bits : 0, lane, kLanes);
  std::int64_t start = share.start;
  zd::HuffmanRun run = zd::huffman_count_segment(table, stream, size, start, share.stop);
  // Each round settles at least one more lane's start (see the header): kLanes rounds at most.
  for (unsigned round = 0; round < kLanes; ++round) {
    const std::int64_t previous_end = __shfl_up_sync(kAllLanes, run.end, 1, kLanes);
    const std::int64_t settled_start = lane == 0 ? share.start : previous_end;
    const bool moved = settled_start != start;
    if (!__any_sync(kAllLanes, moved)) break;
    if (moved) {
      run = zd::huffman_resync_segment(table, stream, size, start, run, settled_start, share.stop);
      start = settled_start;
    }
  }
  std::uint32_t through = run.count;  // this lane's and the earlier lanes' symbols
  for (unsigned distance = 1; distance < kLanes; distance <<= 1) {
    const std::uint32_t earlier = __shfl_up_sync(kAllLanes, through, distance, kLanes);
    if (lane >= distance) through += earlier;
  }
  const std::uint32_t total = __shfl_sync(kAllLanes, through, kLanes - 1, kLanes);
  const std::int64_t last_end = __shfl_sync(kAllLanes, run.end, kLanes - 1, kLanes);
  const bool valid = present && stream_bits >= 0 && last_end == 0 && total == where.count;
  bool written = true;
  if (valid)
    written = zd::huffman_write_segment(table, stream, size, start, run.end,
                                        scratch + where.out + (through - run.count), run.count);
  for (unsigned distance = 1; distance < kLanes; distance <<= 1)
    written = __shfl_xor_sync(kAllLanes, written, distance, kLanes) && written;
  if (!present) return portable::DecodeStatus::ok;
  return valid && written ? portable::DecodeStatus::ok : portable::DecodeStatus::corrupt;
}

template <unsigned kLanes>
__global__ void __launch_bounds__(portable::kZstdSequenceSlot * kLanes)
    zstd_literal_lanes_kernel(const portable::ZstdBlockJob* __restrict__ blocks, std::uint32_t block_count,
                              const std::uint8_t* __restrict__ src, std::uint8_t* __restrict__ scratch) {
  static_assert(kLanes <= 32 && (kLanes & (kLanes - 1)) == 0, "a stream's lanes lie in one warp");
  __shared__ portable::zstd_detail::HuffmanTable table;
  __shared__ portable::DecodeStatus table_status;
  const unsigned slot = threadIdx.x / kLanes;
  const unsigned lane = threadIdx.x % kLanes;
  for (std::uint64_t b = blockIdx.x; b < block_count; b += gridDim.x) {
    const portable::ZstdBlockJob& job = blocks[b];
    const bool compressed = job.type == portable::ZstdBlockType::compressed;
    const bool huffman = compressed && job.literals_type == portable::ZstdLiteralsType::huffman;
    if (threadIdx.x == 0 && huffman) table_status = portable::zstd_build_huffman_table(job, src, table);
    __syncthreads();
    if (huffman) {  // the same for every thread of the block of threads: their shuffles match
      const portable::DecodeStatus status =
          table_status == portable::DecodeStatus::ok
              ? decode_stream_with_lanes<kLanes>(job, slot, lane, table, src, scratch)
              : table_status;
      if (lane == 0) portable::zstd_block_detail::slot_statuses(scratch, job)[slot] = status;
    } else if (compressed) {
      if (job.literals_type == portable::ZstdLiteralsType::rle)
        portable::zstd_block_detail::fill_part(threadIdx.x, blockDim.x, scratch + job.literals,
                                               src[job.literals_src], job.literal_size);
      if (lane == 0) portable::zstd_block_detail::slot_statuses(scratch, job)[slot] = portable::DecodeStatus::ok;
    }
    __syncthreads();  // the table is rebuilt for the next block
  }
}

__global__ void __launch_bounds__(kSequenceThreads)
    zstd_sequences_kernel(const portable::ZstdBlockJob* __restrict__ blocks, std::uint32_t block_count,
                          const std::uint8_t* __restrict__ src, std::uint8_t* __restrict__ scratch) {
  __shared__ portable::zstd_detail::SequenceState states[kSequenceThreads];
  const std::uint64_t step = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  for (std::uint64_t b = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; b < block_count; b += step)
    portable::zstd_decode_sequence_slot(blocks[b], src, scratch, states[threadIdx.x]);
}

// A frame's copies split over a team of kLanes lanes that synchronizes after each (the next match
// may read what this copy wrote): a warp (__syncwarp), or a whole block of kFrameBlockThreads
// threads (__syncthreads) for batches of few frames, where a warp each would leave most of the
// GPU idle (8 frames of 4 MiB took 1.57 ms in warps, H100, session 20).
template <unsigned kLanes>
struct Team {
  std::uint32_t lane;
  __device__ void sync() const {
    if constexpr (kLanes == kWarp) {
      __syncwarp();
    } else {
      __syncthreads();
    }
  }
  __device__ void copy(std::uint8_t* to, const std::uint8_t* from, std::uint64_t n) const {
    portable::zstd_block_detail::copy_part(lane, kLanes, to, from, n);
    sync();
  }
  __device__ void match(std::uint8_t* to, std::uint64_t offset, std::uint64_t n) const {
    portable::zstd_block_detail::match_part(lane, kLanes, to, offset, n);
    sync();
  }
  __device__ void fill(std::uint8_t* to, std::uint8_t value, std::uint64_t n) const {
    portable::zstd_block_detail::fill_part(lane, kLanes, to, value, n);
    sync();
  }
};
using WarpTeam = Team<kWarp>;
using BlockTeam = Team<kFrameBlockThreads>;

// Every thread of the block of threads takes the same frames and the same decisions in each (see
// zstd_execute_frame), so every __syncthreads is reached by all.
__global__ void __launch_bounds__(kFrameBlockThreads)
    zstd_execute_block_kernel(const portable::ZstdFrameJob* __restrict__ frames, std::uint32_t frame_count,
                              const portable::ZstdBlockJob* __restrict__ blocks, const std::uint8_t* __restrict__ src,
                              std::uint8_t* scratch, std::uint8_t* dst, portable::DecodeOutcome* __restrict__ outcomes) {
  const BlockTeam team{threadIdx.x};  // launched with kFrameBlockThreads threads
  for (std::uint64_t f = blockIdx.x; f < frame_count; f += gridDim.x) {
    const portable::DecodeOutcome outcome = portable::zstd_execute_frame(frames[f], blocks, src, scratch, dst, team);
    if (threadIdx.x == 0) outcomes[f] = outcome;
  }
}

__global__ void __launch_bounds__(kFrameThreads)
    zstd_execute_kernel(const portable::ZstdFrameJob* __restrict__ frames, std::uint32_t frame_count,
                        const portable::ZstdBlockJob* __restrict__ blocks, const std::uint8_t* __restrict__ src,
                        std::uint8_t* scratch, std::uint8_t* dst, portable::DecodeOutcome* __restrict__ outcomes) {
  const WarpTeam team{threadIdx.x % kWarp};
  const std::uint64_t warps = static_cast<std::uint64_t>(gridDim.x) * (blockDim.x / kWarp);
  for (std::uint64_t f = (static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / kWarp; f < frame_count;
       f += warps) {
    const portable::DecodeOutcome outcome = portable::zstd_execute_frame(frames[f], blocks, src, scratch, dst, team);
    if (team.lane == 0) outcomes[f] = outcome;
  }
}

// A benchmark's fixed choice from the environment, or 0.
std::uint32_t forced_choice(const char* variable, std::initializer_list<std::uint32_t> allowed) {
  const char* text = std::getenv(variable);
  if (text == nullptr) return 0;
  for (const std::uint32_t value : allowed)
    if (std::strtoul(text, nullptr, 10) == value) return value;
  return 0;
}

// The current device's multiprocessors, read once (the processes this serves use one GPU model).
unsigned multiprocessors() {
  int device = 0;
  int count = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device) != cudaSuccess || count <= 0)
    return 132;  // an H100's
  return static_cast<unsigned>(count);
}

}  // namespace

std::uint32_t literal_lanes() {
  static const std::uint32_t forced = forced_choice("ZARRDIRECT_ZSTD_LITERAL_LANES", {1, 8, 32});
  if (forced != 0) return forced;
  // 32 lanes a stream was fastest at every batch size measured (H100, session 20, zstd-1 frames
  // of the sample): 8 frames of 4 MiB 6.24 ms with a thread a stream, 2.07 with 32 lanes; 256
  // frames 12.83 -> 9.08 ms; 8,192 frames of 64 KiB 6.00 -> 4.21 ms; 8 lanes between them.
  return 32;
}

std::uint32_t frame_team_for(std::uint32_t frame_count) {
  static const std::uint32_t forced = forced_choice("ZARRDIRECT_ZSTD_FRAME_TEAM", {kWarp, kFrameBlockThreads});
  if (forced != 0) return forced;
  static const unsigned processors = multiprocessors();
  // A block of threads a frame was faster at every batch size measured (H100, session 20, zstd-1
  // frames of the sample, step two alone): 8 frames of 4 MiB 1.57 -> 0.34 ms, 64 of 512 KiB
  // 0.27 -> 0.07, 256 of 4 MiB 2.12 -> 0.87, and even 8,192 of 64 KiB 0.46 -> 0.40; those frames
  // hold under one sequence a block, and frames of many sequences pay a block-wide barrier per
  // copy, so batches of many frames (past 4 a multiprocessor) keep a warp a frame.
  return frame_count <= processors * 4 ? kFrameBlockThreads : kWarp;
}

cudaError_t launch_zstd_literals(const portable::ZstdBlockJob* blocks, std::uint32_t block_count,
                                 const std::uint8_t* src, std::uint8_t* scratch, cudaStream_t stream,
                                 std::uint32_t lanes) {
  if (block_count == 0) return cudaSuccess;
  if (lanes == 0) lanes = literal_lanes();
  switch (lanes) {
    case 1:
      zstd_literals_kernel<<<blocks_for(std::uint64_t{block_count} * portable::kZstdSequenceSlot, kLiteralThreads),
                             kLiteralThreads, 0, stream>>>(blocks, block_count, src, scratch);
      break;
    case 8:
      zstd_literal_lanes_kernel<8><<<blocks_for(block_count, 1), portable::kZstdSequenceSlot * 8, 0, stream>>>(
          blocks, block_count, src, scratch);
      break;
    case 32:
      zstd_literal_lanes_kernel<32><<<blocks_for(block_count, 1), portable::kZstdSequenceSlot * 32, 0, stream>>>(
          blocks, block_count, src, scratch);
      break;
    default:
      return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

cudaError_t launch_zstd_sequences(const portable::ZstdBlockJob* blocks, std::uint32_t block_count,
                                  const std::uint8_t* src, std::uint8_t* scratch, cudaStream_t stream) {
  if (block_count == 0) return cudaSuccess;
  zstd_sequences_kernel<<<blocks_for(block_count, kSequenceThreads), kSequenceThreads, 0, stream>>>(blocks, block_count,
                                                                                                   src, scratch);
  return cudaGetLastError();
}

cudaError_t launch_zstd_block_slots(const portable::ZstdBlockJob* blocks, std::uint32_t block_count,
                                    const std::uint8_t* src, std::uint8_t* scratch, cudaStream_t stream) {
  if (cudaError_t status = launch_zstd_literals(blocks, block_count, src, scratch, stream, 0); status != cudaSuccess)
    return status;
  return launch_zstd_sequences(blocks, block_count, src, scratch, stream);
}

cudaError_t launch_zstd_execute(const portable::ZstdBlockJob* blocks, const portable::ZstdFrameJob* frames,
                                std::uint32_t frame_count, const std::uint8_t* src, std::uint8_t* dst,
                                std::uint8_t* scratch, portable::DecodeOutcome* outcomes, cudaStream_t stream,
                                std::uint32_t team) {
  if (frame_count == 0) return cudaSuccess;
  if (team == 0) team = frame_team_for(frame_count);
  if (team == kWarp) {
    zstd_execute_kernel<<<blocks_for(std::uint64_t{frame_count} * kWarp, kFrameThreads), kFrameThreads, 0, stream>>>(
        frames, frame_count, blocks, src, scratch, dst, outcomes);
  } else if (team == kFrameBlockThreads) {
    zstd_execute_block_kernel<<<blocks_for(frame_count, 1), kFrameBlockThreads, 0, stream>>>(
        frames, frame_count, blocks, src, scratch, dst, outcomes);
  } else {
    return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

cudaError_t launch_zstd_decode(const portable::ZstdBlockJob* blocks, std::uint32_t block_count,
                               const portable::ZstdFrameJob* frames, std::uint32_t frame_count,
                               const std::uint8_t* src, std::uint8_t* dst, std::uint8_t* scratch,
                               portable::DecodeOutcome* outcomes, cudaStream_t stream) {
  if (frame_count == 0) return cudaSuccess;
  if (cudaError_t status = launch_zstd_block_slots(blocks, block_count, src, scratch, stream); status != cudaSuccess)
    return status;
  return launch_zstd_execute(blocks, frames, frame_count, src, dst, scratch, outcomes, stream, 0);
}

}  // namespace zarrdirect::cuda

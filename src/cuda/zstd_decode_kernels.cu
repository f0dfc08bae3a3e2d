// The two steps of the block-parallel zstd decoder on the device. The decoding rules, bounds
// checks included, are codec/portable's, the same code the CPU tests run against libzstd.
#include "cuda/zstd_decode_kernels.cuh"

#include "codec/portable/zstd_block_decode.hpp"

namespace zarrdirect::cuda {
namespace {

namespace portable = codec::portable;

// Step one, literals: a block of threads takes kBlocksPerCta zstd blocks at a time, four threads
// each (one per Huffman stream), whose table is built once by the first of them into shared
// memory: a table per thread in global memory (4 KiB each, thousands of them) missed every cache,
// so each symbol waited on device memory (measured: 0.7 MB/s a thread, H100, session 13).
constexpr unsigned kBlocksPerCta = 8;
constexpr unsigned kLiteralThreads = kBlocksPerCta * portable::kZstdSequenceSlot;  // 32
// Step one, sequences: a thread per block, each with its block's tables in shared memory (about
// 5.6 KiB a thread: 8 threads keep a block of threads under the 48 KiB of static shared memory).
constexpr unsigned kSequenceThreads = 8;
// Step two: a few warps (frames) a block of threads.
constexpr unsigned kFrameThreads = 128;
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

__global__ void __launch_bounds__(kSequenceThreads)
    zstd_sequences_kernel(const portable::ZstdBlockJob* __restrict__ blocks, std::uint32_t block_count,
                          const std::uint8_t* __restrict__ src, std::uint8_t* __restrict__ scratch) {
  __shared__ portable::zstd_detail::SequenceState states[kSequenceThreads];
  const std::uint64_t step = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  for (std::uint64_t b = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; b < block_count; b += step)
    portable::zstd_decode_sequence_slot(blocks[b], src, scratch, states[threadIdx.x]);
}

// A frame's copies split over the 32 lanes of a warp, which synchronizes after each (the next
// match may read what this copy wrote).
struct WarpTeam {
  std::uint32_t lane;
  __device__ void copy(std::uint8_t* to, const std::uint8_t* from, std::uint64_t n) const {
    portable::zstd_block_detail::copy_part(lane, kWarp, to, from, n);
    __syncwarp();
  }
  __device__ void match(std::uint8_t* to, std::uint64_t offset, std::uint64_t n) const {
    portable::zstd_block_detail::match_part(lane, kWarp, to, offset, n);
    __syncwarp();
  }
  __device__ void fill(std::uint8_t* to, std::uint8_t value, std::uint64_t n) const {
    portable::zstd_block_detail::fill_part(lane, kWarp, to, value, n);
    __syncwarp();
  }
};

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

}  // namespace

cudaError_t launch_zstd_literals(const portable::ZstdBlockJob* blocks, std::uint32_t block_count,
                                 const std::uint8_t* src, std::uint8_t* scratch, cudaStream_t stream) {
  if (block_count == 0) return cudaSuccess;
  zstd_literals_kernel<<<blocks_for(std::uint64_t{block_count} * portable::kZstdSequenceSlot, kLiteralThreads),
                         kLiteralThreads, 0, stream>>>(blocks, block_count, src, scratch);
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
  if (cudaError_t status = launch_zstd_literals(blocks, block_count, src, scratch, stream); status != cudaSuccess)
    return status;
  return launch_zstd_sequences(blocks, block_count, src, scratch, stream);
}

cudaError_t launch_zstd_execute(const portable::ZstdBlockJob* blocks, const portable::ZstdFrameJob* frames,
                                std::uint32_t frame_count, const std::uint8_t* src, std::uint8_t* dst,
                                std::uint8_t* scratch, portable::DecodeOutcome* outcomes, cudaStream_t stream) {
  if (frame_count == 0) return cudaSuccess;
  zstd_execute_kernel<<<blocks_for(std::uint64_t{frame_count} * kWarp, kFrameThreads), kFrameThreads, 0, stream>>>(
      frames, frame_count, blocks, src, scratch, dst, outcomes);
  return cudaGetLastError();
}

cudaError_t launch_zstd_decode(const portable::ZstdBlockJob* blocks, std::uint32_t block_count,
                               const portable::ZstdFrameJob* frames, std::uint32_t frame_count,
                               const std::uint8_t* src, std::uint8_t* dst, std::uint8_t* scratch,
                               portable::DecodeOutcome* outcomes, cudaStream_t stream) {
  if (frame_count == 0) return cudaSuccess;
  if (cudaError_t status = launch_zstd_block_slots(blocks, block_count, src, scratch, stream); status != cudaSuccess)
    return status;
  return launch_zstd_execute(blocks, frames, frame_count, src, dst, scratch, outcomes, stream);
}

}  // namespace zarrdirect::cuda

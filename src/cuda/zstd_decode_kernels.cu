// The two steps of the block-parallel zstd decoder on the device. The decoding rules, bounds
// checks included, are codec/portable's, the same code the CPU tests run against libzstd.
#include "cuda/zstd_decode_kernels.cuh"

#include "codec/portable/zstd_block_decode.hpp"

namespace zarrdirect::cuda {
namespace {

namespace portable = codec::portable;

// Step one's threads are independent and latency-bound: one warp a block of threads, so that a
// batch of a few thousand streams spreads over every multiprocessor.
constexpr unsigned kSlotThreads = 32;
// Step two: a few warps (frames) a block of threads.
constexpr unsigned kFrameThreads = 128;
constexpr unsigned kWarp = 32;
constexpr unsigned kMaxBlocks = 65535;

unsigned blocks_for(std::uint64_t threads, unsigned per_block) {
  const std::uint64_t blocks = (threads + per_block - 1) / per_block;
  return static_cast<unsigned>(blocks > kMaxBlocks ? kMaxBlocks : blocks);
}

// Thread i < 4 * block_count decodes Huffman stream i % 4 of block i / 4; the rest decode the
// sequences of block i - 4 * block_count.
__global__ void __launch_bounds__(kSlotThreads)
    zstd_slots_kernel(const portable::ZstdBlockJob* __restrict__ blocks, std::uint32_t block_count,
                      const std::uint8_t* __restrict__ src, std::uint8_t* __restrict__ scratch) {
  const std::uint64_t streams = std::uint64_t{block_count} * portable::kZstdSequenceSlot;
  const std::uint64_t total = streams + block_count;
  const std::uint64_t step = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  for (std::uint64_t i = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += step) {
    if (i < streams) {
      portable::zstd_decode_block_slot(blocks[i / portable::kZstdSequenceSlot],
                                       static_cast<std::uint32_t>(i % portable::kZstdSequenceSlot), src, scratch);
    } else {
      portable::zstd_decode_block_slot(blocks[i - streams], portable::kZstdSequenceSlot, src, scratch);
    }
  }
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

cudaError_t launch_zstd_block_slots(const portable::ZstdBlockJob* blocks, std::uint32_t block_count,
                                    const std::uint8_t* src, std::uint8_t* scratch, cudaStream_t stream) {
  if (block_count == 0) return cudaSuccess;
  const std::uint64_t threads = std::uint64_t{block_count} * portable::kZstdSlotsPerBlock;
  zstd_slots_kernel<<<blocks_for(threads, kSlotThreads), kSlotThreads, 0, stream>>>(blocks, block_count, src, scratch);
  return cudaGetLastError();
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

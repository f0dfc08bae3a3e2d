// One thread per frame, grid-stride: the portable zstd decoder is sequential, so a frame is one
// thread's work and a batch's parallelism is its number of frames. The decoding rules, bounds
// checks included, are codec/portable's, the same code the CPU tests run against libzstd.
#include "cuda/zstd_decode_kernels.cuh"

namespace zarrdirect::cuda {
namespace {

namespace portable = codec::portable;

// Frames take very different times, and a warp waits for its slowest thread: small blocks.
constexpr unsigned kThreads = 64;
constexpr unsigned kMaxBlocks = 65535;

unsigned blocks_for(std::uint32_t count) {
  const std::uint64_t blocks = (static_cast<std::uint64_t>(count) + kThreads - 1) / kThreads;
  return static_cast<unsigned>(blocks > kMaxBlocks ? kMaxBlocks : blocks);
}

static_assert(kZstdScratchPerJob % alignof(portable::ZstdWorkspace) == 0,
              "each job's workspace must stay aligned in the scratch buffer");

__global__ void __launch_bounds__(kThreads)
    zstd_decode_kernel(const GpuDecodeJob* __restrict__ jobs, std::uint32_t count, const std::uint8_t* __restrict__ src,
                       std::uint8_t* __restrict__ dst, std::uint8_t* __restrict__ scratch,
                       portable::DecodeOutcome* __restrict__ outcomes) {
  const std::uint64_t step = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  for (std::uint64_t i = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += step) {
    const GpuDecodeJob job = jobs[i];
    auto* workspace = reinterpret_cast<portable::ZstdWorkspace*>(scratch + i * kZstdScratchPerJob);
    outcomes[i] = portable::zstd_decode_frame(src + job.src_offset, job.src_size, dst + job.dst_offset,
                                              job.dst_capacity, *workspace);
  }
}

}  // namespace

cudaError_t launch_zstd_decode(const GpuDecodeJob* jobs, std::uint32_t count, const std::uint8_t* src,
                               std::uint8_t* dst, std::uint8_t* scratch, portable::DecodeOutcome* outcomes,
                               cudaStream_t stream) {
  if (count == 0) return cudaSuccess;
  zstd_decode_kernel<<<blocks_for(count), kThreads, 0, stream>>>(jobs, count, src, dst, scratch, outcomes);
  return cudaGetLastError();
}

}  // namespace zarrdirect::cuda

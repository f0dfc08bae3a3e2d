// One thread per job, grid-stride: the portable decoders are sequential, so a job is one thread's
// work and a batch's parallelism is its number of jobs (thousands of blocks keep the device busy).
// The decoding rules, bounds checks included, are codec/portable's, the same code the CPU tests
// run against liblz4 and c-blosc.
#include "cuda/lz4_decode_kernels.cuh"

namespace zarrdirect::cuda {
namespace {

namespace portable = codec::portable;

// Small blocks: jobs take very different times, and a warp waits for its slowest thread.
constexpr unsigned kThreads = 64;
constexpr unsigned kMaxBlocks = 65535;

unsigned blocks_for(std::uint32_t count) {
  const std::uint64_t blocks = (static_cast<std::uint64_t>(count) + kThreads - 1) / kThreads;
  return static_cast<unsigned>(blocks > kMaxBlocks ? kMaxBlocks : blocks);
}

__global__ void __launch_bounds__(kThreads)
    lz4_decode_kernel(const GpuDecodeJob* __restrict__ jobs, std::uint32_t count, const std::uint8_t* __restrict__ src,
                      std::uint8_t* __restrict__ dst, portable::DecodeOutcome* __restrict__ outcomes) {
  const std::uint64_t step = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  for (std::uint64_t i = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += step) {
    const GpuDecodeJob job = jobs[i];
    outcomes[i] = portable::lz4_decode_block(src + job.src_offset, job.src_size, dst + job.dst_offset, job.dst_capacity);
  }
}

__global__ void __launch_bounds__(kThreads)
    blosc_decode_kernel(const GpuBloscBlockJob* __restrict__ jobs, std::uint32_t count,
                        const std::uint8_t* __restrict__ src, std::uint8_t* __restrict__ dst,
                        std::uint8_t* __restrict__ scratch, portable::DecodeStatus* __restrict__ statuses) {
  const std::uint64_t step = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  for (std::uint64_t i = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += step) {
    const GpuBloscBlockJob& job = jobs[i];
    std::uint8_t* job_scratch = scratch == nullptr ? nullptr : scratch + job.scratch_offset;
    statuses[i] = portable::blosc_decode_block(job.frame, src + job.frame_offset, job.block, dst + job.dst_offset,
                                               job_scratch);
  }
}

}  // namespace

cudaError_t launch_lz4_decode(const GpuDecodeJob* jobs, std::uint32_t count, const std::uint8_t* src,
                              std::uint8_t* dst, portable::DecodeOutcome* outcomes, cudaStream_t stream) {
  if (count == 0) return cudaSuccess;
  lz4_decode_kernel<<<blocks_for(count), kThreads, 0, stream>>>(jobs, count, src, dst, outcomes);
  return cudaGetLastError();
}

cudaError_t launch_blosc_decode(const GpuBloscBlockJob* jobs, std::uint32_t count, const std::uint8_t* src,
                                std::uint8_t* dst, std::uint8_t* scratch, portable::DecodeStatus* statuses,
                                cudaStream_t stream) {
  if (count == 0) return cudaSuccess;
  blosc_decode_kernel<<<blocks_for(count), kThreads, 0, stream>>>(jobs, count, src, dst, scratch, statuses);
  return cudaGetLastError();
}

}  // namespace zarrdirect::cuda

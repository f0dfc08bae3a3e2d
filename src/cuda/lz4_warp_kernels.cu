// One warp per job, grid-stride over warps. Blocks of 2 warps: a batch of a few hundred big jobs
// (numcodecs lz4 chunks of megabytes) still spreads over every SM, and thousands of small ones
// (blosc streams) fill each SM with up to 64 warps.
#include "cuda/lz4_warp_kernels.cuh"

#include "cuda/lz4_warp_decode.cuh"

namespace zarrdirect::cuda {
namespace {

namespace portable = codec::portable;

constexpr unsigned kWarpsPerBlock = 2;
constexpr unsigned kThreads = kWarpsPerBlock * warp::kWarpSize;
constexpr unsigned kMaxBlocks = 65535;

unsigned blocks_for(std::uint32_t count) {
  const std::uint64_t blocks = (static_cast<std::uint64_t>(count) + kWarpsPerBlock - 1) / kWarpsPerBlock;
  return static_cast<unsigned>(blocks > kMaxBlocks ? kMaxBlocks : blocks);
}

// The warp's first job and the stride between its jobs: the same in all of its lanes, so the
// whole warp runs each job together and leaves the loop together.
__device__ inline std::uint64_t first_job() {
  return (static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / warp::kWarpSize;
}
__device__ inline std::uint64_t job_stride() {
  return static_cast<std::uint64_t>(gridDim.x) * blockDim.x / warp::kWarpSize;
}

__global__ void __launch_bounds__(kThreads)
    lz4_warp_decode_kernel(const GpuDecodeJob* __restrict__ jobs, std::uint32_t count,
                           const std::uint8_t* __restrict__ src, std::uint8_t* dst,
                           portable::DecodeOutcome* __restrict__ outcomes) {
  const unsigned lane = threadIdx.x % warp::kWarpSize;
  for (std::uint64_t i = first_job(); i < count; i += job_stride()) {
    const GpuDecodeJob job = jobs[i];
    const portable::DecodeOutcome outcome =
        warp::lz4_decode_block(src + job.src_offset, job.src_size, dst + job.dst_offset, job.dst_capacity, lane);
    if (lane == 0) outcomes[i] = outcome;
  }
}

__global__ void __launch_bounds__(kThreads)
    blosc_stream_decode_kernel(const GpuBloscStreamJob* __restrict__ jobs, std::uint32_t count,
                               const std::uint8_t* __restrict__ src, std::uint8_t* dst,
                               std::uint8_t* scratch, portable::DecodeStatus* __restrict__ statuses) {
  const unsigned lane = threadIdx.x % warp::kWarpSize;
  for (std::uint64_t i = first_job(); i < count; i += job_stride()) {
    const GpuBloscStreamJob job = jobs[i];
    std::uint8_t* const out = (job.to_scratch ? scratch : dst) + job.dst_offset;
    portable::DecodeStatus status = portable::DecodeStatus::ok;
    if (job.src_size == job.dst_size) {  // stored raw (blosc's rule)
      warp::copy_input(src + job.src_offset, out, job.dst_size, lane);
    } else {
      const portable::DecodeOutcome outcome =
          warp::lz4_decode_block(src + job.src_offset, job.src_size, out, job.dst_size, lane);
      status = outcome.status;
      if (status == portable::DecodeStatus::ok && outcome.written != job.dst_size)
        status = portable::DecodeStatus::size_mismatch;
    }
    if (lane == 0) statuses[i] = status;
  }
}

}  // namespace

cudaError_t launch_lz4_warp_decode(const GpuDecodeJob* jobs, std::uint32_t count, const std::uint8_t* src,
                                   std::uint8_t* dst, portable::DecodeOutcome* outcomes, cudaStream_t stream) {
  if (count == 0) return cudaSuccess;
  lz4_warp_decode_kernel<<<blocks_for(count), kThreads, 0, stream>>>(jobs, count, src, dst, outcomes);
  return cudaGetLastError();
}

cudaError_t launch_blosc_stream_decode(const GpuBloscStreamJob* jobs, std::uint32_t count, const std::uint8_t* src,
                                       std::uint8_t* dst, std::uint8_t* scratch, portable::DecodeStatus* statuses,
                                       cudaStream_t stream) {
  if (count == 0) return cudaSuccess;
  blosc_stream_decode_kernel<<<blocks_for(count), kThreads, 0, stream>>>(jobs, count, src, dst, scratch, statuses);
  return cudaGetLastError();
}

}  // namespace zarrdirect::cuda

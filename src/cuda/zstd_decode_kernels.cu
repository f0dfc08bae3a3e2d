// One thread per frame, grid-stride: the portable zstd decoder is sequential, so a frame is one
// thread's work and a batch's parallelism is its number of frames, spread over every
// multiprocessor (threads_for). The decoding rules, bounds checks included, are
// codec/portable's, the same code the CPU tests run against libzstd.
#include "cuda/zstd_decode_kernels.cuh"

namespace zarrdirect::cuda {
namespace {

namespace portable = codec::portable;

// At most this many threads (frames) a block.
constexpr unsigned kThreads = 64;
constexpr unsigned kMaxBlocks = 65535;
// Warps per multiprocessor the launch aims for: one per scheduler.
constexpr unsigned kWarpsPerSm = 4;

// Threads per block for `count` frames: a frame's decoding is serial and branchy, so lanes of one
// warp mostly wait for each other, and a batch of a few thousand frames in blocks of 64 would sit
// on a few dozen multiprocessors, two warps each. Fewer lanes per warp spread the frames over every
// multiprocessor, kWarpsPerSm warps each, before lanes are shared (a power of two, 1 to 64).
unsigned threads_for(std::uint32_t count, int multiprocessors) {
  const std::uint64_t warps = static_cast<std::uint64_t>(multiprocessors > 0 ? multiprocessors : 1) * kWarpsPerSm;
  unsigned threads = 1;
  while (threads < kThreads && static_cast<std::uint64_t>(threads) * warps < count) threads *= 2;
  return threads;
}

unsigned blocks_for(std::uint32_t count, unsigned threads) {
  const std::uint64_t blocks = (static_cast<std::uint64_t>(count) + threads - 1) / threads;
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
  int device = 0;
  int multiprocessors = 0;
  if (cudaError_t status = cudaGetDevice(&device); status != cudaSuccess) return status;
  if (cudaError_t status = cudaDeviceGetAttribute(&multiprocessors, cudaDevAttrMultiProcessorCount, device);
      status != cudaSuccess)
    return status;
  const unsigned threads = threads_for(count, multiprocessors);
  zstd_decode_kernel<<<blocks_for(count, threads), threads, 0, stream>>>(jobs, count, src, dst, scratch, outcomes);
  return cudaGetLastError();
}

}  // namespace zarrdirect::cuda

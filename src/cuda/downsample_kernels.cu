// One thread per output element, grid-stride: consecutive threads take consecutive output
// columns, so the two input columns each reads are next to their neighbours' (coalesced pairs).
// The element rules are engine/downsample_ops.hpp's, the same code the CPU runs.
#include "cuda/downsample_kernels.cuh"

namespace zarrdirect::cuda {
namespace {

namespace ops = downsample_ops;

constexpr unsigned kThreads = 256;
constexpr std::uint64_t kMaxBlocks = 16384;

template <typename T, ops::Method M, unsigned FZ>
__global__ void __launch_bounds__(kThreads)
    downsample_kernel(const T* __restrict__ in, T* __restrict__ out, ops::Geometry g, std::uint64_t count) {
  const std::uint64_t step = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  const std::uint64_t width = g.out_x();
  for (std::uint64_t i = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += step) {
    const std::uint64_t row = i / width;
    const std::uint64_t x = i - row * width;
    ops::downsample_elements<T, M, FZ>(in, out, g, row, x, x + 1);
  }
}

}  // namespace

cudaError_t launch_downsample(const void* in, void* out, const ops::Geometry& g, ops::Element element,
                              ops::Method method, cudaStream_t stream) {
  const std::uint64_t count = g.out_rows() * g.out_x();
  if (count == 0) return cudaSuccess;
  std::uint64_t blocks = (count + kThreads - 1) / kThreads;
  if (blocks > kMaxBlocks) blocks = kMaxBlocks;
  auto launch = [&]<typename T, ops::Method M, unsigned FZ>() {
    downsample_kernel<T, M, FZ><<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(
        static_cast<const T*>(in), static_cast<T*>(out), g, count);
  };
  if (!ops::dispatch(element, method, g.fz, launch)) return cudaErrorInvalidValue;
  return cudaGetLastError();
}

}  // namespace zarrdirect::cuda

#include "cuda/selection_kernels.cuh"

namespace zarrdirect::cuda {
namespace {

constexpr unsigned kThreads = 256;

// Source (when WithSource) and destination byte offsets of element `i` of the part.
template <bool WithSource>
__device__ inline void part_offsets(const SelectionPart& part, std::uint64_t i, std::int64_t& src, std::int64_t& dst) {
  std::int64_t s = 0;
  std::int64_t d = 0;
  for (int k = part.rank - 1; k >= 0; --k) {
    const std::uint64_t extent = part.extent[k];
    const std::uint64_t at = part.first[k] + (k == 0 ? i : i % extent);
    if (k > 0) i /= extent;
    d += static_cast<std::int64_t>(part.out[k][at]) * part.dst_stride[k];
    if (WithSource) s += static_cast<std::int64_t>(part.index[k][at] - part.origin[k]) * part.src_stride[k];
  }
  src = s - part.src_shift;
  dst = d;
}

template <typename T>
__device__ inline void move(const std::byte* src, std::byte* dst) {
  *reinterpret_cast<T*>(dst) = *reinterpret_cast<const T*>(src);
}

__device__ inline void move_element(const SelectionPart& part, const std::byte* src, std::byte* dst) {
  if (part.aligned) {
    switch (part.element_size) {
      case 1: move<unsigned char>(src, dst); return;
      case 2: move<unsigned short>(src, dst); return;
      case 4: move<unsigned int>(src, dst); return;
      case 8: move<unsigned long long>(src, dst); return;
      case 16: move<uint4>(src, dst); return;
      default: break;
    }
  }
  for (unsigned b = 0; b < part.element_size; ++b) dst[b] = src[b];
}

__global__ void selection_copy(const SelectionPart part, const std::byte* src, std::byte* dst) {
  const std::uint64_t stride = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  for (std::uint64_t i = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < part.count; i += stride) {
    std::int64_t s = 0;
    std::int64_t d = 0;
    part_offsets<true>(part, i, s, d);
    move_element(part, src + s, dst + d);
  }
}

__global__ void selection_fill(const SelectionPart part, std::byte* dst) {
  const std::uint64_t stride = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
  const auto* fill = reinterpret_cast<const std::byte*>(part.fill);
  for (std::uint64_t i = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < part.count; i += stride) {
    std::int64_t s = 0;
    std::int64_t d = 0;
    part_offsets<false>(part, i, s, d);
    for (unsigned b = 0; b < part.element_size; ++b) dst[d + b] = fill[b];
  }
}

unsigned blocks_for(std::uint64_t count) {
  const std::uint64_t blocks = (count + kThreads - 1) / kThreads;
  return static_cast<unsigned>(blocks < 65535 * 8 ? blocks : 65535 * 8);  // grid-stride past that
}

}  // namespace

cudaError_t launch_selection_copy(const SelectionPart& part, const std::byte* src, std::byte* dst, cudaStream_t stream) {
  if (part.count == 0) return cudaSuccess;
  selection_copy<<<blocks_for(part.count), kThreads, 0, stream>>>(part, src, dst);
  return cudaGetLastError();
}

cudaError_t launch_selection_fill(const SelectionPart& part, std::byte* dst, cudaStream_t stream) {
  if (part.count == 0) return cudaSuccess;
  selection_fill<<<blocks_for(part.count), kThreads, 0, stream>>>(part, dst);
  return cudaGetLastError();
}

}  // namespace zarrdirect::cuda

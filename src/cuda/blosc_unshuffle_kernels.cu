// One thread block per shuffled blosc block (grid-stride over jobs); its threads take consecutive
// elements, so the loads from each shuffled plane are coalesced and so are the stores of whole
// elements. No thread reads what another writes (scratch in, dst out), so no synchronization.
#include "cuda/blosc_unshuffle_kernels.cuh"

namespace zarrdirect::cuda {
namespace {

constexpr unsigned kThreads = 256;
constexpr unsigned kMaxBlocks = 65535;

// Byte shuffle: plane j (n bytes) holds byte j of every element; bytes past n * typesize as they are.
__device__ void byte_unshuffle(const std::uint8_t* __restrict__ in, std::uint8_t* __restrict__ out,
                               std::uint32_t size, std::uint32_t typesize) {
  const std::uint32_t n = size / typesize;
  for (std::uint32_t i = threadIdx.x; i < n; i += blockDim.x)
    for (std::uint32_t j = 0; j < typesize; ++j)
      out[static_cast<std::uint64_t>(i) * typesize + j] = in[static_cast<std::uint64_t>(j) * n + i];
  for (std::uint32_t k = n * typesize + threadIdx.x; k < size; k += blockDim.x) out[k] = in[k];
}

// Bit shuffle (n a multiple of 8): row 8 * j + b, n / 8 bytes, holds bit b of byte j of every
// element, element i at bit i % 8 of byte i / 8. A thread takes byte g of the 8 rows of byte j
// (an 8 x 8 bit matrix) and writes byte j of elements 8g .. 8g + 7 (its transpose).
__device__ void bit_unshuffle(const std::uint8_t* __restrict__ in, std::uint8_t* __restrict__ out,
                              std::uint32_t size, std::uint32_t typesize) {
  const std::uint32_t n = size / typesize;
  if (n % 8 != 0) {  // stored as it is
    for (std::uint32_t k = threadIdx.x; k < size; k += blockDim.x) out[k] = in[k];
    return;
  }
  const std::uint32_t row_bytes = n / 8;
  for (std::uint32_t j = 0; j < typesize; ++j)
    for (std::uint32_t g = threadIdx.x; g < row_bytes; g += blockDim.x) {
      std::uint32_t rows[8];
#pragma unroll
      for (std::uint32_t b = 0; b < 8; ++b) rows[b] = in[static_cast<std::uint64_t>(8 * j + b) * row_bytes + g];
#pragma unroll
      for (std::uint32_t e = 0; e < 8; ++e) {
        std::uint32_t value = 0;
#pragma unroll
        for (std::uint32_t b = 0; b < 8; ++b) value |= ((rows[b] >> e) & 1u) << b;
        out[(static_cast<std::uint64_t>(g) * 8 + e) * typesize + j] = static_cast<std::uint8_t>(value);
      }
    }
  for (std::uint32_t k = n * typesize + threadIdx.x; k < size; k += blockDim.x) out[k] = in[k];
}

__global__ void __launch_bounds__(kThreads)
    blosc_unshuffle_kernel(const GpuUnshuffleJob* __restrict__ jobs, std::uint32_t count,
                           const std::uint8_t* __restrict__ scratch, std::uint8_t* __restrict__ dst) {
  for (std::uint64_t i = blockIdx.x; i < count; i += gridDim.x) {
    const GpuUnshuffleJob job = jobs[i];
    if (job.typesize == 0) continue;  // never listed; a division by zero otherwise
    if (job.bit_shuffle)
      bit_unshuffle(scratch + job.scratch_offset, dst + job.dst_offset, job.size, job.typesize);
    else
      byte_unshuffle(scratch + job.scratch_offset, dst + job.dst_offset, job.size, job.typesize);
  }
}

}  // namespace

cudaError_t launch_blosc_unshuffle(const GpuUnshuffleJob* jobs, std::uint32_t count, const std::uint8_t* scratch,
                                   std::uint8_t* dst, cudaStream_t stream) {
  if (count == 0) return cudaSuccess;
  const unsigned blocks = count > kMaxBlocks ? kMaxBlocks : count;
  blosc_unshuffle_kernel<<<blocks, kThreads, 0, stream>>>(jobs, count, scratch, dst);
  return cudaGetLastError();
}

}  // namespace zarrdirect::cuda

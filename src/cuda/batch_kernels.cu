// The batch kernel: one launch places every box of a batch (batch_table.hpp).
//
// The grid has one row of blocks per entry (blockIdx.y) and as many blocks per row as the
// largest entry needs, capped; the row's blocks stride over the entry's units with consecutive
// threads on consecutive innermost units, as the single-box kernels (kernels.cu) do. The entry
// is read once per block into shared memory, and the rank and unit are uniform across a block,
// so the switch over them costs no divergence.
#include <cstring>

#include "cuda/batch_kernels.cuh"

namespace zarrdirect::cuda {
namespace {

constexpr unsigned kThreads = 256;
// Blocks per entry at most: 16 K units each (256 KiB of 16-byte units) before threads loop.
constexpr std::uint32_t kMaxBlocksPerEntry = 64;

template <typename Unit, int R>
__device__ void place_units(const BatchEntry& entry, const std::byte* __restrict__ staging) {
  Unit* __restrict__ dst = reinterpret_cast<Unit*>(static_cast<std::uintptr_t>(entry.dst));
  const std::byte* origin = entry.src_absolute ? reinterpret_cast<const std::byte*>(static_cast<std::uintptr_t>(entry.src_offset))
                                               : staging + entry.src_offset;
  const Unit* __restrict__ src = reinterpret_cast<const Unit*>(origin);
  const std::uint32_t step = gridDim.x * blockDim.x;
  if (entry.fill) {
    Unit value;
    memcpy(&value, entry.value, sizeof(Unit));
    for (std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < entry.count; i += step) {
      std::int64_t s;
      std::int64_t d;
      batch_unit_offsets<R>(entry, i, s, d);
      dst[d] = value;
    }
    return;
  }
  for (std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < entry.count; i += step) {
    std::int64_t s;
    std::int64_t d;
    batch_unit_offsets<R>(entry, i, s, d);
    dst[d] = src[s];
  }
}

template <typename Unit>
__device__ void place_rank(const BatchEntry& entry, const std::byte* staging) {
  switch (entry.rank) {
    case 1: place_units<Unit, 1>(entry, staging); break;
    case 2: place_units<Unit, 2>(entry, staging); break;
    case 3: place_units<Unit, 3>(entry, staging); break;
    default: place_units<Unit, 4>(entry, staging); break;
  }
}

__global__ void __launch_bounds__(kThreads) place_batch(const BatchEntry* __restrict__ entries,
                                                        const std::byte* __restrict__ staging) {
  // Raw words, not a BatchEntry: a __shared__ variable may not have a constructor.
  constexpr unsigned kWords = sizeof(BatchEntry) / sizeof(std::uint64_t);
  static_assert(sizeof(BatchEntry) % sizeof(std::uint64_t) == 0);
  __shared__ std::uint64_t words[kWords];
  // The first threads of the block copy the entry a word each.
  if (threadIdx.x < kWords) words[threadIdx.x] = reinterpret_cast<const std::uint64_t*>(entries + blockIdx.y)[threadIdx.x];
  __syncthreads();
  const BatchEntry& entry = *reinterpret_cast<const BatchEntry*>(words);
  if (blockIdx.x * blockDim.x >= entry.count) return;
  switch (entry.unit) {
    case 1: place_rank<unsigned char>(entry, staging); break;
    case 2: place_rank<unsigned short>(entry, staging); break;
    case 4: place_rank<unsigned int>(entry, staging); break;
    case 8: place_rank<unsigned long long>(entry, staging); break;
    default: place_rank<uint4>(entry, staging); break;
  }
}

}  // namespace

cudaError_t launch_batch(const BatchEntry* entries, std::size_t count, std::uint32_t max_units,
                         const std::byte* staging, cudaStream_t stream) {
  if (count == 0 || max_units == 0) return cudaSuccess;
  if (count > 65535) return cudaErrorInvalidValue;
  std::uint32_t blocks = (max_units + kThreads - 1) / kThreads;
  if (blocks > kMaxBlocksPerEntry) blocks = kMaxBlocksPerEntry;
  const dim3 grid(blocks, static_cast<unsigned>(count));
  place_batch<<<grid, kThreads, 0, stream>>>(entries, staging);
  return cudaGetLastError();
}

}  // namespace zarrdirect::cuda

// The box kernels: scatter a chunk (or the part of it a box needs) from device scratch into a
// strided destination, and write a fill value over a box.
//
// One thread per unit, grid-stride, consecutive threads on consecutive innermost units so that
// loads and stores coalesce. The planner (copy_plan.cpp) has merged and widened the dims, so the
// common cases run as rank 1-3 loops over 16-byte units; the kernels are instantiated for ranks
// 1-4 with the dims in registers, and once for any rank up to kMaxPlanDims.
#include <cstring>

#include "cuda/kernels.cuh"

namespace zarrdirect::cuda {
namespace {

constexpr unsigned kThreads = 256;
// Enough blocks to fill an H200 several times over; the grid-stride loop covers the rest.
constexpr std::uint64_t kMaxBlocks = 8192;

template <unsigned Bytes>
struct UnitOf;
template <>
struct UnitOf<1> { using type = unsigned char; };
template <>
struct UnitOf<2> { using type = unsigned short; };
template <>
struct UnitOf<4> { using type = unsigned int; };
template <>
struct UnitOf<8> { using type = unsigned long long; };
template <>
struct UnitOf<16> { using type = uint4; };

template <typename Unit, int R, typename Index>
__global__ void __launch_bounds__(kThreads)
    copy_units(const Unit* __restrict__ src, Unit* __restrict__ dst, PlanDims<R> dims, int rank, Index count) {
  const Index step = static_cast<Index>(gridDim.x) * static_cast<Index>(blockDim.x);
  for (Index i = static_cast<Index>(blockIdx.x) * static_cast<Index>(blockDim.x) + threadIdx.x; i < count;
       i += step) {
    std::int64_t s;
    std::int64_t d;
    unit_offsets<R, Index, true>(dims, rank, i, s, d);
    dst[d] = src[s];
  }
}

template <typename Unit, int R, typename Index>
__global__ void __launch_bounds__(kThreads)
    fill_units(Unit value, Unit* __restrict__ dst, PlanDims<R> dims, int rank, Index count) {
  const Index step = static_cast<Index>(gridDim.x) * static_cast<Index>(blockDim.x);
  for (Index i = static_cast<Index>(blockIdx.x) * static_cast<Index>(blockDim.x) + threadIdx.x; i < count;
       i += step) {
    std::int64_t s;
    std::int64_t d;
    unit_offsets<R, Index, false>(dims, rank, i, s, d);
    dst[d] = value;
  }
}

unsigned blocks_for(std::uint64_t count) {
  std::uint64_t blocks = (count + kThreads - 1) / kThreads;
  if (blocks > kMaxBlocks) blocks = kMaxBlocks;
  return static_cast<unsigned>(blocks == 0 ? 1 : blocks);
}

// The first R dims of the plan (all kMaxPlanDims for the any-rank kernel).
template <int R>
PlanDims<R> dims_of(const CopyPlan& plan) {
  PlanDims<R> dims{};
  const int n = R < plan.rank ? R : plan.rank;
  for (int k = 0; k < n; ++k) {
    dims.extent[k] = plan.dims.extent[k];
    dims.src_stride[k] = plan.dims.src_stride[k];
    dims.dst_stride[k] = plan.dims.dst_stride[k];
  }
  return dims;
}

// Launches with 32-bit index arithmetic when i + step cannot overflow it, else 64-bit.
template <typename Unit, int R, bool Fill>
void launch_rank(const CopyPlan& plan, const std::byte* src, const Unit& value, std::byte* dst, cudaStream_t stream) {
  const PlanDims<R> dims = dims_of<R>(plan);
  const unsigned blocks = blocks_for(plan.count);
  Unit* out = reinterpret_cast<Unit*>(dst);
  const Unit* in = reinterpret_cast<const Unit*>(src);
  if (plan.count <= (std::uint64_t{1} << 31)) {
    const auto count = static_cast<unsigned>(plan.count);
    if constexpr (Fill)
      fill_units<Unit, R, unsigned><<<blocks, kThreads, 0, stream>>>(value, out, dims, plan.rank, count);
    else
      copy_units<Unit, R, unsigned><<<blocks, kThreads, 0, stream>>>(in, out, dims, plan.rank, count);
  } else {
    const auto count = static_cast<unsigned long long>(plan.count);
    if constexpr (Fill)
      fill_units<Unit, R, unsigned long long><<<blocks, kThreads, 0, stream>>>(value, out, dims, plan.rank, count);
    else
      copy_units<Unit, R, unsigned long long><<<blocks, kThreads, 0, stream>>>(in, out, dims, plan.rank, count);
  }
}

template <unsigned Bytes, bool Fill>
void launch_unit(const CopyPlan& plan, const std::byte* src, const std::byte* fill_value, std::byte* dst,
                 cudaStream_t stream) {
  using Unit = typename UnitOf<Bytes>::type;
  Unit value{};
  if constexpr (Fill) std::memcpy(&value, fill_value, Bytes);
  switch (plan.rank) {
    case 1: launch_rank<Unit, 1, Fill>(plan, src, value, dst, stream); break;
    case 2: launch_rank<Unit, 2, Fill>(plan, src, value, dst, stream); break;
    case 3: launch_rank<Unit, 3, Fill>(plan, src, value, dst, stream); break;
    case 4: launch_rank<Unit, 4, Fill>(plan, src, value, dst, stream); break;
    default: launch_rank<Unit, kMaxPlanDims, Fill>(plan, src, value, dst, stream); break;
  }
}

template <bool Fill>
cudaError_t launch(const CopyPlan& plan, const std::byte* src, const std::byte* fill_value, std::byte* dst,
                   cudaStream_t stream) {
  if (plan.count == 0) return cudaSuccess;
  if (plan.rank < 1 || plan.rank > kMaxPlanDims) return cudaErrorInvalidValue;
  switch (plan.unit) {
    case 1: launch_unit<1, Fill>(plan, src, fill_value, dst, stream); break;
    case 2: launch_unit<2, Fill>(plan, src, fill_value, dst, stream); break;
    case 4: launch_unit<4, Fill>(plan, src, fill_value, dst, stream); break;
    case 8: launch_unit<8, Fill>(plan, src, fill_value, dst, stream); break;
    case 16: launch_unit<16, Fill>(plan, src, fill_value, dst, stream); break;
    default: return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

}  // namespace

cudaError_t launch_copy(const CopyPlan& plan, const std::byte* src, std::byte* dst, cudaStream_t stream) {
  return launch<false>(plan, src, nullptr, dst, stream);
}

cudaError_t launch_fill(const CopyPlan& plan, const std::byte* value, std::byte* dst, cudaStream_t stream) {
  return launch<true>(plan, nullptr, value, dst, stream);
}

}  // namespace zarrdirect::cuda

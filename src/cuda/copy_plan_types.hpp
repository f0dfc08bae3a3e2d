// The plain description of one box copy or fill, shared by the host planner (copy_plan.cpp,
// C++20) and the kernels (kernels.cu, whatever dialect nvcc uses): no std::span, no engine types.
//
// A plan is an n-d loop over "units" (1, 2, 4, 8 or 16 bytes), dims ordered outer to inner, with
// a stride per dim for the source and the destination, counted in units. The planner has already
// dropped extent-1 dims, merged dims that are contiguous in both source and destination, and
// widened the unit as far as alignment allows, so most plans have rank 1 to 3 and 16-byte units.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define ZARRDIRECT_HOST_DEVICE __host__ __device__
#else
#define ZARRDIRECT_HOST_DEVICE
#endif

namespace zarrdirect::cuda {

// 32 array dims plus the dim of an element's bytes, which the planner adds innermost.
inline constexpr int kMaxPlanDims = 33;

template <int R>
struct PlanDims {
  std::uint64_t extent[R];
  std::int64_t src_stride[R];  // in units; unused by fills
  std::int64_t dst_stride[R];  // in units
};

struct CopyPlan {
  int rank = 0;             // 1..kMaxPlanDims
  unsigned unit = 1;        // bytes per unit: 1, 2, 4, 8 or 16
  std::uint64_t count = 0;  // product of the extents: units to move
  PlanDims<kMaxPlanDims> dims{};
};

// Source and destination offsets (in units) of the unit with C-order linear index `i` of the
// plan's loop. R is the rank when it is known at compile time; R == kMaxPlanDims means "use
// `rank`". Index is 32 bits when the count allows: 64-bit division is several times slower on
// the GPU. Used by the kernels and, on the host, by the tests that check the kernels' arithmetic.
template <int R, typename Index, bool WithSource>
ZARRDIRECT_HOST_DEVICE inline void unit_offsets(const PlanDims<R>& dims, int rank, Index i, std::int64_t& src,
                                                std::int64_t& dst) {
  const int n = (R == kMaxPlanDims) ? rank : R;
  std::int64_t s = 0;
  std::int64_t d = 0;
#if defined(__CUDA_ARCH__)  // device code only: the host compiler does not know the pragma
#pragma unroll
#endif
  for (int k = n - 1; k > 0; --k) {
    const Index extent = static_cast<Index>(dims.extent[k]);
    const Index index = i % extent;
    i /= extent;
    if (WithSource) s += static_cast<std::int64_t>(index) * dims.src_stride[k];
    d += static_cast<std::int64_t>(index) * dims.dst_stride[k];
  }
  if (WithSource) s += static_cast<std::int64_t>(i) * dims.src_stride[0];
  d += static_cast<std::int64_t>(i) * dims.dst_stride[0];
  src = s;
  dst = d;
}

}  // namespace zarrdirect::cuda

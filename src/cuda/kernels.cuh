// Launchers for the box kernels (kernels.cu). Plain host declarations: included by the C++ sink.
//
// Both launch on `stream` and return the launch status (cudaGetLastError after the launch);
// execution errors show up later, at the stream's next synchronization.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

#include "cuda/copy_plan_types.hpp"

namespace zarrdirect::cuda {

// Copies plan.count units: dst[dst offset] = src[src offset] (offsets from unit_offsets()).
// `src` and `dst` are device pointers to the box's first unit, aligned to plan.unit; they must
// not overlap.
cudaError_t launch_copy(const CopyPlan& plan, const std::byte* src, std::byte* dst, cudaStream_t stream);

// Writes `value` (plan.unit bytes) to every unit of the plan in the destination.
cudaError_t launch_fill(const CopyPlan& plan, const std::byte* value, std::byte* dst, cudaStream_t stream);

}  // namespace zarrdirect::cuda

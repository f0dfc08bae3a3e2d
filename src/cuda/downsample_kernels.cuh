// Launcher for the downsample kernel (downsample_kernels.cu). Plain host declarations.
#pragma once

#include <cuda_runtime_api.h>

#include "engine/downsample_ops.hpp"

namespace zarrdirect::cuda {

// Downsamples `in` (device, C-contiguous, geometry g) into `out` on `stream`; returns the launch
// status, or cudaErrorInvalidValue for a method the element type does not have.
cudaError_t launch_downsample(const void* in, void* out, const downsample_ops::Geometry& g,
                              downsample_ops::Element element, downsample_ops::Method method, cudaStream_t stream);

}  // namespace zarrdirect::cuda

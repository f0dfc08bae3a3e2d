// The engine's device downsampling (engine/downsample.hpp) on the CUDA runtime.
#include <cuda_runtime_api.h>

#include "cuda/cuda_check.hpp"
#include "cuda/downsample_kernels.cuh"
#include "engine/downsample.hpp"

namespace zarrdirect {

void downsample_device(const void* in, void* out, const downsample_ops::Geometry& g, const DataType& dtype,
                       DownsampleMethod method, void* cuda_stream) {
  check_downsample_supported(dtype, method);
  auto stream = static_cast<cudaStream_t>(cuda_stream);
  cuda::check_cuda(cuda::launch_downsample(in, out, g, downsample_element(dtype), downsample_method(method), stream),
                   "downsample kernel launch");
  cuda::check_cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize after downsampling");
}

void copy_rows_device(void* dst, std::size_t dst_pitch, const void* src, std::size_t src_pitch, std::size_t width,
                      std::size_t height, void* cuda_stream) {
  if (width == 0 || height == 0) return;
  auto stream = static_cast<cudaStream_t>(cuda_stream);
  cuda::check_cuda(cudaMemcpy2DAsync(dst, dst_pitch, src, src_pitch, width, height, cudaMemcpyDeviceToDevice, stream),
                   "cudaMemcpy2DAsync (pyramid rows)");
  cuda::check_cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize after cudaMemcpy2DAsync");
}

}  // namespace zarrdirect

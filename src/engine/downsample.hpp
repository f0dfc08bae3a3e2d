// Downsampling one level to the next, on the host (threaded) or on the device (src/cuda/).
//
// The element rules are in engine/downsample_ops.hpp, shared by both sides.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "engine/downsample_ops.hpp"
#include "zarrdirect/dtype.hpp"
#include "zarrdirect/multiscale_write.hpp"

namespace zarrdirect {

// The element type of the kernels for `dtype`.
downsample_ops::Element downsample_element(const DataType& dtype);
downsample_ops::Method downsample_method(DownsampleMethod method);

// `shape` viewed as [outer][z][y][x] with the last `halved_dims` (2 or 3) axes halved. Error
// (invalid_argument) when the rank is below halved_dims or halved_dims is not 2 or 3.
downsample_ops::Geometry downsample_geometry(const std::vector<std::uint64_t>& shape, unsigned halved_dims);
// `shape` with the last `halved_dims` axes halved (floor).
std::vector<std::uint64_t> downsampled_shape(std::vector<std::uint64_t> shape, unsigned halved_dims);

// Error(unsupported) naming the dtype when `method` is not defined for it (max of complex).
void check_downsample_supported(const DataType& dtype, DownsampleMethod method);

// Downsamples C-contiguous `in` (geometry g) into C-contiguous `out` on up to `threads` workers
// of the shared pool. Safe from any thread.
void downsample_host(const void* in, void* out, const downsample_ops::Geometry& g, const DataType& dtype,
                     DownsampleMethod method, unsigned threads);

// The same for device pointers, queued on `cuda_stream` (a cudaStream_t; null: the legacy
// default stream) and waited for. Error(unsupported) in a build without CUDA, Error(cuda) when
// the launch fails.
void downsample_device(const void* in, void* out, const downsample_ops::Geometry& g, const DataType& dtype,
                       DownsampleMethod method, void* cuda_stream);

// `height` rows of `width` bytes, rows `src_pitch` and `dst_pitch` bytes apart, device to device
// on `cuda_stream`, waited for. Error(unsupported) without CUDA.
void copy_rows_device(void* dst, std::size_t dst_pitch, const void* src, std::size_t src_pitch, std::size_t width,
                      std::size_t height, void* cuda_stream);

}  // namespace zarrdirect

// CUDA runtime status codes as zarrdirect errors.
//
// Every CUDA call in src/cuda goes through check_cuda() so that a failure surfaces as
// Error(ErrorKind::cuda, "<call>: <what the runtime says>") instead of a bare number, and the
// CLI and Python module can map it like any other error.
#pragma once

#include <cuda_runtime_api.h>

#include <string_view>

#include "zarrdirect/error.hpp"

namespace zarrdirect::cuda {

// The error for a failed call: "<call>: <cudaGetErrorString(status)> (<cudaGetErrorName>)".
Error cuda_error(cudaError_t status, std::string_view call);

// The calling thread's last error in the CUDA runtime this library runs on, without clearing it.
// libzarrdirect links the runtime statically, so a program (or test) that links its own has a
// separate one whose last error the library neither sees nor clears: ask the library's here.
cudaError_t library_peek_last_error();
// cudaSetDevice in the library's runtime (the status, unchecked): lets a test make the library's
// runtime record a failure.
cudaError_t library_set_device(int ordinal);
// cudaGetDevice in the library's runtime: the calling thread's current device as the library sees it.
cudaError_t library_get_device(int* ordinal);

// Throws cuda_error(status, call) unless status is cudaSuccess.
inline void check_cuda(cudaError_t status, std::string_view call) {
  if (status != cudaSuccess) throw cuda_error(status, call);
}

}  // namespace zarrdirect::cuda

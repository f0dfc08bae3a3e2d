#include "cuda/cuda_check.hpp"

#include <string>

namespace zarrdirect::cuda {

Error cuda_error(cudaError_t status, std::string_view call) {
  // A failed call leaves the thread's "last error" set; clear it so that a later
  // cudaGetLastError() after a kernel launch reports that launch, not this call.
  (void)cudaGetLastError();
  std::string message(call);
  message += ": ";
  message += cudaGetErrorString(status);
  message += " (";
  message += cudaGetErrorName(status);
  message += ")";
  return Error(ErrorKind::cuda, message);
}

cudaError_t library_peek_last_error() { return cudaPeekAtLastError(); }

cudaError_t library_set_device(int ordinal) { return cudaSetDevice(ordinal); }

cudaError_t library_get_device(int* ordinal) { return cudaGetDevice(ordinal); }

}  // namespace zarrdirect::cuda

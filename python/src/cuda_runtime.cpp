#include "cuda_runtime.hpp"

#include <fmt/format.h>

#include "zarrdirect/array.hpp"
#include "zarrdirect/error.hpp"

#if defined(ZARRDIRECT_WITH_CUDA)
#include <cuda_runtime_api.h>
#endif

namespace zarrdirect::python {

#if defined(ZARRDIRECT_WITH_CUDA)

namespace {
void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess)
    throw Error(ErrorKind::cuda, fmt::format("{}: {} ({})", what, cudaGetErrorString(status), cudaGetErrorName(status)));
}
}  // namespace

int device_of_pointer(const void* pointer) {
  if (!pointer) return -1;
  cudaPointerAttributes attributes{};
  if (cudaPointerGetAttributes(&attributes, pointer) != cudaSuccess) {
    cudaGetLastError();  // an unknown host pointer is an answer here, not an error to keep
    return -1;
  }
  if (attributes.type == cudaMemoryTypeDevice || attributes.type == cudaMemoryTypeManaged) return attributes.device;
  return -1;
}

int current_device() {
  int device = -1;
  if (cudaGetDevice(&device) != cudaSuccess) {
    cudaGetLastError();
    return -1;
  }
  return device;
}

void set_current_device(int device) {
  if (device >= 0) check(cudaSetDevice(device), "cudaSetDevice");
}

void synchronize_stream(std::uintptr_t stream) {
  check(cudaStreamSynchronize(reinterpret_cast<cudaStream_t>(stream)), "cudaStreamSynchronize");
}

#else

int device_of_pointer(const void*) { return -1; }
int current_device() { return -1; }
void set_current_device(int) {}
void synchronize_stream(std::uintptr_t) {}

#endif

int device_for_out(const void* pointer, int cuda_device) {
  int run_device = device_of_pointer(pointer);
#if defined(ZARRDIRECT_WITH_CUDA)
  if (run_device < 0 && pointer != nullptr && cuda_available())
    throw Error(ErrorKind::invalid_argument, "out= is not CUDA device memory (cudaPointerGetAttributes says so)");
#endif
  if (run_device < 0) run_device = cuda_device >= 0 ? cuda_device : current_device();
  if (cuda_device >= 0 && run_device != cuda_device)
    throw Error(ErrorKind::invalid_argument,
                fmt::format("out= is memory of cuda:{}, but device cuda:{} was asked for", run_device, cuda_device));
  return run_device;
}

}  // namespace zarrdirect::python

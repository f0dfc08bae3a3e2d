#include "cuda/cuda_runtime_state.hpp"

#include <cuda_runtime_api.h>

namespace zarrdirect::cuda {
namespace {

struct Probe {
  int devices = 0;
  std::string reason;
};

const Probe& probe() {
  static const Probe result = [] {
    Probe p;
    int count = 0;
    cudaError_t status = cudaGetDeviceCount(&count);
    if (status != cudaSuccess) {
      (void)cudaGetLastError();  // leave no error behind for later calls to report
      p.reason = std::string("cudaGetDeviceCount: ") + cudaGetErrorString(status);
    } else if (count <= 0) {
      p.reason = "no CUDA device found";
    } else {
      p.devices = count;
    }
    return p;
  }();
  return result;
}

}  // namespace

int cuda_device_count() { return probe().devices; }

const std::string& cuda_unavailable_reason() { return probe().reason; }

}  // namespace zarrdirect::cuda

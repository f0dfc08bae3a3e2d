// Built when CUDA is not (the build leaves out *device_unavailable.cpp with CUDA): device
// downsampling fails with one clear message.
#include "engine/downsample.hpp"
#include "zarrdirect/error.hpp"

namespace zarrdirect {
namespace {
[[noreturn]] void no_cuda() {
  throw Error(ErrorKind::unsupported,
              "GPU downsampling is not available: this build of zarrdirect has no CUDA support");
}
}  // namespace

void downsample_device(const void*, void*, const downsample_ops::Geometry&, const DataType&, DownsampleMethod, void*) {
  no_cuda();
}

void copy_rows_device(void*, std::size_t, const void*, std::size_t, std::size_t, std::size_t, void*) { no_cuda(); }

}  // namespace zarrdirect

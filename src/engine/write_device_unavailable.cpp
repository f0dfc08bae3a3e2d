// Built when CUDA is not (the name ends in device_unavailable.cpp, which the build leaves out
// with CUDA): writes from device memory fail with one clear message.
#include "engine/chunk_source.hpp"
#include "zarrdirect/error.hpp"

namespace zarrdirect {

std::unique_ptr<ChunkSource> make_device_source(const DestinationLayout&, void*, int) {
  throw Error(ErrorKind::unsupported, "GPU writes are not available: this build of zarrdirect has no CUDA support");
}

}  // namespace zarrdirect

// Built when CUDA is not: read_many into device memory fails with one clear message.
#include "engine/device_placer.hpp"
#include "zarrdirect/error.hpp"

namespace zarrdirect {

std::unique_ptr<DevicePlacer> make_device_placer(const std::vector<DestinationLayout>&, std::uint64_t, const Settings&,
                                                 void*) {
  throw Error(ErrorKind::unsupported, "GPU reads are not available: this build of zarrdirect has no CUDA support");
}

}  // namespace zarrdirect

// Built when CUDA is not (the build drops files ending in device_unavailable.cpp otherwise).
#include "engine/selection_read.hpp"

namespace zarrdirect {

ReadStats read_selection_to_device(const Array::Impl&, const SelectionGeometry&, const DestinationLayout&, void*,
                                   const Settings&) {
  throw Error(ErrorKind::unsupported, "GPU reads are not available: this build of zarrdirect has no CUDA support");
}

}  // namespace zarrdirect

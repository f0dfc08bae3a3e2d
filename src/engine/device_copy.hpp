// Copies a read result to host memory (a no-op view for host results).
#pragma once

#include <cstddef>
#include <vector>

#include "zarrdirect/array.hpp"

namespace zarrdirect {

std::vector<std::byte> copy_to_host(const NDArray& array);

}  // namespace zarrdirect

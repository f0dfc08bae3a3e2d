// Opens what a command names: an array folder, or a level of an OME-Zarr multiscale group.
#pragma once

#include <optional>
#include <string>

#include "zarrdirect/array.hpp"

namespace zarrdirect::cli {

Array open_target(const std::string& path, std::optional<std::size_t> level);

}  // namespace zarrdirect::cli

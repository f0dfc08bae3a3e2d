// Opens what a command names: an array folder, or a level of an OME-Zarr multiscale group.
#pragma once

#include <optional>
#include <string>

#include "zarrdirect/array.hpp"

namespace zarrdirect::cli {

// True when `path` holds a group (v2 .zgroup, or a v3 zarr.json whose node_type is "group").
bool is_group_folder(const std::string& path);

Array open_target(const std::string& path, std::optional<std::size_t> level);

}  // namespace zarrdirect::cli

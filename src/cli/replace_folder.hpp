// Making room for a new array without destroying data nobody asked to destroy.
//
// A command that writes an array (sample, demo) may write where nothing is, or into an empty
// folder. Anything else needs the user's explicit --overwrite, and even then only a Zarr
// hierarchy is removed: a folder whose metadata file (zarr.json, .zarray or .zgroup) says it is
// an array or group, holding nothing but metadata, chunk files and folders named as chunk keys,
// and member arrays and groups of the same kind. Removal stays beneath the path: links inside
// are removed, never followed, and a path that is itself a link is refused.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace zarrdirect::cli {

struct Occupant {
  enum class Kind { nothing, empty_folder, zarr_node, other } kind = Kind::nothing;
  // For a message: "a Zarr array or group (zarr.json)", "a file", "a folder holding notes.txt".
  std::string description;
};

// What is at `path` now (nothing is followed or changed).
Occupant inspect_path(const std::filesystem::path& path);

// Readies `path` for a new array. Nothing there or an empty folder: nothing to do. A Zarr
// hierarchy with `overwrite`: removed completely. Otherwise Error(invalid_argument) saying what
// is there and, where it would help, to pass --overwrite.
void prepare_new_array(const std::filesystem::path& path, bool overwrite);

}  // namespace zarrdirect::cli

#include "cli/open_target.hpp"

#include <filesystem>

#include "zarrdirect/group.hpp"

namespace zarrdirect::cli {

Array open_target(const std::string& path, std::optional<std::size_t> level) {
  if (level) return Multiscale::open(path).open_level(*level);
  // A multiscale group read without --level means its full-resolution level, as viewers do.
  bool is_array = std::filesystem::exists(std::filesystem::path(path) / ".zarray");
  if (!is_array && std::filesystem::exists(std::filesystem::path(path) / "zarr.json")) {
    try {
      return Array::open(path);
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::invalid_metadata) throw;
      return Multiscale::open(path).open_level(0);
    }
  }
  if (!is_array && std::filesystem::exists(std::filesystem::path(path) / ".zgroup"))
    return Multiscale::open(path).open_level(0);
  return Array::open(path);
}

}  // namespace zarrdirect::cli

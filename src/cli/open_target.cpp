#include "cli/open_target.hpp"

#include <filesystem>
#include <fstream>

#include "zarrdirect/group.hpp"

namespace zarrdirect::cli {

bool is_group_folder(const std::string& path) {
  std::filesystem::path folder(path);
  if (std::filesystem::exists(folder / ".zgroup") && !std::filesystem::exists(folder / ".zarray")) return true;
  if (!std::filesystem::exists(folder / "zarr.json")) return false;
  std::ifstream in(folder / "zarr.json");
  auto doc = nlohmann::json::parse(in, nullptr, false);
  // Only a well-formed group says so; anything else goes to the array parser, which names the fault.
  return doc.is_object() && doc.contains("node_type") && doc["node_type"] == "group";
}

Array open_target(const std::string& path, std::optional<std::size_t> level) {
  // A multiscale group read without --level means its full-resolution level, as viewers do.
  if (level || is_group_folder(path)) return Multiscale::open(path).open_level(level.value_or(0));
  return Array::open(path);
}

}  // namespace zarrdirect::cli

#include "cli/replace_folder.hpp"

#include <algorithm>
#include <array>

#include <fmt/format.h>

#include "cli/printable.hpp"
#include "zarrdirect/error.hpp"

namespace zarrdirect::cli {
namespace {

namespace fs = std::filesystem;

constexpr std::array<std::string_view, 3> kNodeFiles{"zarr.json", ".zarray", ".zgroup"};
constexpr std::array<std::string_view, 5> kMetadataFiles{"zarr.json", ".zarray", ".zgroup", ".zattrs", ".zmetadata"};

bool is_regular(const fs::path& path) {
  std::error_code ec;
  return fs::symlink_status(path, ec).type() == fs::file_type::regular;
}

bool is_real_folder(const fs::path& path) {  // a folder, not a link to one
  std::error_code ec;
  return fs::symlink_status(path, ec).type() == fs::file_type::directory;
}

// The metadata file that makes `folder` a Zarr node, if any.
std::optional<std::string> node_file(const fs::path& folder) {
  for (auto name : kNodeFiles)
    if (is_regular(folder / name)) return std::string(name);
  return std::nullopt;
}

// Digits and dots, as v2 keys ("0.1.2", or "0" of "0/1/2") and v3 key parts are.
bool is_key_part(std::string_view name) {
  return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) { return (c >= '0' && c <= '9') || c == '.'; }) &&
         name.find_first_of("0123456789") != std::string_view::npos;
}

// The first entry below a chunk folder that is not named as a chunk key part, if any.
std::optional<fs::path> foreign_in_chunks(const fs::path& folder) {
  for (const auto& entry : fs::directory_iterator(folder)) {
    if (!is_key_part(entry.path().filename().string())) return entry.path();
    if (is_real_folder(entry.path()))
      if (auto foreign = foreign_in_chunks(entry.path())) return foreign;
  }
  return std::nullopt;
}

// The first entry of the node folder `folder` that is no part of a Zarr hierarchy, if any.
std::optional<fs::path> foreign_in_node(const fs::path& folder) {
  for (const auto& entry : fs::directory_iterator(folder)) {
    const std::string name = entry.path().filename().string();
    const bool folder_entry = is_real_folder(entry.path());
    if (std::find(kMetadataFiles.begin(), kMetadataFiles.end(), name) != kMetadataFiles.end()) {
      if (folder_entry) return entry.path();
      continue;
    }
    if (folder_entry && node_file(entry.path())) {  // a member array or group
      if (auto foreign = foreign_in_node(entry.path())) return foreign;
      continue;
    }
    const bool chunk_name = name == "c" || is_key_part(name) || (name.starts_with("c.") && is_key_part(name.substr(2)));
    if (!chunk_name) return entry.path();
    if (folder_entry)
      if (auto foreign = foreign_in_chunks(entry.path())) return foreign;
  }
  return std::nullopt;
}

std::string quoted(const fs::path& path) { return fmt::format("\"{}\"", printable_line(path.string(), 300)); }

}  // namespace

Occupant inspect_path(const fs::path& path) {
  std::error_code ec;
  const auto status = fs::symlink_status(path, ec);
  if (status.type() == fs::file_type::not_found) return {Occupant::Kind::nothing, "nothing"};
  if (ec) throw Error(ErrorKind::io, fmt::format("{}: cannot inspect: {}", quoted(path), ec.message()));
  if (status.type() == fs::file_type::symlink) return {Occupant::Kind::other, "a symbolic link"};
  if (status.type() != fs::file_type::directory) return {Occupant::Kind::other, "a file"};
  if (fs::is_empty(path)) return {Occupant::Kind::empty_folder, "an empty folder"};
  if (auto file = node_file(path)) {
    if (auto foreign = foreign_in_node(path))
      return {Occupant::Kind::other,
              fmt::format("a Zarr array or group ({}) that also holds {}, which is not part of one", *file,
                          quoted(fs::relative(*foreign, path)))};
    return {Occupant::Kind::zarr_node, fmt::format("a Zarr array or group ({})", *file)};
  }
  const auto first = fs::directory_iterator(path)->path().filename();
  return {Occupant::Kind::other, fmt::format("a folder that is not a Zarr array or group (it holds {})", quoted(first))};
}

void prepare_new_array(const fs::path& path, bool overwrite) {
  const Occupant occupant = inspect_path(path);
  switch (occupant.kind) {
    case Occupant::Kind::nothing:
    case Occupant::Kind::empty_folder:
      return;
    case Occupant::Kind::zarr_node:
      if (!overwrite)
        throw Error(ErrorKind::invalid_argument,
                    fmt::format("{} already holds {}: pass --overwrite to replace it", quoted(path), occupant.description));
      // Completely: a smaller new array must not inherit chunks of the old one.
      fs::remove_all(path);
      return;
    case Occupant::Kind::other:
      throw Error(ErrorKind::invalid_argument,
                  fmt::format("{} holds {}: refusing to {} it; choose another path", quoted(path), occupant.description,
                              overwrite ? "remove" : "write over"));
  }
}

}  // namespace zarrdirect::cli

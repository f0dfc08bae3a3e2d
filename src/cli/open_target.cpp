#include "cli/open_target.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/commands.hpp"
#include "cli/store_flags.hpp"

namespace zarrdirect::cli {
namespace {

bool says(const Error& error, std::string_view fragment) {
  return std::string_view(error.what()).find(fragment) != std::string_view::npos;
}

// The levels of an image for a message: `0 "0" [512, 512]`, at most the first eight.
std::string describe_levels(const Multiscale& image) {
  std::string text;
  const std::size_t shown = std::min<std::size_t>(image.levels().size(), 8);
  for (std::size_t i = 0; i < shown; ++i) {
    std::string shape = "(shape unreadable)";
    try {
      shape = fmt::format("[{}]", fmt::join(image.level_metadata(i).shape, ", "));
    } catch (const Error&) {
      // A broken level is reported when it is read; here it only must not hide the others.
    }
    text += fmt::format("{}{} \"{}\" {}", i ? "; " : "", i, image.levels()[i].path, shape);
  }
  if (shown < image.levels().size()) text += fmt::format("; and {} more", image.levels().size() - shown);
  return text;
}

}  // namespace

Node open_node(const std::string& path) {
  // Tried as an array first (what most commands are given), then as a group. When both fail,
  // the error that explains is the array's, unless the metadata declared a group (the array
  // parser then only says "not an array", and the group's error is the real fault).
  // TODO(node_kind): once the library's node_kind(path) lands, ask it once instead.
  try {
    return Node{Array::open(path, store_flags()), std::nullopt};
  } catch (const Error& array_error) {
    try {
      return Node{std::nullopt, Group::open(path, store_flags())};
    } catch (const Error& group_error) {
      if (says(array_error, "not an array") && !says(group_error, "not a group")) throw group_error;
      throw array_error;
    }
  }
}

Array open_target(const std::string& path, std::optional<std::size_t> level) {
  Node node = open_node(path);
  if (node.array) {
    if (level) throw UsageError(fmt::format("--level {}: {} is an array, not an OME-Zarr multiscale group", *level, path));
    return *node.array;
  }
  std::optional<Multiscale> image;
  try {
    image = Multiscale::open(path, store_flags());
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::invalid_metadata) throw;
    // An image whose multiscales metadata is broken: its own error names the field ("is a Zarr
    // group, not an array" hid it, even under --level).
    if (!says(e, "no OME-Zarr \"multiscales\" attribute")) throw;
    // A plain group: nothing to read as one array.
    const auto members = node.group->members();
    throw Error(ErrorKind::invalid_argument,
                fmt::format("{} is a Zarr group, not an array: give the path of one of its arrays{}", path,
                            members.empty() ? std::string(" (it has no members)")
                                            : fmt::format(" (members: {})", fmt::join(members, ", "))));
  }
  const std::size_t count = image->levels().size();
  // Reading level 0 silently could mean gigabytes nobody asked for; the Python module asks too.
  if (!level)
    throw UsageError(fmt::format("{} is an OME-Zarr multiscale group with {} levels; choose one with --level: {}", path,
                                 count, describe_levels(*image)));
  if (*level >= count)
    throw UsageError(fmt::format("--level {}: {} has {} levels (0 to {}): {}", *level, path, count, count - 1,
                                 describe_levels(*image)));
  return image->open_level(*level);
}

}  // namespace zarrdirect::cli

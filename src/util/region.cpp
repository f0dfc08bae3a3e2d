#include "zarrdirect/region.hpp"

#include <algorithm>
#include <charconv>

#include <fmt/format.h>

#include "zarrdirect/error.hpp"

namespace zarrdirect {
namespace {

[[noreturn]] void bad_region(const std::string& message) {
  throw Error(ErrorKind::invalid_argument, "region: " + message);
}

std::int64_t parse_integer(std::string_view text, std::size_t dim) {
  std::int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size())
    bad_region(fmt::format("dimension {}: \"{}\" is not an integer", dim, text));
  return value;
}

// |value| of a negative value, in unsigned arithmetic so that INT64_MIN does not overflow.
std::uint64_t magnitude(std::int64_t negative) { return static_cast<std::uint64_t>(-(negative + 1)) + 1; }

// A slice bound as NumPy reads it: negative counts from the end, then clipped to [0, extent].
// Unsigned throughout: extents may exceed INT64_MAX.
std::uint64_t slice_bound(std::string_view text, std::uint64_t extent, std::uint64_t if_empty,
                          std::size_t dim) {
  if (text.empty()) return if_empty;
  std::int64_t value = parse_integer(text, dim);
  if (value < 0) return magnitude(value) >= extent ? 0 : extent - magnitude(value);
  return std::min(static_cast<std::uint64_t>(value), extent);
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

}  // namespace

Region full_region(std::span<const std::uint64_t> shape) {
  Region region;
  for (auto extent : shape) region.push_back({0, extent});
  return region;
}

Region resolve_region(const Region& region, std::span<const std::uint64_t> shape) {
  if (region.empty()) return full_region(shape);
  if (region.size() != shape.size())
    bad_region(fmt::format("has {} dimensions, the array has {}", region.size(), shape.size()));
  for (std::size_t d = 0; d < region.size(); ++d) {
    if (region[d].start > region[d].stop || region[d].stop > shape[d])
      bad_region(fmt::format("dimension {}: [{}, {}) is outside [0, {})", d, region[d].start,
                             region[d].stop, shape[d]));
  }
  return region;
}

namespace {

// The comma-separated items of a region, trimmed, with an Ellipsis ("...") replaced by as many
// ":" as the dimensions the other items leave, as NumPy does; at most one Ellipsis.
std::vector<std::string_view> region_items(std::string_view text, std::size_t rank) {
  std::vector<std::string_view> items;
  while (true) {
    auto comma = text.find(',');
    items.push_back(trim(text.substr(0, comma)));
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  auto ellipsis = std::find(items.begin(), items.end(), "...");
  if (ellipsis == items.end()) return items;
  if (std::find(ellipsis + 1, items.end(), "...") != items.end()) bad_region("only one \"...\" is allowed");
  const std::size_t named = items.size() - 1;
  if (named > rank) bad_region(fmt::format("more dimensions than the array's {}", rank));
  ellipsis = items.erase(ellipsis);
  items.insert(ellipsis, rank - named, ":");
  return items;
}

}  // namespace

Region parse_region(std::string_view text, std::span<const std::uint64_t> shape) {
  Region region;
  text = trim(text);
  if (text.empty()) return full_region(shape);
  std::size_t dim = 0;
  for (std::string_view item : region_items(text, shape.size())) {
    if (dim >= shape.size())
      bad_region(fmt::format("more dimensions than the array's {}", shape.size()));
    std::uint64_t extent = shape[dim];
    auto colon = item.find(':');
    if (colon == std::string_view::npos) {
      if (item.empty()) bad_region(fmt::format("dimension {} is empty", dim));
      // A bare index must name an element: "7" on an extent of 5 is an error, not a clip.
      std::int64_t index = parse_integer(item, dim);
      bool inside = index < 0 ? magnitude(index) <= extent : static_cast<std::uint64_t>(index) < extent;
      if (!inside) bad_region(fmt::format("dimension {}: index {} is outside [0, {})", dim, item, extent));
      std::uint64_t first = index < 0 ? extent - magnitude(index) : static_cast<std::uint64_t>(index);
      region.push_back({first, first + 1});
    } else {
      if (item.find(':', colon + 1) != std::string_view::npos)
        bad_region(fmt::format("dimension {}: steps are not supported here (a box; `read --region` and "
                               "Array::read_selection take them)", dim));
      std::uint64_t start = slice_bound(trim(item.substr(0, colon)), extent, 0, dim);
      std::uint64_t stop = slice_bound(trim(item.substr(colon + 1)), extent, extent, dim);
      region.push_back({start, std::max(start, stop)});
    }
    ++dim;
  }
  // Dimensions not named are taken whole, as NumPy does.
  for (; dim < shape.size(); ++dim) region.push_back({0, shape[dim]});
  return region;
}

std::vector<std::uint64_t> region_shape(const Region& region) {
  std::vector<std::uint64_t> shape;
  for (const auto& range : region) shape.push_back(range.size());
  return shape;
}

std::string to_string(const Region& region) {
  std::string text;
  for (std::size_t d = 0; d < region.size(); ++d)
    text += fmt::format("{}{}:{}", d ? "," : "", region[d].start, region[d].stop);
  return text;
}

}  // namespace zarrdirect

// Regions: the box of an array that a read covers.
//
// A Region holds one half-open [start, stop) range per dimension. An empty Region means the
// whole array. Regions are written on the command line NumPy-style: "0:10,:,5:6" (a box has no
// steps: selection.hpp's parse_selection reads "::2,::-1" into a Selection; a bare index "5"
// keeps the dimension with extent 1; one "..." stands for as many whole dimensions as the
// others leave: "...,0:8" is the last axis' first 8).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace zarrdirect {

struct Range {
  std::uint64_t start = 0;
  std::uint64_t stop = 0;
  std::uint64_t size() const { return stop - start; }
  friend bool operator==(const Range&, const Range&) = default;
};

using Region = std::vector<Range>;

// The whole of an array of this shape.
Region full_region(std::span<const std::uint64_t> shape);

// Checks `region` against `shape` and returns it with an empty region expanded to the whole
// array. Throws Error(invalid_argument) naming the dimension when a range is out of bounds.
Region resolve_region(const Region& region, std::span<const std::uint64_t> shape);

// Parses "0:10,:,5" or "5,...,:2" against `shape`; negative numbers count from the end as in NumPy.
Region parse_region(std::string_view text, std::span<const std::uint64_t> shape);

std::vector<std::uint64_t> region_shape(const Region& region);

std::string to_string(const Region& region);

}  // namespace zarrdirect

// The chunk planning shared by reads and writes: which cells of a chunk grid a region touches,
// and the box where each one meets the region.
//
// A grid has cells of `cell_shape` starting at `origin`: the array's chunk (or shard) grid has
// origin 0; a shard's inner-chunk grid has the shard's first element as origin.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "engine/layout.hpp"
#include "zarrdirect/region.hpp"

namespace zarrdirect {

// The cells of a grid window [first, first + count), enumerated in C order.
struct GridWindow {
  std::size_t rank = 0;
  Extents first{};
  Extents count{};
  std::uint64_t size() const {
    std::uint64_t n = 1;
    for (std::size_t d = 0; d < rank; ++d) n *= count[d];
    return n;
  }
  // Grid coordinates of the cell `linear` cells into the window.
  Extents cell(std::uint64_t linear) const {
    Extents coords{};
    for (std::size_t d = rank; d-- > 0;) {
      coords[d] = first[d] + linear % count[d];
      linear /= count[d];
    }
    return coords;
  }
};

// The cells of a grid of `cell_shape` cells (origin `origin`) that overlap `region`.
inline GridWindow window_over(const Region& region, const Extents& origin, const Extents& cell_shape,
                              std::size_t rank) {
  GridWindow window;
  window.rank = rank;
  for (std::size_t d = 0; d < rank; ++d) {
    if (region[d].size() == 0) {
      window.count[d] = 0;
      continue;
    }
    window.first[d] = (region[d].start - origin[d]) / cell_shape[d];
    std::uint64_t last = (region[d].stop - 1 - origin[d]) / cell_shape[d];
    window.count[d] = last - window.first[d] + 1;
  }
  return window;
}

// The box where the cell at `coords` of a grid of `cell_shape` (origin `origin`) meets `region`
// (clipped to the array shape by the region itself). offset_in_dest is relative to the region.
inline ChunkBox box_of(const Extents& coords, const Extents& origin, const Extents& cell_shape, const Region& region,
                       std::size_t rank) {
  ChunkBox box;
  box.rank = rank;
  for (std::size_t d = 0; d < rank; ++d) {
    std::uint64_t chunk_start = origin[d] + coords[d] * cell_shape[d];
    std::uint64_t start = std::max(chunk_start, region[d].start);
    std::uint64_t stop = std::min(chunk_start + cell_shape[d], region[d].stop);
    box.chunk_shape[d] = cell_shape[d];
    box.offset_in_chunk[d] = start - chunk_start;
    box.extent[d] = stop > start ? stop - start : 0;
    box.offset_in_dest[d] = start - region[d].start;
  }
  return box;
}

inline Extents to_extents(const std::vector<std::uint64_t>& values) {
  Extents e{};
  std::copy(values.begin(), values.end(), e.begin());
  return e;
}

}  // namespace zarrdirect

// The geometry of an orthogonal selection (zarrdirect/selection.hpp) resolved against an
// array's shape: per axis, the selected array indices sorted, each with its output position. The
// reader visits only the cells (chunks, inner chunks) that hold a selected element, and a
// chunk's elements are placed by walking, per axis, the run of sorted entries that falls in it.
//
// Everything is pure and thread-safe once built; placement runs on many workers at once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "util/geometry.hpp"
#include "zarrdirect/selection.hpp"

namespace zarrdirect {

struct SelectionAxis {
  std::vector<std::uint64_t> sorted_index;  // the selected array indices, ascending (repeats kept)
  std::vector<std::uint64_t> sorted_out;    // the output position of each
};

struct SelectionGeometry {
  std::size_t rank = 0;
  Region bounds;          // the smallest box holding every selected element (the read's region)
  Extents out_shape{};    // per array axis: elements selected (1 for an index)
  std::vector<std::uint64_t> result_shape;  // out_shape without the axes an index dropped
  std::vector<std::size_t> result_axes;     // the array axis of each result axis
  std::vector<SelectionAxis> axes;

  // Resolves `selection` (empty: the whole array) against `shape`. Errors: as
  // AxisSelection::resolve(), and a selection of the wrong rank.
  static SelectionGeometry build(const Selection& selection, std::span<const std::uint64_t> shape);

  // True when nothing is selected.
  bool empty() const;
  std::uint64_t num_elements() const;

  // Per axis, the cells of a grid of `cell_shape` holding a selected element.
  CellPicks cells(const Extents& cell_shape) const;

  // The entries [first, last) of axis d whose index lies in [lo, hi).
  std::pair<std::size_t, std::size_t> span(std::size_t d, std::uint64_t lo, std::uint64_t hi) const;
};

// Where the reader's `box` (a cell met with geometry.bounds; offset_in_dest relative to
// bounds' start) meets the selection, per axis: the span of sorted entries and the array index
// of the cell's first element.
struct SelectedPart {
  std::size_t rank = 0;
  std::array<std::size_t, kMaxRank> first{};
  std::array<std::size_t, kMaxRank> count{};
  Extents cell_origin{};  // array index of the cell's element 0, per axis
  bool empty() const;
  std::uint64_t num_elements() const;
};
SelectedPart selected_part(const SelectionGeometry& geometry, const ChunkBox& box);

// Copies the selected elements of a decoded cell (C order, box.chunk_shape) to their output
// positions in `dest` (laid out as the full-rank output: geometry.out_shape).
void place_selected_on_host(const SelectionGeometry& geometry, const std::byte* chunk, const ChunkBox& box,
                            const DestinationLayout& dest);

// Writes `fill` (one element) at the output positions of the selected elements inside `box`.
void fill_selected_on_host(const SelectionGeometry& geometry, const std::byte* fill, const ChunkBox& box,
                           const DestinationLayout& dest);

}  // namespace zarrdirect

// Chunk geometry, the one place for it: fixed-rank extents, C-order strides, linear index <->
// coordinates, windows of a chunk grid and the box where a chunk meets a region.
//
// A leaf of the library (util): codec, store and engine all use it, so no lower layer needs a
// higher one for arithmetic. Fixed-capacity arrays (kMaxRank) keep per-chunk work free of
// allocation. Every function here is pure and thread-safe.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "zarrdirect/region.hpp"

namespace zarrdirect {

inline constexpr std::size_t kMaxRank = 32;

using Extents = std::array<std::uint64_t, kMaxRank>;

// The first `values.size()` (at most kMaxRank) entries set, the rest zero.
Extents to_extents(std::span<const std::uint64_t> values);

// Element strides of a C-order array of `shape` (the last dimension has stride 1).
Extents c_order_strides(const Extents& shape, std::size_t rank);

// The C-order coordinates of element `linear` of a grid of `grid` cells (rank dims), and back.
Extents linear_to_coords(std::uint64_t linear, const Extents& grid, std::size_t rank);
std::uint64_t coords_to_linear(const Extents& coords, const Extents& grid, std::size_t rank);

// The part of one chunk that a read (or write) needs, and where it sits in the other array.
struct ChunkBox {
  std::size_t rank = 0;
  Extents chunk_shape{};     // the whole (stored) chunk, as decoded
  Extents offset_in_chunk{};
  Extents extent{};          // size of the overlap in each dimension
  Extents offset_in_dest{};  // position of the overlap in the destination

  std::uint64_t num_elements() const;
  // True when the overlap is the whole chunk.
  bool covers_chunk() const;
};

// Cells picked per axis, for reads of selections (zarrdirect/selection.hpp): axes[d] lists,
// ascending and unique, the cells of dimension d that hold a selected element, counted in a grid
// that starts at element 0.
struct CellPicks {
  std::vector<std::vector<std::uint64_t>> axes;
};

// The cells [first, first + count) of a grid, enumerated in C order. With picks, dimension d's
// cells are picks->axes[d][first[d] .. first[d] + count[d]) less base[d] instead.
struct GridWindow {
  std::size_t rank = 0;
  Extents first{};
  Extents count{};
  const CellPicks* picks = nullptr;
  Extents base{};
  std::uint64_t size() const;
  // Grid coordinates of the window's cell number `linear` (C order within the window).
  Extents cell(std::uint64_t linear) const;
};

// The cells of a grid of `cell_shape` cells starting at `origin` that overlap `region` (which
// lies at or after `origin`). A region empty in some dimension gives an empty window.
GridWindow window_over(const Region& region, const Extents& origin, const Extents& cell_shape, std::size_t rank);
// The same, keeping only the picked cells (null `picks`: all of them). `origin` must lie on a
// cell boundary of the picks' grid, as a shard's origin does on its inner chunks'.
GridWindow window_over(const Region& region, const Extents& origin, const Extents& cell_shape, std::size_t rank,
                       const CellPicks* picks);

// How many cells of a grid of `cell_shape` cells from the origin `region` touches (a cell it cuts
// counts whole), saturating at UINT64_MAX; 0 for a region empty in some dimension. Dimensions
// past cell_shape's count as one cell.
std::uint64_t cells_touched(const Region& region, std::span<const std::uint64_t> cell_shape);

// The box where the cell at `coords` of a grid of `cell_shape` (origin `origin`) meets `region`;
// offset_in_dest is relative to the region's start.
ChunkBox box_of(const Extents& coords, const Extents& origin, const Extents& cell_shape, const Region& region,
                std::size_t rank);

// A strided n-d array in memory (the region read, or a source), strides in bytes.
struct DestinationLayout {
  std::byte* data = nullptr;
  std::size_t rank = 0;
  Extents shape{};
  std::array<std::int64_t, kMaxRank> byte_strides{};
  std::size_t element_size = 1;

  // C-contiguous strides for `shape`.
  static DestinationLayout contiguous(std::byte* data, std::span<const std::uint64_t> shape, std::size_t element_size);
  // Address of the element at `offset`.
  std::byte* address_of(const Extents& offset) const;
  // True when the box lands as one contiguous run of bytes in the destination.
  bool box_is_contiguous(const ChunkBox& box) const;
};

}  // namespace zarrdirect

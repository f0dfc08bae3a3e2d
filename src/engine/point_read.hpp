// Point (coordinate) reads: Array::read_points_into, behind Python's arr.vindex.
//
// The points are grouped by the chunk (the inner chunk, for a sharded array) that holds them.
// Each group's bounding box lies inside its chunk, so it is one region of the batch reader
// (read_many.cpp): every chunk that holds a point is fetched and decoded once, and no other chunk
// is touched. The boxes are read in batches of bounded host memory; each point is then copied
// from its box to its place in the result, in the caller's order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "engine/array_state.hpp"

namespace zarrdirect {

// Per axis, one coordinate per point: points[axis][i] is point i's index on `axis`.
using PointCoordinates = std::vector<std::vector<std::uint64_t>>;

// `coordinates` (per axis, negative counting from the end) checked against `shape` and wrapped.
// Error(invalid_argument) for a count of axes other than the rank, axes listing different numbers
// of points, or an index out of bounds (naming the point, the axis and its size).
PointCoordinates resolve_points(const std::vector<std::vector<std::int64_t>>& coordinates,
                                std::span<const std::uint64_t> shape);

// The points of one cell (chunk): their bounding box and their positions in the caller's list.
struct PointGroup {
  Region box;
  std::vector<std::size_t> points;
};

// Groups resolved points by the cells of `cell_shape` that hold them, cells in C order, points
// of a cell in the caller's order.
std::vector<PointGroup> group_points(const PointCoordinates& points, std::span<const std::uint64_t> cell_shape);

// Reads the resolved `points` of `array` into `out` (host memory, point after point, one element
// each). Boxes are read `batch_bytes` of host memory at a time (a box larger than that alone).
ReadStats read_points_to_host(const Array::Impl& array, const PointCoordinates& points, std::byte* out,
                              const Settings& settings, std::size_t batch_bytes = std::size_t{64} << 20);

}  // namespace zarrdirect

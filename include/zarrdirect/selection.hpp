// Selections beyond boxes: slice steps (negative too), integer index lists and boolean masks per
// axis (NumPy's "orthogonal" indexing, zarr-python's get_orthogonal_selection), and point lists
// (zarr-python's get_coordinate_selection).
//
//   using zarrdirect::AxisSelection;
//   zarrdirect::Selection every_other{AxisSelection::slice(0, 100, 2), AxisSelection::index(5),
//                                     AxisSelection::list({7, 3, 3, 90})};
//   auto block = array.read(every_other);   // shape [50, 4]: the index drops its axis
//
// The reader reads only the chunks (inner chunks of shards) that hold a selected element; a
// step larger than the chunk skips chunks. A plain box (every axis a step-1 slice) is read
// through the Region path (array.hpp), unchanged.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "zarrdirect/region.hpp"

namespace zarrdirect {

// What one axis of an orthogonal selection picks.
class AxisSelection {
 public:
  enum class Kind { slice, list, index };

  // The whole axis.
  static AxisSelection all();
  // The elements start, start + step, ... before stop, as NumPy's start:stop:step (step != 0,
  // negative walks backwards). Bounds are NumPy's: negative counts from the end, then clipped
  // (resolved when the selection is checked against the array's shape).
  static AxisSelection slice(std::int64_t start, std::int64_t stop, std::int64_t step = 1);
  // As slice(), with a bound left out (NumPy's "::-1" is slice_open(false, 0, false, 0, -1)).
  static AxisSelection slice_open(bool has_start, std::int64_t start, bool has_stop, std::int64_t stop,
                                  std::int64_t step);
  // One element; the axis is dropped from the result's shape (negative counts from the end).
  static AxisSelection index(std::int64_t index);
  // Elements in any order, repeats allowed, negative counting from the end.
  static AxisSelection list(std::vector<std::int64_t> indices);
  // The elements where `mask` is true; its length must equal the axis' extent.
  static AxisSelection mask(const std::vector<bool>& mask);

  Kind kind() const { return kind_; }
  const std::vector<std::int64_t>& indices() const { return indices_; }
  bool is_mask() const { return mask_extent_ >= 0; }

  // The array indices picked, in output order, checked against `extent` (axis `axis`, for the
  // message). Errors: Error(invalid_argument) for an index out of bounds, a zero step or a mask
  // of the wrong length.
  std::vector<std::uint64_t> resolve(std::uint64_t extent, std::size_t axis) const;
  // As resolve(), for slices only, without listing them: first element, step and count.
  struct Strided {
    std::uint64_t first = 0;
    std::int64_t step = 1;
    std::uint64_t count = 0;
  };
  Strided resolve_slice(std::uint64_t extent) const;

 private:
  Kind kind_ = Kind::slice;
  bool has_start_ = false;
  bool has_stop_ = false;
  std::int64_t start_ = 0;
  std::int64_t stop_ = 0;
  std::int64_t step_ = 1;
  std::vector<std::int64_t> indices_;  // list: the indices; index: one
  std::int64_t mask_extent_ = -1;      // a list made from a mask: the mask's length
};

// One AxisSelection per dimension of the array (an empty Selection: the whole array).
using Selection = std::vector<AxisSelection>;

// The result's shape: one extent per axis that is not an index.
std::vector<std::uint64_t> selection_shape(const Selection& selection, std::span<const std::uint64_t> shape);

// True when every axis is a step-1 slice: the selection is the box `region`.
bool selection_is_box(const Selection& selection, std::span<const std::uint64_t> shape, Region& region);

// Parses the CLI's (and Python's) text form against `shape`: "0:10:2,::-1,5,...". A bare
// integer is an index (it drops its axis), "..." stands for as many whole axes as the others
// leave. Errors: Error(invalid_argument) naming the item.
Selection parse_selection(std::string_view text, std::span<const std::uint64_t> shape);

std::string to_string(const Selection& selection);

}  // namespace zarrdirect

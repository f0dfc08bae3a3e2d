// Planning box copies and fills for the kernels: from a ChunkBox and
// DestinationLayout to a CopyPlan (copy_plan_types.hpp).
//
// Kept apart from the sink so that the planning, the part with the arithmetic, is tested on
// machines without a GPU (copy_plan_test.cpp runs plans on the host against util/box_copy.cpp).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

#include "cuda/copy_plan_types.hpp"
#include "util/geometry.hpp"

namespace zarrdirect::cuda {

// The bytes of a C-order chunk (box.chunk_shape) from the first element the box needs to the
// last: the part of the chunk worth uploading.
struct ChunkRange {
  std::size_t first_byte = 0;
  std::size_t nbytes = 0;
};
ChunkRange chunk_range(const ChunkBox& box, std::size_t element_size);

struct BoxPlan {
  CopyPlan plan;
  // One run of bytes in source and destination: a plain memcpy of plan.count * plan.unit bytes.
  bool contiguous = false;
};

// Copying `box` from a C-order chunk to `dest`. The source origin is the chunk element at
// box.offset_in_chunk; `src_origin` and `dst_origin` are the addresses of the box's first element
// in source and destination, used only to choose the widest aligned unit.
BoxPlan plan_box_copy(const ChunkBox& box, const DestinationLayout& dest, std::uintptr_t src_origin,
                      std::uintptr_t dst_origin);

// One dim of a plan being built: its extent and its byte strides in source and destination.
struct PlanDim {
  std::uint64_t extent = 0;
  std::int64_t src = 0;
  std::int64_t dst = 0;
};

// What a plan copies from, for plan_dims: an element's bytes as dims, innermost first (one dim
// {size, 1, 1}, or a byte swap's backward walk), and the source's per-axis strides in elements
// (a C-order chunk's, or a transposed layout's). No source at all: a fill.
struct PlanSource {
  std::span<const PlanDim> element_dims;
  Extents strides{};
  std::uintptr_t origin = 0;  // the box's first source byte, for alignment
  bool widen = true;          // false: one-byte units (a swapped element's bytes go backwards)
};

// The planner behind plan_box_copy, plan_box_fill and plan_stored_box_copy. Works in bytes: the
// element's dims come first, then each box axis as (extent, source bytes, destination bytes);
// extent-1 axes go, axes that continue their inner neighbour in both source and destination merge
// into it, and the unit grows to the widest of 16/8/4/2 bytes that divides the innermost run,
// every other stride, both origins and `period` (a fill pattern's). `source` null: a fill, whose
// element is dest.element_size bytes and whose source strides are 0.
BoxPlan plan_dims(const ChunkBox& box, const DestinationLayout& dest, const PlanSource* source,
                  std::uintptr_t dst_origin, std::size_t period);

// Writing the element `fill` (dest.element_size bytes) over `box` in `dest`. `unit_value`
// receives the plan.unit bytes to write per unit.
BoxPlan plan_box_fill(const ChunkBox& box, const DestinationLayout& dest, std::span<const std::byte> fill,
                      std::uintptr_t dst_origin, std::array<std::byte, 16>& unit_value);

}  // namespace zarrdirect::cuda

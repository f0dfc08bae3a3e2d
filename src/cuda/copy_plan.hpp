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

// Writing the element `fill` (dest.element_size bytes) over `box` in `dest`. `unit_value`
// receives the plan.unit bytes to write per unit.
BoxPlan plan_box_fill(const ChunkBox& box, const DestinationLayout& dest, std::span<const std::byte> fill,
                      std::uintptr_t dst_origin, std::array<std::byte, 16>& unit_value);

}  // namespace zarrdirect::cuda

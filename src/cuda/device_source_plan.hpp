// Planning the gather a device write source runs: a box of a strided device array packed into a
// C-order buffer of the box's extent (device_source.cpp). Kept apart so that the arithmetic is
// checked on machines without a GPU (device_source_plan_test.cpp).
#pragma once

#include <cstdint>
#include <utility>

#include "cuda/copy_plan.hpp"

namespace zarrdirect::cuda {

// The plan copying `box` (box.extent elements at box.offset_in_dest) out of `source` into a packed
// C-order buffer of box.extent: the reader's plan for the opposite copy (packed chunk into a
// strided destination) with source and destination swapped. `source_origin` and `packed_origin`
// are the addresses of the box's first element on each side (the unit is chosen to suit both).
inline BoxPlan plan_box_gather(const ChunkBox& box, const DestinationLayout& source, std::uintptr_t source_origin,
                               std::uintptr_t packed_origin) {
  ChunkBox packed = box;
  packed.chunk_shape = box.extent;
  packed.offset_in_chunk = Extents{};
  BoxPlan plan = plan_box_copy(packed, source, packed_origin, source_origin);
  for (int k = 0; k < plan.plan.rank; ++k) std::swap(plan.plan.dims.src_stride[k], plan.plan.dims.dst_stride[k]);
  return plan;
}

}  // namespace zarrdirect::cuda

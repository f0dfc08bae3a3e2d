#include "cuda/stored_box_plan.hpp"

#include <cstring>
#include <vector>

#include "zarrdirect/error.hpp"

namespace zarrdirect::cuda {

StoredBoxPlan plan_stored_box_copy(const ChunkBox& box, const DestinationLayout& dest, const StoredLayout& stored,
                                   std::uintptr_t chunk_base, std::uintptr_t dst_origin) {
  if (box.rank > kMaxRank || box.rank != stored.rank || stored.element_size != dest.element_size ||
      stored.element_size == 0 || (stored.swap_unit != 0 && stored.element_size % stored.swap_unit != 0) ||
      box.rank + 2 > static_cast<std::size_t>(kMaxPlanDims))
    throw Error(ErrorKind::invalid_argument, "stored box copy: rank or element layout out of range");
  StoredBoxPlan result;
  std::uint64_t origin = 0;  // elements
  for (std::size_t d = 0; d < box.rank; ++d) origin += box.offset_in_chunk[d] * stored.strides[d];
  result.src_offset = origin * stored.element_size;

  std::vector<PlanDim> element_dims;  // innermost first
  const bool swap = stored.swap_unit > 1;
  if (swap) {
    // Byte j of a destination unit is byte (swap_unit - 1 - j) of the stored one.
    const auto unit = static_cast<std::int64_t>(stored.swap_unit);
    element_dims.push_back({stored.swap_unit, -1, 1});
    if (stored.element_size > stored.swap_unit)
      element_dims.push_back({stored.element_size / stored.swap_unit, unit, unit});
    result.src_offset += stored.swap_unit - 1;
  } else {
    element_dims.push_back({stored.element_size, 1, 1});
  }
  // Wider units only without a swap (a swapped unit's bytes go backwards).
  const PlanSource source{element_dims, stored.strides, chunk_base + result.src_offset, !swap};
  result.plan = plan_dims(box, dest, &source, dst_origin, 1).plan;
  return result;
}

void apply_plan_on_host(const CopyPlan& plan, const std::byte* src, std::byte* dst) {
  for (std::uint64_t i = 0; i < plan.count; ++i) {
    std::int64_t s = 0;
    std::int64_t d = 0;
    unit_offsets<kMaxPlanDims, std::uint64_t, true>(plan.dims, plan.rank, i, s, d);
    std::memcpy(dst + d * static_cast<std::int64_t>(plan.unit), src + s * static_cast<std::int64_t>(plan.unit), plan.unit);
  }
}

}  // namespace zarrdirect::cuda

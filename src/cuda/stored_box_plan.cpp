#include "cuda/stored_box_plan.hpp"

#include <cstring>
#include <vector>

#include "zarrdirect/error.hpp"

namespace zarrdirect::cuda {
namespace {

struct Dim {
  std::uint64_t extent;
  std::int64_t src;  // bytes
  std::int64_t dst;  // bytes
};

}  // namespace

StoredBoxPlan plan_stored_box_copy(const ChunkBox& box, const DestinationLayout& dest, const StoredLayout& stored,
                                   std::uintptr_t chunk_base, std::uintptr_t dst_origin) {
  if (box.rank > kMaxRank || box.rank != stored.rank || stored.element_size != dest.element_size ||
      stored.element_size == 0 || (stored.swap_unit != 0 && stored.element_size % stored.swap_unit != 0) ||
      box.rank + 2 > static_cast<std::size_t>(kMaxPlanDims))
    throw Error(ErrorKind::invalid_argument, "stored box copy: rank or element layout out of range");
  const auto element = static_cast<std::int64_t>(stored.element_size);
  StoredBoxPlan result;
  std::uint64_t origin = 0;  // elements
  for (std::size_t d = 0; d < box.rank; ++d) origin += box.offset_in_chunk[d] * stored.strides[d];
  result.src_offset = origin * stored.element_size;

  std::vector<Dim> dims;  // innermost first
  dims.reserve(box.rank + 2);
  const bool swap = stored.swap_unit > 1;
  if (swap) {
    // Byte j of a destination unit is byte (swap_unit - 1 - j) of the stored one.
    const auto unit = static_cast<std::int64_t>(stored.swap_unit);
    dims.push_back({stored.swap_unit, -1, 1});
    if (stored.element_size > stored.swap_unit) dims.push_back({stored.element_size / stored.swap_unit, unit, unit});
    result.src_offset += stored.swap_unit - 1;
  } else {
    dims.push_back({stored.element_size, 1, 1});
  }
  for (std::size_t d = box.rank; d-- > 0;) {
    if (box.extent[d] == 1) continue;
    Dim outer{box.extent[d], static_cast<std::int64_t>(stored.strides[d]) * element, dest.byte_strides[d]};
    Dim& inner = dims.back();
    const auto inner_extent = static_cast<std::int64_t>(inner.extent);
    if (outer.src == inner_extent * inner.src && outer.dst == inner_extent * inner.dst) {
      inner.extent *= outer.extent;
    } else {
      dims.push_back(outer);
    }
  }

  // Wider units only without a swap (a swapped unit's bytes go backwards).
  unsigned unit = 1;
  const std::uintptr_t src_origin = chunk_base + result.src_offset;
  if (!swap) {
    for (unsigned w : {16u, 8u, 4u, 2u}) {
      const auto wide = static_cast<std::int64_t>(w);
      bool fits = dims.front().extent % w == 0 && dst_origin % w == 0 && src_origin % w == 0;
      for (std::size_t k = 1; k < dims.size() && fits; ++k) fits = dims[k].dst % wide == 0 && dims[k].src % wide == 0;
      if (fits) {
        unit = w;
        break;
      }
    }
  }
  const auto wide = static_cast<std::int64_t>(unit);
  dims.front().extent /= unit;
  for (std::size_t k = 1; k < dims.size(); ++k) {
    dims[k].src /= wide;
    dims[k].dst /= wide;
  }
  if (dims.size() > 1 && dims.front().extent == 1) dims.erase(dims.begin());

  CopyPlan& out = result.plan;
  out.rank = static_cast<int>(dims.size());
  out.unit = unit;
  out.count = 1;
  for (std::size_t k = 0; k < dims.size(); ++k) {
    const Dim& dim = dims[dims.size() - 1 - k];
    out.dims.extent[k] = dim.extent;
    out.dims.src_stride[k] = dim.src;
    out.dims.dst_stride[k] = dim.dst;
    out.count *= dim.extent;
  }
  if (box.num_elements() == 0) out.count = 0;
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

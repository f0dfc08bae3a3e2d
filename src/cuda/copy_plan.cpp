#include "cuda/copy_plan.hpp"

#include <algorithm>
#include <vector>

#include "zarrdirect/error.hpp"

namespace zarrdirect::cuda {
namespace {

// Element strides of a C-order chunk.
Extents chunk_strides(const ChunkBox& box) { return c_order_strides(box.chunk_shape, box.rank); }

// The smallest g dividing the element size with fill[j] == fill[j % g] for every j.
std::size_t pattern_period(std::span<const std::byte> fill) {
  for (std::size_t g = 1; g < fill.size(); ++g) {
    if (fill.size() % g != 0) continue;
    bool periodic = true;
    for (std::size_t j = g; j < fill.size() && periodic; ++j) periodic = fill[j] == fill[j % g];
    if (periodic) return g;
  }
  return std::max<std::size_t>(fill.size(), 1);
}

}  // namespace

BoxPlan plan_dims(const ChunkBox& box, const DestinationLayout& dest, const PlanSource* source,
                  std::uintptr_t dst_origin, std::size_t period) {
  if (box.rank > kMaxRank || dest.element_size == 0)
    throw Error(ErrorKind::invalid_argument, "box copy: rank or element size out of range");
  const bool with_source = source != nullptr;
  const auto element = static_cast<std::int64_t>(dest.element_size);
  std::vector<PlanDim> dims;  // innermost first
  dims.reserve(box.rank + 2);
  if (with_source)
    dims.assign(source->element_dims.begin(), source->element_dims.end());
  else
    dims.push_back({dest.element_size, 0, 1});
  for (std::size_t d = box.rank; d-- > 0;) {
    if (box.extent[d] == 1) continue;
    const PlanDim outer{box.extent[d], with_source ? static_cast<std::int64_t>(source->strides[d]) * element : 0,
                        dest.byte_strides[d]};
    PlanDim& inner = dims.back();
    const auto inner_extent = static_cast<std::int64_t>(inner.extent);
    const bool source_continues = !with_source || outer.src == inner_extent * inner.src;
    if (source_continues && outer.dst == inner_extent * inner.dst) {
      inner.extent *= outer.extent;
    } else {
      dims.push_back(outer);
    }
  }

  BoxPlan result;
  result.contiguous = dims.size() == 1;
  unsigned unit = 1;
  for (unsigned w : {16u, 8u, 4u, 2u}) {
    if (with_source && !source->widen) break;
    const auto wide = static_cast<std::int64_t>(w);
    bool fits = dims.front().extent % w == 0 && w % period == 0 && dst_origin % w == 0 &&
                (!with_source || source->origin % w == 0);
    for (std::size_t k = 1; k < dims.size() && fits; ++k)
      fits = dims[k].dst % wide == 0 && dims[k].src % wide == 0;
    if (fits) {
      unit = w;
      break;
    }
  }
  const auto wide = static_cast<std::int64_t>(unit);
  dims.front().extent /= unit;
  for (std::size_t k = 1; k < dims.size(); ++k) {
    dims[k].src /= wide;
    dims[k].dst /= wide;
  }
  // The innermost dim may now be a single unit (an element of a padded destination): drop it.
  if (dims.size() > 1 && dims.front().extent == 1) dims.erase(dims.begin());

  CopyPlan& out = result.plan;
  out.rank = static_cast<int>(dims.size());
  out.unit = unit;
  out.count = 1;
  for (std::size_t k = 0; k < dims.size(); ++k) {
    const PlanDim& dim = dims[dims.size() - 1 - k];
    out.dims.extent[k] = dim.extent;
    out.dims.src_stride[k] = dim.src;
    out.dims.dst_stride[k] = dim.dst;
    out.count *= dim.extent;
  }
  if (box.num_elements() == 0) out.count = 0;
  return result;
}


ChunkRange chunk_range(const ChunkBox& box, std::size_t element_size) {
  if (box.num_elements() == 0) return {};
  const Extents strides = chunk_strides(box);
  std::uint64_t first = 0;
  std::uint64_t last = 0;
  for (std::size_t d = 0; d < box.rank; ++d) {
    first += box.offset_in_chunk[d] * strides[d];
    last += (box.offset_in_chunk[d] + box.extent[d] - 1) * strides[d];
  }
  return {static_cast<std::size_t>(first * element_size), static_cast<std::size_t>((last - first + 1) * element_size)};
}

BoxPlan plan_box_copy(const ChunkBox& box, const DestinationLayout& dest, std::uintptr_t src_origin,
                      std::uintptr_t dst_origin) {
  const PlanDim element{dest.element_size, 1, 1};
  const PlanSource source{std::span(&element, 1), chunk_strides(box), src_origin, true};
  return plan_dims(box, dest, &source, dst_origin, 1);
}

BoxPlan plan_box_fill(const ChunkBox& box, const DestinationLayout& dest, std::span<const std::byte> fill,
                      std::uintptr_t dst_origin, std::array<std::byte, 16>& unit_value) {
  if (fill.size() != dest.element_size)
    throw Error(ErrorKind::invalid_argument, "box fill: the fill value is not one element");
  BoxPlan result = plan_dims(box, dest, nullptr, dst_origin, pattern_period(fill));
  unit_value.fill(std::byte{0});
  for (unsigned j = 0; j < result.plan.unit; ++j) unit_value[j] = fill[j % fill.size()];
  return result;
}

}  // namespace zarrdirect::cuda

#include "util/selection_geometry.hpp"

#include <algorithm>
#include <cstring>
#include <numeric>

#include <fmt/format.h>

#include "zarrdirect/error.hpp"

namespace zarrdirect {

SelectionGeometry SelectionGeometry::build(const Selection& selection, std::span<const std::uint64_t> shape) {
  SelectionGeometry geometry;
  geometry.rank = shape.size();
  if (shape.size() > kMaxRank)
    throw Error(ErrorKind::unsupported, fmt::format("selection: {} dimensions, at most {}", shape.size(), kMaxRank));
  if (!selection.empty() && selection.size() != shape.size())
    throw Error(ErrorKind::invalid_argument,
                fmt::format("selection: has {} axes, the array has {}", selection.size(), shape.size()));
  geometry.bounds.resize(shape.size());
  geometry.axes.resize(shape.size());
  for (std::size_t d = 0; d < shape.size(); ++d) {
    const AxisSelection axis = selection.empty() ? AxisSelection::all() : selection[d];
    std::vector<std::uint64_t> picked = axis.resolve(shape[d], d);
    SelectionAxis& table = geometry.axes[d];
    const std::size_t n = picked.size();
    table.sorted_out.resize(n);
    std::iota(table.sorted_out.begin(), table.sorted_out.end(), std::uint64_t{0});
    if (axis.kind() == AxisSelection::Kind::slice) {
      // Already in order: ascending, or descending for a negative step.
      if (n > 1 && picked.front() > picked.back()) {
        std::reverse(picked.begin(), picked.end());
        std::reverse(table.sorted_out.begin(), table.sorted_out.end());
      }
    } else if (!std::is_sorted(picked.begin(), picked.end())) {
      std::stable_sort(table.sorted_out.begin(), table.sorted_out.end(),
                       [&](std::uint64_t a, std::uint64_t b) { return picked[a] < picked[b]; });
      std::vector<std::uint64_t> sorted(n);
      for (std::size_t k = 0; k < n; ++k) sorted[k] = picked[table.sorted_out[k]];
      picked = std::move(sorted);
    }
    table.sorted_index = std::move(picked);
    geometry.out_shape[d] = n;
    geometry.bounds[d] = n ? Range{table.sorted_index.front(), table.sorted_index.back() + 1} : Range{0, 0};
    if (axis.kind() != AxisSelection::Kind::index) {
      geometry.result_shape.push_back(n);
      geometry.result_axes.push_back(d);
    }
  }
  return geometry;
}

bool SelectionGeometry::empty() const { return num_elements() == 0; }

std::uint64_t SelectionGeometry::num_elements() const {
  std::uint64_t n = 1;
  for (std::size_t d = 0; d < rank; ++d) n *= out_shape[d];
  return n;
}

CellPicks SelectionGeometry::cells(const Extents& cell_shape) const {
  CellPicks picks;
  picks.axes.resize(rank);
  for (std::size_t d = 0; d < rank; ++d) {
    auto& cells = picks.axes[d];
    for (std::uint64_t index : axes[d].sorted_index) {
      const std::uint64_t cell = index / cell_shape[d];
      if (cells.empty() || cells.back() != cell) cells.push_back(cell);
    }
  }
  return picks;
}

std::pair<std::size_t, std::size_t> SelectionGeometry::span(std::size_t d, std::uint64_t lo, std::uint64_t hi) const {
  const auto& sorted = axes[d].sorted_index;
  auto begin = std::lower_bound(sorted.begin(), sorted.end(), lo);
  auto end = std::lower_bound(begin, sorted.end(), hi);
  return {static_cast<std::size_t>(begin - sorted.begin()), static_cast<std::size_t>(end - sorted.begin())};
}

bool SelectedPart::empty() const {
  for (std::size_t d = 0; d < rank; ++d)
    if (count[d] == 0) return true;
  return false;
}

std::uint64_t SelectedPart::num_elements() const {
  std::uint64_t n = 1;
  for (std::size_t d = 0; d < rank; ++d) n *= count[d];
  return n;
}

SelectedPart selected_part(const SelectionGeometry& geometry, const ChunkBox& box) {
  SelectedPart part;
  part.rank = geometry.rank;
  for (std::size_t d = 0; d < geometry.rank; ++d) {
    const std::uint64_t lo = geometry.bounds[d].start + box.offset_in_dest[d];
    const auto [first, last] = geometry.span(d, lo, lo + box.extent[d]);
    part.first[d] = first;
    part.count[d] = last - first;
    part.cell_origin[d] = lo - box.offset_in_chunk[d];
  }
  return part;
}

namespace {

// Per axis of a part: the source element offsets (C order in the cell) and destination byte
// offsets of its entries. Built once per cell; the copy then only adds.
struct PartOffsets {
  std::vector<std::vector<std::int64_t>> src;
  std::vector<std::vector<std::int64_t>> dst;
};

PartOffsets part_offsets(const SelectionGeometry& geometry, const SelectedPart& part, const ChunkBox& box,
                         const DestinationLayout& dest, bool with_source) {
  PartOffsets offsets;
  offsets.src.resize(part.rank);
  offsets.dst.resize(part.rank);
  const Extents strides = c_order_strides(box.chunk_shape, part.rank);
  for (std::size_t d = 0; d < part.rank; ++d) {
    const auto& axis = geometry.axes[d];
    offsets.dst[d].resize(part.count[d]);
    if (with_source) offsets.src[d].resize(part.count[d]);
    for (std::size_t k = 0; k < part.count[d]; ++k) {
      const std::size_t entry = part.first[d] + k;
      offsets.dst[d][k] = static_cast<std::int64_t>(axis.sorted_out[entry]) * dest.byte_strides[d];
      if (with_source)
        offsets.src[d][k] =
            static_cast<std::int64_t>((axis.sorted_index[entry] - part.cell_origin[d]) * strides[d] *
                                      dest.element_size);
    }
  }
  return offsets;
}

// Walks the outer product of the part's axes but the last, calling inner(src, dst) with the
// byte offsets of each row.
template <typename Inner>
void for_each_row(const PartOffsets& offsets, std::size_t rank, bool with_source, Inner&& inner) {
  if (rank == 0) {
    inner(std::int64_t{0}, std::int64_t{0});
    return;
  }
  const std::size_t outer = rank - 1;
  std::array<std::size_t, kMaxRank> at{};
  while (true) {
    std::int64_t src = 0;
    std::int64_t dst = 0;
    for (std::size_t d = 0; d < outer; ++d) {
      if (with_source) src += offsets.src[d][at[d]];
      dst += offsets.dst[d][at[d]];
    }
    inner(src, dst);
    std::size_t d = outer;
    while (d > 0) {
      --d;
      if (++at[d] < offsets.dst[d].size()) break;
      at[d] = 0;
      if (d == 0) return;
    }
    if (outer == 0) return;
  }
}

template <std::size_t Size>
void copy_row(const std::byte* src, std::byte* dst, const std::vector<std::int64_t>& src_off,
              const std::vector<std::int64_t>& dst_off) {
  for (std::size_t k = 0; k < dst_off.size(); ++k) std::memcpy(dst + dst_off[k], src + src_off[k], Size);
}

// True when the entries are one run: each offset `step` after the one before.
bool is_run(const std::vector<std::int64_t>& offsets, std::int64_t step) {
  for (std::size_t k = 1; k < offsets.size(); ++k)
    if (offsets[k] - offsets[k - 1] != step) return false;
  return true;
}

}  // namespace

void place_selected_on_host(const SelectionGeometry& geometry, const std::byte* chunk, const ChunkBox& box,
                            const DestinationLayout& dest) {
  const SelectedPart part = selected_part(geometry, box);
  if (part.empty()) return;
  const PartOffsets offsets = part_offsets(geometry, part, box, dest, true);
  const std::size_t size = dest.element_size;
  const auto signed_size = static_cast<std::int64_t>(size);
  if (part.rank == 0) {
    std::memcpy(dest.data, chunk, size);
    return;
  }
  const auto& src_last = offsets.src[part.rank - 1];
  const auto& dst_last = offsets.dst[part.rank - 1];
  const bool run = is_run(src_last, signed_size) && is_run(dst_last, signed_size);
  const std::size_t run_bytes = src_last.size() * size;
  for_each_row(offsets, part.rank, true, [&](std::int64_t src, std::int64_t dst) {
    const std::byte* from = chunk + src;
    std::byte* to = dest.data + dst;
    if (run) {
      std::memcpy(to + dst_last[0], from + src_last[0], run_bytes);
      return;
    }
    switch (size) {
      case 1: copy_row<1>(from, to, src_last, dst_last); break;
      case 2: copy_row<2>(from, to, src_last, dst_last); break;
      case 4: copy_row<4>(from, to, src_last, dst_last); break;
      case 8: copy_row<8>(from, to, src_last, dst_last); break;
      case 16: copy_row<16>(from, to, src_last, dst_last); break;
      default:
        for (std::size_t k = 0; k < dst_last.size(); ++k) std::memcpy(to + dst_last[k], from + src_last[k], size);
    }
  });
}

void fill_selected_on_host(const SelectionGeometry& geometry, const std::byte* fill, const ChunkBox& box,
                           const DestinationLayout& dest) {
  const SelectedPart part = selected_part(geometry, box);
  if (part.empty()) return;
  const PartOffsets offsets = part_offsets(geometry, part, box, dest, false);
  const std::size_t size = dest.element_size;
  if (part.rank == 0) {
    std::memcpy(dest.data, fill, size);
    return;
  }
  const auto& dst_last = offsets.dst[part.rank - 1];
  for_each_row(offsets, part.rank, false, [&](std::int64_t, std::int64_t dst) {
    std::byte* to = dest.data + dst;
    for (std::int64_t offset : dst_last) std::memcpy(to + offset, fill, size);
  });
}

}  // namespace zarrdirect

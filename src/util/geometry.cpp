#include "util/geometry.hpp"

#include <algorithm>

#include "util/checked_math.hpp"

namespace zarrdirect {

Extents to_extents(std::span<const std::uint64_t> values) {
  Extents e{};
  std::copy_n(values.begin(), std::min(values.size(), kMaxRank), e.begin());
  return e;
}

Extents c_order_strides(const Extents& shape, std::size_t rank) {
  Extents strides{};
  if (rank == 0) return strides;
  strides[rank - 1] = 1;
  for (std::size_t d = rank - 1; d-- > 0;) strides[d] = strides[d + 1] * shape[d + 1];
  return strides;
}

Extents linear_to_coords(std::uint64_t linear, const Extents& grid, std::size_t rank) {
  Extents coords{};
  for (std::size_t d = rank; d-- > 0;) {
    coords[d] = linear % grid[d];
    linear /= grid[d];
  }
  return coords;
}

std::uint64_t coords_to_linear(const Extents& coords, const Extents& grid, std::size_t rank) {
  std::uint64_t linear = 0;
  for (std::size_t d = 0; d < rank; ++d) linear = linear * grid[d] + coords[d];
  return linear;
}

std::uint64_t ChunkBox::num_elements() const {
  std::uint64_t n = 1;
  for (std::size_t d = 0; d < rank; ++d) n *= extent[d];
  return n;
}

bool ChunkBox::covers_chunk() const {
  for (std::size_t d = 0; d < rank; ++d)
    if (offset_in_chunk[d] != 0 || extent[d] != chunk_shape[d]) return false;
  return true;
}

std::uint64_t GridWindow::size() const {
  std::uint64_t n = 1;
  for (std::size_t d = 0; d < rank; ++d) n *= count[d];
  return n;
}

Extents GridWindow::cell(std::uint64_t linear) const {
  Extents coords = linear_to_coords(linear, count, rank);
  if (picks) {
    for (std::size_t d = 0; d < rank; ++d) coords[d] = picks->axes[d][first[d] + coords[d]] - base[d];
    return coords;
  }
  for (std::size_t d = 0; d < rank; ++d) coords[d] += first[d];
  return coords;
}

GridWindow window_over(const Region& region, const Extents& origin, const Extents& cell_shape, std::size_t rank) {
  GridWindow window;
  window.rank = rank;
  for (std::size_t d = 0; d < rank; ++d) {
    if (region[d].size() == 0) {
      window.count[d] = 0;
      continue;
    }
    window.first[d] = (region[d].start - origin[d]) / cell_shape[d];
    std::uint64_t last = (region[d].stop - 1 - origin[d]) / cell_shape[d];
    window.count[d] = last - window.first[d] + 1;
  }
  return window;
}

GridWindow window_over(const Region& region, const Extents& origin, const Extents& cell_shape, std::size_t rank,
                       const CellPicks* picks) {
  GridWindow window = window_over(region, origin, cell_shape, rank);
  if (!picks) return window;
  window.picks = picks;
  for (std::size_t d = 0; d < rank; ++d) {
    const auto& axis = picks->axes[d];
    window.base[d] = origin[d] / cell_shape[d];
    const std::uint64_t lo = window.base[d] + window.first[d];
    const std::uint64_t hi = lo + window.count[d];
    auto begin = std::lower_bound(axis.begin(), axis.end(), lo);
    auto end = std::lower_bound(begin, axis.end(), hi);
    window.first[d] = static_cast<std::uint64_t>(begin - axis.begin());
    window.count[d] = static_cast<std::uint64_t>(end - begin);
  }
  return window;
}

std::uint64_t cells_touched(const Region& region, std::span<const std::uint64_t> cell_shape) {
  std::uint64_t total = 1;
  for (std::size_t d = 0; d < region.size(); ++d) {
    if (region[d].size() == 0) return 0;
    const std::uint64_t extent = d < cell_shape.size() && cell_shape[d] > 0 ? cell_shape[d] : ~std::uint64_t{0};
    const std::uint64_t cells = (region[d].stop - 1) / extent - region[d].start / extent + 1;
    total = checked_mul(total, cells).value_or(~std::uint64_t{0});
  }
  return total;
}

ChunkBox box_of(const Extents& coords, const Extents& origin, const Extents& cell_shape, const Region& region,
                std::size_t rank) {
  ChunkBox box;
  box.rank = rank;
  for (std::size_t d = 0; d < rank; ++d) {
    std::uint64_t chunk_start = origin[d] + coords[d] * cell_shape[d];
    std::uint64_t start = std::max(chunk_start, region[d].start);
    std::uint64_t stop = std::min(chunk_start + cell_shape[d], region[d].stop);
    box.chunk_shape[d] = cell_shape[d];
    box.offset_in_chunk[d] = start - chunk_start;
    box.extent[d] = stop > start ? stop - start : 0;
    box.offset_in_dest[d] = start - region[d].start;
  }
  return box;
}

DestinationLayout DestinationLayout::contiguous(std::byte* data, std::span<const std::uint64_t> shape,
                                                std::size_t element_size) {
  DestinationLayout layout;
  layout.data = data;
  layout.rank = shape.size();
  layout.element_size = element_size;
  std::int64_t stride = static_cast<std::int64_t>(element_size);
  for (std::size_t d = shape.size(); d-- > 0;) {
    layout.shape[d] = shape[d];
    layout.byte_strides[d] = stride;
    stride *= static_cast<std::int64_t>(shape[d]);
  }
  return layout;
}

std::byte* DestinationLayout::address_of(const Extents& offset) const {
  std::int64_t byte_offset = 0;
  for (std::size_t d = 0; d < rank; ++d) byte_offset += static_cast<std::int64_t>(offset[d]) * byte_strides[d];
  return data + byte_offset;
}

bool DestinationLayout::box_is_contiguous(const ChunkBox& box) const {
  // Contiguous when, going outward from the last dimension, each stride is the packed one and
  // only the outermost dimension that is not of extent 1 may be partial.
  std::int64_t packed = static_cast<std::int64_t>(element_size);
  bool partial_seen = false;
  for (std::size_t d = rank; d-- > 0;) {
    if (box.extent[d] == 1) continue;
    if (partial_seen || byte_strides[d] != packed) return false;
    if (box.extent[d] != shape[d]) partial_seen = true;
    packed *= static_cast<std::int64_t>(shape[d]);
  }
  return true;
}

}  // namespace zarrdirect

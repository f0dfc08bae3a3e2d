// Point reads (point_read.hpp) and Array::read_points_into.
#include "engine/point_read.hpp"

#include <algorithm>
#include <cstring>
#include <numeric>

#include <fmt/format.h>

#include "engine/batch_upload.hpp"
#include "engine/read_many.hpp"
#include "util/default_init_allocator.hpp"

namespace zarrdirect {

PointCoordinates resolve_points(const std::vector<std::vector<std::int64_t>>& coordinates,
                                std::span<const std::uint64_t> shape) {
  if (shape.empty())
    throw Error(ErrorKind::invalid_argument, "point reads need an array of at least one dimension");
  if (coordinates.size() != shape.size())
    throw Error(ErrorKind::invalid_argument, fmt::format("point coordinates for {} axes given for an array of {} "
                                                         "dimensions: give one coordinate list per axis",
                                                         coordinates.size(), shape.size()));
  const std::size_t count = coordinates.front().size();
  PointCoordinates resolved(shape.size());
  for (std::size_t axis = 0; axis < shape.size(); ++axis) {
    const auto& listed = coordinates[axis];
    if (listed.size() != count)
      throw Error(ErrorKind::invalid_argument, fmt::format("point coordinates: axis 0 lists {} points but axis {} lists {}",
                                                           count, axis, listed.size()));
    // Compared as unsigned: an extent past INT64_MAX has no int64 value, and -INT64_MIN none either.
    const std::uint64_t extent = shape[axis];
    auto& out = resolved[axis];
    out.resize(count);
    for (std::size_t i = 0; i < count; ++i) {
      const std::int64_t index = listed[i];
      const std::uint64_t magnitude =
          index < 0 ? std::uint64_t{0} - static_cast<std::uint64_t>(index) : static_cast<std::uint64_t>(index);
      if (index < 0 ? magnitude > extent : magnitude >= extent)
        throw Error(ErrorKind::invalid_argument, fmt::format("index {} (point {}) is out of bounds for axis {} with size {}",
                                                             index, i, axis, extent));
      out[i] = index < 0 ? extent - magnitude : magnitude;
    }
  }
  return resolved;
}

std::vector<PointGroup> group_points(const PointCoordinates& points, std::span<const std::uint64_t> cell_shape) {
  const std::size_t rank = points.size();
  const std::size_t count = rank ? points.front().size() : 0;
  // The cell of each point as a key ordered like C-order cell positions: per axis the cell index,
  // compared lexicographically (a linear number could overflow for huge grids).
  auto cell_of = [&](std::size_t i, std::size_t axis) { return points[axis][i] / cell_shape[axis]; };
  std::vector<std::size_t> order(count);
  std::iota(order.begin(), order.end(), std::size_t{0});
  auto before = [&](std::size_t a, std::size_t b) {
    for (std::size_t axis = 0; axis < rank; ++axis) {
      const auto ca = cell_of(a, axis), cb = cell_of(b, axis);
      if (ca != cb) return ca < cb;
    }
    return false;
  };
  std::stable_sort(order.begin(), order.end(), before);
  std::vector<PointGroup> groups;
  for (std::size_t k = 0; k < count; ++k) {
    const std::size_t i = order[k];
    if (k == 0 || before(order[k - 1], i)) {
      PointGroup group;
      for (std::size_t axis = 0; axis < rank; ++axis) group.box.push_back({points[axis][i], points[axis][i] + 1});
      groups.push_back(std::move(group));
    }
    PointGroup& group = groups.back();
    group.points.push_back(i);
    for (std::size_t axis = 0; axis < rank; ++axis) {
      group.box[axis].start = std::min(group.box[axis].start, points[axis][i]);
      group.box[axis].stop = std::max(group.box[axis].stop, points[axis][i] + 1);
    }
  }
  return groups;
}

namespace {

std::uint64_t box_elements(const Region& box) {
  std::uint64_t n = 1;
  for (const auto& range : box) n *= range.size();
  return n;
}

void add_stats(ReadStats& total, const ReadStats& part) {
  total.chunks_total += part.chunks_total;
  total.chunks_missing += part.chunks_missing;
  total.bytes_read += part.bytes_read;
  total.chunks_decoded += part.chunks_decoded;
  total.cache_hits += part.cache_hits;
  total.chunks_decoded_gpu += part.chunks_decoded_gpu;
  total.chunks_decoded_cpu += part.chunks_decoded_cpu;
  total.bytes_decoded_gpu += part.bytes_decoded_gpu;
  total.bytes_decoded_cpu += part.bytes_decoded_cpu;
  total.threads = part.threads;
  total.io_path = part.io_path;
}

// Reads groups [first, last) into `scratch` and copies their points into `out`.
ReadStats read_batch_of_groups(const Array::Impl& array, const PointCoordinates& points,
                               const std::vector<PointGroup>& groups, std::size_t first, std::size_t last,
                               std::vector<std::byte, DefaultInitAllocator<std::byte>>& scratch, std::byte* out,
                               const Settings& settings) {
  const std::size_t element = array.metadata.dtype.size;
  const std::size_t rank = points.size();
  std::vector<Region> regions;
  std::vector<DestinationLayout> layouts;
  std::vector<std::size_t> offsets;
  std::size_t total = 0;
  for (std::size_t g = first; g < last; ++g) {
    offsets.push_back(total);
    total += static_cast<std::size_t>(box_elements(groups[g].box)) * element;
  }
  scratch.resize(total);
  for (std::size_t g = first; g < last; ++g) {
    regions.push_back(groups[g].box);
    layouts.push_back(DestinationLayout::contiguous(scratch.data() + offsets[g - first], region_shape(groups[g].box),
                                                    element));
  }
  ReadStats stats = run_read_many(array, regions, layouts, settings);
  for (std::size_t g = first; g < last; ++g) {
    const Region& box = groups[g].box;
    const std::byte* base = scratch.data() + offsets[g - first];
    for (std::size_t i : groups[g].points) {
      std::uint64_t linear = 0;  // the point's C-order position in its box
      for (std::size_t axis = 0; axis < rank; ++axis) linear = linear * box[axis].size() + (points[axis][i] - box[axis].start);
      std::memcpy(out + i * element, base + linear * element, element);
    }
  }
  return stats;
}

}  // namespace

ReadStats read_points_to_host(const Array::Impl& array, const PointCoordinates& points, std::byte* out,
                              const Settings& settings, std::size_t batch_bytes) {
  const auto& metadata = array.metadata;
  // The unit the batch reader decodes: an inner chunk of a shard, or the chunk.
  std::vector<std::uint64_t> cell(metadata.chunk_shape.begin(), metadata.chunk_shape.end());
  if (array.sharding) {
    const auto inner = array.sharding->inner_chunk_shape();
    cell.assign(inner.begin(), inner.end());
  }
  const std::vector<PointGroup> groups = group_points(points, cell);
  const std::size_t element = metadata.dtype.size;
  std::vector<std::byte, DefaultInitAllocator<std::byte>> scratch;
  ReadStats stats;
  std::size_t first = 0;
  while (first < groups.size()) {
    std::size_t last = first;
    std::uint64_t bytes = 0;
    while (last < groups.size()) {
      const std::uint64_t next = box_elements(groups[last].box) * element;
      if (last > first && bytes + next > batch_bytes) break;
      bytes += next;
      ++last;
    }
    add_stats(stats, read_batch_of_groups(array, points, groups, first, last, scratch, out, settings));
    first = last;
  }
  const std::size_t count = points.empty() ? 0 : points.front().size();
  stats.bytes_out = static_cast<std::uint64_t>(count) * element;
  return stats;
}

ReadStats Array::read_points_into(const std::vector<std::vector<std::int64_t>>& coordinates,
                                  const Destination& destination, const Settings& settings) const {
  const auto& metadata = impl_->metadata;
  PointCoordinates points;
  try {
    points = resolve_points(coordinates, metadata.shape);
  } catch (const Error& e) {
    throw e.with_context(fmt::format("{}: read_points", impl_->path.string()));
  }
  const std::size_t count = points.front().size();
  if (count == 0) return {};
  // The points' bookkeeping (coordinates resolved, their order, at worst a group each) is bounded
  // like a read's buffers: a caller's billion points fail here, not in the allocator.
  const std::uint64_t rank = metadata.shape.size();
  const std::uint64_t per_point = 8 * rank + 8 + sizeof(PointGroup) + 16 * rank + 8;
  const std::uint64_t limit = settings.effective_memory_limit();
  if (count > limit / per_point)
    throw Error(ErrorKind::io, fmt::format("{}: read_points: {} points need about {} bytes of memory to group by "
                                           "chunk, more than the read's limit of {} bytes "
                                           "(Settings::memory_limit_bytes, ZARRDIRECT_MEMORY_LIMIT_MB)",
                                           impl_->path.string(), count, per_point * count, limit));
  if (!destination.data) throw Error(ErrorKind::invalid_argument, "read_points_into: destination data is null");
  if (destination.byte_strides.size() > 1 ||
      (destination.byte_strides.size() == 1 && destination.byte_strides[0] != static_cast<std::int64_t>(metadata.dtype.size)))
    throw Error(ErrorKind::invalid_argument, "read_points_into: the destination must be one contiguous run of elements");
  const std::size_t element = metadata.dtype.size;
  if (destination.device != Device::cuda)
    return read_points_to_host(*impl_, points, static_cast<std::byte*>(destination.data), settings);
  // Device: the points are gathered in pinned host memory and copied over at once (one element
  // per point: the chunks' bytes never need to reach the device).
  auto staging = acquire_batch_buffer(count * element);
  ReadStats stats = read_points_to_host(*impl_, points, staging.get(), settings);
  const std::uint64_t extent = count;
  upload_batch({{staging.get(), DestinationLayout::contiguous(static_cast<std::byte*>(destination.data),
                                                              std::span<const std::uint64_t>(&extent, 1), element)}},
               destination.cuda_stream);
  stats.io_path = "staged";
  return stats;
}

}  // namespace zarrdirect

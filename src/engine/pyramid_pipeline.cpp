#include "engine/pyramid_pipeline.hpp"

#include <cstring>

#include <fmt/format.h>

#include "engine/downsample.hpp"
#include "zarrdirect/error.hpp"

namespace zarrdirect {

PyramidPipeline::PyramidPipeline(Config config) : config_(std::move(config)) {
  config_.settings.progress = nullptr;
  const auto& shape0 = config_.levels.at(0).metadata().shape;
  axis_ = shape0.size() - config_.halved_dims;
  for (std::size_t d = 0; d < axis_; ++d) outer_ *= shape0[d];
  for (const auto& array : config_.levels) {
    Level level;
    level.shape = array.metadata().shape;
    level.plane_bytes = config_.dtype.size;
    for (std::size_t d = axis_ + 1; d < level.shape.size(); ++d) level.plane_bytes *= level.shape[d];
    level.unit = array.metadata().chunk_shape[axis_];
    levels_.push_back(std::move(level));
  }
}

Buffer PyramidPipeline::allocate(std::size_t bytes) {
  Buffer buffer = Buffer::allocate(config_.device, bytes);
  count_buffer(bytes);
  return buffer;
}

void PyramidPipeline::count_buffer(std::size_t bytes) {
  live_bytes_ += bytes;
  peak_bytes_ = std::max(peak_bytes_, live_bytes_);
}

void PyramidPipeline::push(const void* slab, std::uint64_t rows, bool last) {
  const auto* data = static_cast<const std::byte*>(slab);
  std::uint64_t level_rows = rows;
  for (std::size_t k = 0; k < levels_.size(); ++k) {
    if (k > 0) {
      Level& level = levels_[k];
      std::vector<std::uint64_t> above = levels_[k - 1].shape;
      above[axis_] = level_rows;
      if (!last && level_rows % 2 != 0)
        throw Error(ErrorKind::invalid_argument,
                    fmt::format("pyramid slab of {} rows is not a multiple of 2^(levels-1)", rows));
      const auto geometry = downsample_geometry(above, config_.halved_dims);
      level_rows /= 2;
      if (level.part.size() == 0) {
        const std::uint64_t capacity = std::max<std::uint64_t>(config_.max_slab_rows >> k, 1);
        level.part = allocate(outer_ * capacity * level.plane_bytes);
      }
      if (config_.device == Device::cuda)
        downsample_device(data, level.part.data(), geometry, config_.dtype, config_.method, config_.cuda_stream);
      else
        downsample_host(data, level.part.data(), geometry, config_.dtype, config_.method, config_.threads);
      data = static_cast<const std::byte*>(level.part.data());
    }
    emit(k, data, level_rows, last);
    if (config_.after_level) config_.after_level();
  }
  if (last)
    for (std::size_t k = 0; k < levels_.size(); ++k)
      if (levels_[k].written != levels_[k].shape[axis_])
        throw Error(ErrorKind::invalid_argument,
                    fmt::format("pyramid level {} got {} of its {} rows", k, levels_[k].written, levels_[k].shape[axis_]));
}

// Rows go out in whole storage units: first topping up the units waiting, then straight from
// `data`, and what is left of a unit waits (or, on the last slab, goes out as the array's end).
void PyramidPipeline::emit(std::size_t k, const std::byte* data, std::uint64_t rows, bool last) {
  Level& level = levels_[k];
  std::uint64_t offset = 0;
  if (level.pending_rows > 0) {
    const std::uint64_t take = std::min(level.unit - level.pending_rows, rows);
    auto* pending = static_cast<std::byte*>(level.pending.data());
    copy_rows(k, pending + level.pending_rows * level.plane_bytes, level.unit, data, rows, take);
    level.pending_rows += take;
    offset = take;
    if (level.pending_rows == level.unit || (last && offset == rows)) {
      write_rows(k, pending, level.unit, 0, level.pending_rows);
      level.pending_rows = 0;
    }
  }
  if (level.pending_rows > 0) return;  // all of `rows` went into the waiting unit
  const std::uint64_t remaining = rows - offset;
  const std::uint64_t whole = last ? remaining : remaining / level.unit * level.unit;
  if (whole > 0) write_rows(k, data, rows, offset, whole);
  const std::uint64_t left = remaining - whole;
  if (left > 0) {
    if (level.pending.size() == 0) level.pending = allocate(outer_ * level.unit * level.plane_bytes);
    copy_rows(k, static_cast<std::byte*>(level.pending.data()), level.unit, data + (offset + whole) * level.plane_bytes,
              rows, left);
    level.pending_rows = left;
  }
}

// Writes rows [first, first + count) of `data` (outer x buffer_rows x plane) at the level's next row.
void PyramidPipeline::write_rows(std::size_t k, const std::byte* data, std::uint64_t buffer_rows, std::uint64_t first,
                                 std::uint64_t count) {
  Level& level = levels_[k];
  const std::size_t rank = level.shape.size();
  Region region(rank);
  std::vector<std::int64_t> strides(rank);
  std::int64_t stride = config_.dtype.size;
  for (std::size_t d = rank; d-- > 0;) {
    strides[d] = stride;
    const std::uint64_t extent = d == axis_ ? buffer_rows : level.shape[d];
    stride *= static_cast<std::int64_t>(extent);
    region[d] = d == axis_ ? Range{level.written, level.written + count} : Range{0, level.shape[d]};
  }
  Source source;
  source.data = data + first * level.plane_bytes;
  source.byte_strides = std::move(strides);
  source.device = config_.device;
  source.cuda_stream = config_.cuda_stream;
  const WriteStats stats = config_.levels[k].write(region, source, config_.write, config_.settings);
  bytes_written_ += stats.bytes_written;
  chunks_merged_ += stats.chunks_merged;
  level.written += count;
}

// `count` rows from `src` (outer x src_rows x plane) to `dst` (outer x dst_rows x plane).
void PyramidPipeline::copy_rows(std::size_t k, std::byte* dst, std::uint64_t dst_rows, const std::byte* src,
                                std::uint64_t src_rows, std::uint64_t count) {
  const std::uint64_t plane = levels_[k].plane_bytes;
  if (config_.device == Device::cuda) {
    copy_rows_device(dst, dst_rows * plane, src, src_rows * plane, count * plane, outer_, config_.cuda_stream);
    return;
  }
  for (std::uint64_t o = 0; o < outer_; ++o) std::memcpy(dst + o * dst_rows * plane, src + o * src_rows * plane, count * plane);
}

}  // namespace zarrdirect

// Array::read_many, read_batch, read_many_into and the cache controls: the public side of the
// batch reader (read_many.cpp).
#include <algorithm>

#include <fmt/format.h>

#include "engine/batch_upload.hpp"
#include "engine/device_placer.hpp"
#include "engine/read_many.hpp"

namespace zarrdirect {
namespace {

std::uint64_t element_count(const std::vector<std::uint64_t>& shape) {
  std::uint64_t count = 1;
  for (auto extent : shape) count *= extent;
  return count;
}

std::vector<Region> resolve_all(const std::vector<Region>& regions, const ArrayMetadata& metadata,
                                const std::filesystem::path& path) {
  std::vector<Region> resolved;
  resolved.reserve(regions.size());
  for (std::size_t i = 0; i < regions.size(); ++i) {
    try {
      resolved.push_back(resolve_region(regions[i], metadata.shape));
    } catch (const Error& e) {
      throw e.with_context(fmt::format("{}: read_many: region {}", path.string(), i));
    }
  }
  return resolved;
}

}  // namespace

ReadStats Array::read_many_into(const std::vector<Region>& regions, const std::vector<Destination>& destinations,
                                const Settings& settings) const {
  const auto& metadata = impl_->metadata;
  if (regions.size() != destinations.size())
    throw Error(ErrorKind::invalid_argument, fmt::format("read_many_into: {} regions but {} destinations",
                                                         regions.size(), destinations.size()));
  std::vector<Region> resolved = resolve_all(regions, metadata, impl_->path);
  const bool to_device = !destinations.empty() && destinations.front().device == Device::cuda;
  std::vector<Region> work;
  std::vector<DestinationLayout> layouts;
  std::vector<BatchUpload> uploads;
  std::uint64_t total_bytes = 0;
  for (std::size_t i = 0; i < resolved.size(); ++i) {
    const Destination& destination = destinations[i];
    if ((destination.device == Device::cuda) != to_device)
      throw Error(ErrorKind::invalid_argument, "read_many_into: destinations on the host and on a device in one call");
    auto shape = region_shape(resolved[i]);
    const std::uint64_t count = element_count(shape);
    if (count == 0) continue;  // nothing to place
    if (!destination.data)
      throw Error(ErrorKind::invalid_argument, fmt::format("read_many_into: destination {} data is null", i));
    DestinationLayout layout =
        DestinationLayout::contiguous(static_cast<std::byte*>(destination.data), shape, metadata.dtype.size);
    if (!destination.byte_strides.empty()) {
      if (destination.byte_strides.size() != shape.size())
        throw Error(ErrorKind::invalid_argument, fmt::format("read_many_into: destination {}: {} strides for a {}-d region",
                                                             i, destination.byte_strides.size(), shape.size()));
      std::copy(destination.byte_strides.begin(), destination.byte_strides.end(), layout.byte_strides.begin());
    }
    total_bytes += count * metadata.dtype.size;
    work.push_back(std::move(resolved[i]));
    layouts.push_back(layout);
  }
  ReadStats stats;
  if (work.empty()) return stats;
  if (!to_device) {
    stats = run_read_many(*impl_, work, layouts, settings);
    stats.bytes_out = total_bytes;
    return stats;
  }
  // Device, placed there: each chunk staged once, placed into every region by the batch kernel
  // (device_placer.hpp). That is the way with the device cache (a patch of cached chunks is a
  // gather on the GPU) and for batches larger than the staging budget. Otherwise the host gather
  // below: every region assembled in pinned memory, one copy each. It measured 10-25% faster for
  // 400 random 64^3 patches of 128^3 chunks (H100 and H200, raw and zstd-1: 7,171 against 5,983
  // and 1,317 against 1,051 patches/s), its bus traffic being the regions' bytes and nothing more.
  // Settings::device_batch = false, or regions the kernel cannot take, always gather.
  // It is also the way when the chunks' codec is decoded on the GPU (Settings::decode): the
  // placer places them from where the GPU decoded them. Neither cache takes such chunks
  // (read_many.cpp), so with one on they decode on the host.
  const bool device_cache = impl_->device_cache->enabled() || settings.device_cache_bytes > 0;
  const bool host_cache = impl_->cache->enabled() || settings.cache_bytes > 0;
  const codec::CodecChain& staged = impl_->sharding ? impl_->sharding->inner_chain() : impl_->chain;
  const bool gpu_decodes =
      settings.decode != DecodeSide::cpu && !device_cache && !host_cache &&
      read_many_gpu_route(*impl_, settings, false, distinct_chunk_bytes(*impl_, work)).codec != GpuCodec::none;
  bool placeable = settings.device_batch && metadata.rank() <= kPlacerMaxRank &&
                   (device_cache || total_bytes > settings.staging_bytes || gpu_decodes);
  for (std::size_t i = 0; i < work.size() && placeable; ++i)
    placeable = element_count(region_shape(work[i])) * metadata.dtype.size < kPlacerMaxRegionBytes;
  if (placeable) {
    auto placer = make_device_placer(layouts, staged.decoded_spec().nbytes(), settings, destinations.front().cuda_stream);
    stats = run_read_many(*impl_, work, layouts, settings, placer.get());
    stats.bytes_out = total_bytes;
    return stats;
  }
  // Device, gathered on the host: every region in one pinned host buffer, region after region,
  // then copied.
  auto batch = acquire_batch_buffer(static_cast<std::size_t>(total_bytes));
  std::vector<DestinationLayout> host_layouts;
  std::byte* cursor = batch.get();
  for (std::size_t i = 0; i < work.size(); ++i) {
    auto shape = region_shape(work[i]);
    host_layouts.push_back(DestinationLayout::contiguous(cursor, shape, metadata.dtype.size));
    uploads.push_back({cursor, layouts[i]});
    cursor += element_count(shape) * metadata.dtype.size;
  }
  stats = run_read_many(*impl_, work, host_layouts, settings);
  upload_batch(uploads, destinations.front().cuda_stream);
  stats.io_path = "staged";
  stats.bytes_out = total_bytes;
  return stats;
}

Buffer Buffer::part(const Buffer& whole, std::size_t offset, std::size_t nbytes) {
  if (offset > whole.size_ || nbytes > whole.size_ - offset)
    throw Error(ErrorKind::invalid_argument, fmt::format("Buffer::part: {} bytes at {} do not lie in a buffer of {}",
                                                         nbytes, offset, whole.size_));
  Buffer buffer;
  buffer.data_ = std::shared_ptr<void>(whole.data_, static_cast<std::byte*>(whole.data_.get()) + offset);
  buffer.size_ = nbytes;
  buffer.device_ = whole.device_;
  return buffer;
}

std::vector<NDArray> Array::read_many(const std::vector<Region>& regions, Device device, const Settings& settings) const {
  const auto& metadata = impl_->metadata;
  std::vector<Region> resolved = resolve_all(regions, metadata, impl_->path);
  // One allocation for the batch (a cudaMalloc and cudaFree per patch would cost more than
  // reading it), each result a part of it at a 256-byte boundary, as cudaMalloc aligns.
  constexpr std::uint64_t kAlign = 256;
  std::vector<std::uint64_t> offsets;
  std::uint64_t total = 0;
  for (const auto& region : resolved) {
    offsets.push_back(total);
    total += (element_count(region_shape(region)) * metadata.dtype.size + kAlign - 1) / kAlign * kAlign;
  }
  Buffer whole = Buffer::allocate(device, static_cast<std::size_t>(total));
  std::vector<Buffer> buffers;
  std::vector<Destination> destinations;
  for (std::size_t i = 0; i < resolved.size(); ++i) {
    const std::uint64_t bytes = element_count(region_shape(resolved[i])) * metadata.dtype.size;
    buffers.push_back(Buffer::part(whole, static_cast<std::size_t>(offsets[i]), static_cast<std::size_t>(bytes)));
    destinations.push_back({buffers.back().data(), {}, device, nullptr});
  }
  ReadStats stats = read_many_into(resolved, destinations, settings);
  std::vector<NDArray> arrays;
  arrays.reserve(resolved.size());
  for (std::size_t i = 0; i < resolved.size(); ++i)
    arrays.emplace_back(std::move(buffers[i]), region_shape(resolved[i]), metadata.dtype, stats);
  return arrays;
}

NDArray Array::read_batch(const std::vector<Region>& regions, Device device, const Settings& settings) const {
  const auto& metadata = impl_->metadata;
  std::vector<Region> resolved = resolve_all(regions, metadata, impl_->path);
  std::vector<std::uint64_t> shape = resolved.empty() ? std::vector<std::uint64_t>(metadata.rank(), 0)
                                                      : region_shape(resolved.front());
  for (std::size_t i = 1; i < resolved.size(); ++i)
    if (region_shape(resolved[i]) != shape)
      throw Error(ErrorKind::invalid_argument,
                  fmt::format("{}: read_batch: region {} has shape [{}], region 0 [{}]; stacking needs equal shapes",
                              impl_->path.string(), i, fmt::join(region_shape(resolved[i]), ", "), fmt::join(shape, ", ")));
  const std::uint64_t region_bytes = element_count(shape) * metadata.dtype.size;
  Buffer buffer = Buffer::allocate(device, static_cast<std::size_t>(region_bytes * resolved.size()));
  std::vector<Destination> destinations;
  for (std::size_t i = 0; i < resolved.size(); ++i)
    destinations.push_back({static_cast<std::byte*>(buffer.data()) + i * region_bytes, {}, device, nullptr});
  ReadStats stats = read_many_into(resolved, destinations, settings);
  shape.insert(shape.begin(), resolved.size());
  return NDArray(std::move(buffer), std::move(shape), metadata.dtype, std::move(stats));
}

void Array::set_cache_bytes(std::size_t bytes) const { impl_->cache->set_capacity(bytes); }

CacheStats Array::cache_stats() const { return impl_->cache->stats(); }

void Array::set_device_cache_bytes(std::size_t bytes) const { impl_->device_cache->set_capacity(bytes); }

CacheStats Array::device_cache_stats() const { return impl_->device_cache->stats(); }

CacheInvalidation::~CacheInvalidation() {
  for (ChunkCache* cache : {array_.cache.get(), array_.device_cache.get()}) {
    if (!cache->enabled()) continue;
    try {
      const auto& metadata = array_.metadata;
      const Extents chunk_shape = to_extents(metadata.chunk_shape);
      const GridWindow window = window_over(region_, Extents{}, chunk_shape, metadata.rank());
      // Past this many chunks, forgetting everything is cheaper than naming each.
      constexpr std::uint64_t kMostKeys = 4096;
      if (window.size() > kMostKeys) {
        cache->clear();
        continue;
      }
      for (std::uint64_t i = 0; i < window.size(); ++i) {
        const Extents coords = window.cell(i);
        cache->invalidate(metadata.chunk_key_encoding.key(std::span(coords.data(), metadata.rank())));
      }
    } catch (...) {
      cache->clear();
    }
  }
}

}  // namespace zarrdirect

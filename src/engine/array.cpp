#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

#include "engine/array_state.hpp"
#include "engine/device_read.hpp"
#include "engine/host_sink.hpp"
#include "engine/reader.hpp"
#include "engine/read_many.hpp"
#include "engine/result_buffer_pool.hpp"
#include "metadata/metadata_file.hpp"

namespace zarrdirect {


Buffer Buffer::allocate(const DeviceSpec& device, std::size_t nbytes) {
  check_device(device);
  Buffer buffer;
  buffer.size_ = nbytes;
  buffer.device_ = device.kind;
  if (device.kind == Device::cuda) {
    buffer.ordinal_ = device.ordinal;
    buffer.data_ = allocate_device_memory(nbytes, buffer.ordinal_);
    return buffer;
  }
  // Page-aligned so that O_DIRECT reads may land straight in it. Large results ask for huge
  // pages: first-touch page faults otherwise dominate a read from page cache (measured 0.25 GB/s
  // with 4 KiB pages against 9 GB/s with 2 MiB pages on a virtual machine), and come back to the
  // process's pool when dropped, for the next read of their size (result_buffer_pool.hpp).
  try {
    buffer.data_ = result_buffer_pool().acquire(nbytes);
  } catch (const std::length_error&) {  // rounding up to pages would wrap to a tiny allocation
    throw Error(ErrorKind::invalid_argument, fmt::format("cannot allocate {} bytes of host memory", nbytes));
  }
  if (!buffer.data_) throw Error(ErrorKind::io, fmt::format("cannot allocate {} bytes of host memory", nbytes));
  return buffer;
}

std::shared_ptr<const Array::Impl> Array::Impl::create(const std::filesystem::path& path, std::unique_ptr<Store> store,
                                                       ArrayMetadata metadata) {
  auto impl = std::make_shared<Impl>();
  impl->path = path;
  impl->store = std::move(store);
  codec::ArraySpec chunk_spec{metadata.chunk_shape, metadata.dtype, metadata.fill_value};
  std::string where = (path / (metadata.zarr_format == 3 ? "zarr.json" : ".zarray")).string();
  impl->chain = codec::CodecChain::create(metadata.codecs, chunk_spec, where);
  impl->sharding = impl->chain.sole_sharding_codec();
  impl->metadata = std::move(metadata);
  return impl;
}

const FileStore& Array::Impl::file_store() const {
  if (const auto* files = dynamic_cast<const FileStore*>(store.get())) return *files;
  require_writable_location(path);  // names the URL
  throw Error(ErrorKind::unsupported, fmt::format("{}: cannot write to this store", store->location()));
}

Array Array::open(const std::filesystem::path& path, const StoreOptions& options) {
  // One store for the metadata and the chunks: over HTTP, one set of connections and one check
  // of the options.
  auto store = open_store(path, options);
  ArrayMetadata metadata = read_array_metadata(*store, path);
  return Array(Impl::create(path, std::move(store), std::move(metadata)));
}

Array Array::open(const std::filesystem::path& path, ArrayMetadata metadata, const StoreOptions& options) {
  return Array(Impl::create(path, open_store(path, options), std::move(metadata)));
}

const ArrayMetadata& Array::metadata() const { return impl_->metadata; }
const std::filesystem::path& Array::path() const { return impl_->path; }

NDArray Array::read(const Region& region, Device device, const Settings& settings) const {
  return read(region, DeviceSpec(device), settings);
}

NDArray Array::read(const Region& region, const DeviceSpec& device, const Settings& settings) const {
  check_device(device);
  Region resolved = resolve_region(region, impl_->metadata.shape);
  auto shape = region_shape(resolved);
  std::uint64_t count = 1;
  for (auto extent : shape) count *= extent;
  Buffer buffer = Buffer::allocate(device, static_cast<std::size_t>(count * impl_->metadata.dtype.size));
  Destination destination{buffer.data(), {}, device.kind, nullptr, buffer.device_ordinal()};
  ReadStats stats = read_into(resolved, destination, settings);
  return NDArray(std::move(buffer), std::move(shape), impl_->metadata.dtype, std::move(stats));
}

ReadStats Array::read_into(const Region& region, const Destination& destination, const Settings& settings) const {
  // With the handle's cache (or, into CUDA memory, its device cache) on, reads go through the
  // batch reader, which uses them (read_many.cpp).
  if (impl_->cache->enabled() || settings.cache_bytes > 0 ||
      (destination.device == Device::cuda && (impl_->device_cache->enabled() || settings.device_cache_bytes > 0)))
    return read_many_into({region}, {destination}, settings);
  const auto& metadata = impl_->metadata;
  Region resolved = resolve_region(region, metadata.shape);
  auto shape = region_shape(resolved);
  // A 0-d array has one element to write, so a null destination is refused for it too.
  bool empty = std::any_of(shape.begin(), shape.end(), [](std::uint64_t e) { return e == 0; });
  if (!destination.data && !empty) throw Error(ErrorKind::invalid_argument, "read_into: destination data is null");
  DestinationLayout layout =
      DestinationLayout::contiguous(static_cast<std::byte*>(destination.data), shape, metadata.dtype.size);
  if (!destination.byte_strides.empty()) {
    if (destination.byte_strides.size() != shape.size())
      throw Error(ErrorKind::invalid_argument, fmt::format("read_into: {} strides given for a {}-d region",
                                                           destination.byte_strides.size(), shape.size()));
    std::copy(destination.byte_strides.begin(), destination.byte_strides.end(), layout.byte_strides.begin());
  }
  ReadStats stats;
  if (destination.device == Device::cuda) {
    check_device(DeviceSpec(Device::cuda, destination.device_ordinal));
    stats = read_to_device(*impl_, resolved, layout, destination.cuda_stream, settings, destination.device_ordinal);
  } else {
    HostSink sink(layout, metadata.fill_value);
    stats = run_read(*impl_, resolved, sink, settings);
  }
  stats.bytes_out = layout.element_size;
  for (auto extent : shape) stats.bytes_out *= extent;
  return stats;
}

}  // namespace zarrdirect

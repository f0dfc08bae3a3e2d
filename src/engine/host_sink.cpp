#include "engine/host_sink.hpp"

#include <new>

#include <fmt/format.h>

#include "zarrdirect/error.hpp"

namespace zarrdirect {

HostSink::HostSink(const DestinationLayout& destination, std::span<const std::byte> fill_value)
    : destination_(destination), fill_value_(fill_value.begin(), fill_value.end()) {}

void HostSink::start(unsigned workers, std::size_t) { buffers_.resize(workers); }

std::span<std::byte> HostSink::staging(unsigned worker, std::size_t nbytes) {
  auto& buffer = buffers_[worker];
  // Grows only when a larger chunk than before arrives: no allocation per chunk.
  if (buffer.capacity() < nbytes) {
    try {
      buffer = acquire_host_buffer(nbytes);
    } catch (const std::bad_alloc&) {
      // One exception type out of the library: the reader names the chunk on the way up.
      throw Error(ErrorKind::io, fmt::format("cannot allocate {} bytes to decode a chunk into", nbytes));
    }
  }
  return {buffer.data(), buffer.capacity()};
}

void HostSink::place(unsigned, std::span<const std::byte> chunk, const ChunkBox& box) {
  copy_box_to_host(chunk.data(), box, destination_);
}

void HostSink::fill(unsigned, const ChunkBox& box) { fill_box_on_host(fill_value_.data(), box, destination_); }

std::span<std::byte> HostSink::direct_target(const ChunkBox& box) {
  if (!box.covers_chunk() || !destination_.box_is_contiguous(box)) return {};
  return {destination_.address_of(box.offset_in_dest), box.num_elements() * destination_.element_size};
}

}  // namespace zarrdirect

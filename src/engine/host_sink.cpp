#include "engine/host_sink.hpp"

#include <cstdlib>
#include <new>

namespace zarrdirect {
namespace {
constexpr std::size_t kPage = 4096;
std::size_t round_up(std::size_t n) { return (n + kPage - 1) / kPage * kPage; }
}  // namespace

HostSink::HostSink(const DestinationLayout& destination, std::span<const std::byte> fill_value)
    : destination_(destination), fill_value_(fill_value.begin(), fill_value.end()) {}

HostSink::~HostSink() {
  for (auto& buffer : buffers_) std::free(buffer.data);
}

void HostSink::start(unsigned workers, std::size_t) { buffers_.resize(workers); }

std::span<std::byte> HostSink::staging(unsigned worker, std::size_t nbytes) {
  auto& buffer = buffers_[worker];
  if (buffer.capacity < nbytes) {
    // Grows only when a larger chunk than before arrives: no allocation per chunk.
    std::free(buffer.data);
    buffer.capacity = round_up(nbytes);
    buffer.data = static_cast<std::byte*>(std::aligned_alloc(kPage, buffer.capacity));
    if (!buffer.data) {
      buffer.capacity = 0;
      throw std::bad_alloc();
    }
  }
  return {buffer.data, buffer.capacity};
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

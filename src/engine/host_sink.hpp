// The sink for host destinations: chunks are decoded into per-worker buffers and copied into
// place, or read straight into the destination when they land there contiguously.
#pragma once

#include <vector>

#include "engine/chunk_sink.hpp"
#include "engine/host_buffer_pool.hpp"

namespace zarrdirect {

class HostSink final : public ChunkSink {
 public:
  HostSink(const DestinationLayout& destination, std::span<const std::byte> fill_value);
  std::string_view name() const override { return "host"; }
  void start(unsigned workers, std::size_t max_chunk_bytes) override;
  std::span<std::byte> staging(unsigned worker, std::size_t nbytes) override;
  void place(unsigned worker, std::span<const std::byte> chunk, const ChunkBox& box) override;
  void fill(unsigned worker, const ChunkBox& box) override;
  bool places_from_any_memory() const override { return true; }
  std::span<std::byte> direct_target(const ChunkBox& box) override;
  void finish() override {}

 private:
  DestinationLayout destination_;
  std::vector<std::byte> fill_value_;
  std::vector<HostBuffer> buffers_;
};

}  // namespace zarrdirect

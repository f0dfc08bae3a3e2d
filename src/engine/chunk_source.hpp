// Where the writer's chunks come from: host memory, or device memory through staging.
//
// The mirror of ChunkSink. The writer (writer.cpp) is the same for every source: worker threads
// ask the source to gather the part of a chunk the region covers into a host buffer in the
// chunk's C order, then merge, encode and store it. A device source (src/cuda/device_source.cpp)
// copies the box from device memory to host staging first; the engine never sees CUDA.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string_view>

#include "engine/layout.hpp"
#include "zarrdirect/device.hpp"

namespace zarrdirect {

class ChunkSource {
 public:
  virtual ~ChunkSource() = default;
  virtual std::string_view name() const = 0;

  // Called once before the workers start: worker ids passed to gather() are below `workers`.
  // `max_box_bytes` is the most bytes one box can hold.
  virtual void start(unsigned workers, std::size_t max_box_bytes) = 0;

  // Copies the source's elements of `box` (box.offset_in_dest is the position in the source,
  // box.extent the size) into `chunk`, a C-order host array of box.chunk_shape, at
  // box.offset_in_chunk. Elements of `chunk` outside the box are left as they are. Several
  // workers call it at once, each with its own id.
  virtual void gather(unsigned worker, const ChunkBox& box, std::span<std::byte> chunk) = 0;

  // For a box that is its whole chunk (box.covers_chunk()): the chunk's elements in C order in
  // memory the source holds (the caller's array where the chunk lies in it as one run, a device
  // source's staging), sparing gather()'s copy. Valid until this worker's next call. Empty when
  // the source cannot; the writer then calls gather().
  virtual std::span<const std::byte> whole_chunk(unsigned /*worker*/, const ChunkBox& /*box*/) { return {}; }

  // Called once after the workers, also after a failure.
  virtual void finish() {}
};

// The source for host memory: `layout` describes the caller's strided elements.
class HostSource final : public ChunkSource {
 public:
  explicit HostSource(const DestinationLayout& layout) : layout_(layout) {}
  std::string_view name() const override { return "host"; }
  void start(unsigned, std::size_t) override {}
  void gather(unsigned worker, const ChunkBox& box, std::span<std::byte> chunk) override;
  std::span<const std::byte> whole_chunk(unsigned worker, const ChunkBox& box) override;

 private:
  DestinationLayout layout_;
};

// Copies the box's elements from the strided host array `source` (at box.offset_in_dest) into
// the C-order chunk `chunk` (box.chunk_shape, at box.offset_in_chunk): the inverse of
// copy_box_to_host.
void gather_box_from_host(const DestinationLayout& source, const ChunkBox& box, std::byte* chunk);

// The device source, implemented in src/cuda/device_source.cpp when CUDA is built (and as a clear
// error otherwise): `layout` describes device memory; copies are ordered on `cuda_stream`.
std::unique_ptr<ChunkSource> make_device_source(const DestinationLayout& layout, void* cuda_stream,
                                                int device_ordinal = DeviceSpec::kCurrent);

}  // namespace zarrdirect

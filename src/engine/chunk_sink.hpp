// Where the reader's decoded chunks go: host memory, or device memory through staging.
//
// The reader (reader.cpp) is the same for every destination: worker threads open chunk files,
// read them, decode them into a buffer the sink hands out, and ask the sink to place them. A sink
// owns the per-worker staging and whatever ordering (streams, events) placing needs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "engine/layout.hpp"
#include "zarrdirect/error.hpp"

namespace zarrdirect {

class StoreFile;

// Chunks a sink decoded itself (place_stored), and their decoded bytes.
struct SinkDecodeCounts {
  std::uint64_t chunks = 0;  // decoded on the device
  std::uint64_t bytes = 0;
  std::uint64_t host_chunks = 0;  // handed to place_stored() but decoded on the host by the sink
  std::uint64_t host_bytes = 0;
};

// An error about a chunk handed to place_stored() earlier, found while the reader works on
// another: its message already names that chunk, so the reader passes it on without adding the
// key of the chunk it was working on.
class EarlierChunkError : public Error {
 public:
  using Error::Error;
};

class ChunkSink {
 public:
  virtual ~ChunkSink() = default;
  virtual std::string_view name() const = 0;

  // Called once before the workers start. `max_chunk_bytes` is the largest decoded chunk.
  virtual void start(unsigned workers, std::size_t max_chunk_bytes) = 0;

  // A buffer of at least `nbytes` that worker `worker` reads or decodes its next chunk into.
  // Page-aligned (O_DIRECT reads land in it), valid until the worker's next call to staging().
  virtual std::span<std::byte> staging(unsigned worker, std::size_t nbytes) = 0;

  // Places a decoded chunk (C order, box.chunk_shape), held in this worker's staging buffer.
  virtual void place(unsigned worker, std::span<const std::byte> chunk, const ChunkBox& box) = 0;

  // Whether place() takes a chunk from any host memory, not only from this worker's staging:
  // the reader then places uncompressed inner chunks straight from the shard bytes it read.
  virtual bool places_from_any_memory() const { return false; }

  // Writes the fill value over the box (a missing chunk).
  virtual void fill(unsigned worker, const ChunkBox& box) = 0;

  // Host memory the whole chunk can be read into directly, when the box is the whole chunk and
  // lands contiguously; empty otherwise.
  virtual std::span<std::byte> direct_target(const ChunkBox&) { return {}; }

  // Reads an uncompressed chunk file straight to its place without host staging (GDS); false
  // when this sink cannot, and the reader then stages it.
  virtual bool read_file_direct(unsigned /*worker*/, const StoreFile& /*file*/, const ChunkBox& /*box*/) {
    return false;
  }

  // Takes the stored (still compressed) bytes of a chunk to decode on the device and place over
  // `box`; `where` names the chunk in errors, as the reader's context does ("<path> (chunk
  // <key>)"). The bytes are copied before it returns. False, having taken nothing, when this sink
  // does not decode this chunk itself: the reader then decodes it on the CPU and stages it as any
  // other. Failures of earlier chunks may surface here, as EarlierChunkError, or at finish().
  virtual bool place_stored(unsigned /*worker*/, std::span<const std::byte> /*stored*/, const ChunkBox& /*box*/,
                            std::string_view /*where*/) {
    return false;
  }
  // What place_stored() decoded (complete after finish()).
  virtual SinkDecodeCounts sink_decoded() const { return {}; }

  // Waits for everything placed to be in the destination. Called once, also after a failure.
  virtual void finish() = 0;
};

}  // namespace zarrdirect

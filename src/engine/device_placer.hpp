// read_many into device memory, placed on the device: implemented in src/cuda/device_placer.cpp
// when CUDA is built, and as clear errors otherwise (device_placer_device_unavailable.cpp).
//
// The batch reader (read_many.cpp) produces each distinct chunk (inner chunk) of a batch once on
// the host. A placer packs the part of it the batch needs into pinned staging next to other
// chunks, uploads each full staging buffer with one copy, and places every (chunk, region) box of
// it with one launch of the batch kernel (cuda/batch_kernels.cuh), reading the chunk once for all
// the regions that need it. Chunks held in the handle's device cache are placed from there
// (device to device, no upload), and whole chunks uploaded while that cache is on are copied
// into it. Missing chunks are fill entries of the same launches.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "engine/chunk_cache.hpp"
#include "util/geometry.hpp"
#include "zarrdirect/settings.hpp"

namespace zarrdirect {

// One box of a chunk and the region (index into the placer's destinations) it goes to.
struct ManyBox {
  ChunkBox box;
  std::uint32_t region = 0;
};

// Bytes [first, first + nbytes) of a C-order chunk.
struct ChunkSpan {
  std::uint64_t first = 0;
  std::uint64_t nbytes = 0;
};

// The bytes of the chunk that `boxes` (of one chunk, elements of `element_size` bytes) read: from
// the first element of the earliest box to the last element of the latest, in C order. Empty
// boxes read nothing; none at all gives an empty span.
ChunkSpan chunk_span_of(std::span<const ManyBox> boxes, std::size_t element_size);

// Regions a placer takes: at most this many dims (the batch kernel's, cuda/batch_entry.hpp) and
// fewer than 2^31 bytes each; read_many gathers other regions on the host first.
inline constexpr std::size_t kPlacerMaxRank = 4;
inline constexpr std::uint64_t kPlacerMaxRegionBytes = std::uint64_t{1} << 31;

// Most boxes one stage() may announce; a chunk needed by more regions is staged once per group.
inline constexpr std::size_t kMaxBoxesPerStage = 4096;

// Where a device-cached copy of a staged whole chunk goes once it is on the device.
struct DeviceCacheInsert {
  ChunkCache* cache = nullptr;
  std::string key;
  std::uint32_t inner = 0;
  FileSignature signature;
};

class DevicePlacer {
 public:
  virtual ~DevicePlacer() = default;

  // Pinned host memory for `nbytes` bytes of one chunk, with room for `boxes` entries (at most
  // kMaxBoxesPerStage). The caller writes the bytes (from any thread, no lock held) and then
  // calls commit() or, when it fails first, abandon() for it: finish() waits for every stage.
  struct Staged {
    std::byte* host = nullptr;
    std::size_t batch = 0;
    std::size_t offset = 0;
  };
  virtual Staged stage(std::size_t nbytes, std::size_t boxes) = 0;
  // `staged` holds bytes `held` of a chunk of `chunk_bytes`; places each of `boxes` from it. With
  // `insert` (held is the whole chunk), a device copy of the chunk joins insert->cache.
  virtual void commit(const Staged& staged, ChunkSpan held, std::uint64_t chunk_bytes, std::span<const ManyBox> boxes,
                      const DeviceCacheInsert* insert) = 0;
  virtual void abandon(const Staged& staged) = 0;

  // Places `boxes` from a chunk already in device memory (a device-cache entry, kept alive until
  // the placements are done).
  virtual void place_resident(const DecodedChunkPtr& chunk, std::span<const ManyBox> boxes) = 0;
  // Writes the one-element `fill` over each of `boxes` (a missing chunk).
  virtual void fill(std::span<const ManyBox> boxes, std::span<const std::byte> fill) = 0;

  // Uploads and places what is left, waits for the device, then adds the staged chunks meant for
  // the device cache to it. Error(cuda) naming the call on a failure of any earlier placement.
  virtual void finish() = 0;
  // The CUDA device the destinations are on (device-cache entries of another device are misses).
  virtual int device() const = 0;
};

// A placer for `destinations` (device memory of one CUDA device, each the layout of the region of
// the same index), staging buffers large enough for a chunk of `max_chunk_bytes`, ordered on
// `cuda_stream` (null: a library stream). Error(unsupported) without CUDA; Error(invalid_argument)
// when a destination is not CUDA memory or they lie on different devices.
std::unique_ptr<DevicePlacer> make_device_placer(const std::vector<DestinationLayout>& destinations,
                                                 std::uint64_t max_chunk_bytes, const Settings& settings,
                                                 void* cuda_stream);

}  // namespace zarrdirect

// The decoded-chunk cache of one array handle (Array::set_cache_bytes).
//
// Entries are decoded chunks (or inner chunks of a shard) keyed by the stored key and the inner
// chunk's index in its shard (0 for an unsharded chunk). Each entry remembers the signature of
// the file it was decoded from (size, modification time in ns, inode, device), taken with fstat
// on the descriptor the bytes were read through; a lookup passes the signature of the file as it
// is now and an entry whose signature differs is dropped (counted as an invalidation). A stat
// costs microseconds against the milliseconds of a decode, and an atomic rename (every writer of
// zarrdirect and zarr-python replaces files so) always changes the inode, so a rewrite within one
// timestamp tick is caught too. Least recently used entries go first when the bytes held would
// pass the capacity. All calls are safe from several threads (one mutex; no call holds it while
// copying chunk data).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "store/file_store.hpp"
#include "store/store.hpp"
#include "zarrdirect/array.hpp"

namespace zarrdirect {

// What identifies one version of a stored file.
struct FileSignature {
  std::uint64_t size = 0;
  std::int64_t mtime_ns = 0;
  std::uint64_t inode = 0;
  std::uint64_t device = 0;
  friend bool operator==(const FileSignature&, const FileSignature&) = default;
};

// The signature of the open file `fd`; Error(io) naming `path` when fstat fails.
FileSignature file_signature(int fd, const std::string& path);
// The signature of an opened store value: its file's (above) for a local file; for a remote
// value only its size, since servers give no inode (remote arrays are treated as immutable but
// for their size: a replaced object of the same size keeps its cached chunks).
FileSignature signature_of(const StoreObject& object);

// How a decoded chunk's bytes are freed: delete[] (host memory), or `release` with the device
// that holds them (device memory of the device cache, freed by the CUDA layer that made it).
struct ChunkRelease {
  void (*release)(std::byte*, int) = nullptr;
  int device = -1;
  void operator()(std::byte* data) const {
    if (release) release(data, device);
    else delete[] data;
  }
};

// A decoded chunk: in host memory (not zero-filled on allocation: the decoder writes all of it),
// or, in a device cache (Array::set_device_cache_bytes), in the memory of CUDA device `device`.
struct DecodedChunk {
  explicit DecodedChunk(std::size_t nbytes);
  // Adopts `nbytes` of device memory at `device_data` on CUDA device `device`, freed by `release`.
  DecodedChunk(std::byte* device_data, std::size_t nbytes, int device, void (*release)(std::byte*, int));
  std::unique_ptr<std::byte[], ChunkRelease> data;
  std::size_t size = 0;
  int device = -1;  // -1: host memory
};
using DecodedChunkPtr = std::shared_ptr<const DecodedChunk>;

class ChunkCache {
 public:
  // 0 disables the cache and frees every entry; a smaller capacity evicts down to it.
  void set_capacity(std::size_t bytes);
  std::size_t capacity() const { return capacity_.load(std::memory_order_relaxed); }
  bool enabled() const { return capacity() > 0; }

  // The entry for (key, inner) when its signature is `now`; null on a miss (a stale entry is
  // dropped first). A hit makes the entry the most recently used.
  DecodedChunkPtr find(const std::string& key, std::uint32_t inner, const FileSignature& now);
  // Adds or replaces the entry; ignored when the cache is off or the chunk alone exceeds it.
  void insert(const std::string& key, std::uint32_t inner, const FileSignature& signature, DecodedChunkPtr chunk);
  // Drops every entry of `key` (all inner chunks of a shard).
  void invalidate(const std::string& key);
  void clear();

  CacheStats stats() const;

 private:
  struct Entry {
    std::string key;
    std::uint32_t inner = 0;
    FileSignature signature;
    DecodedChunkPtr chunk;
  };
  using Lru = std::list<Entry>;  // front: most recently used
  void erase_locked(Lru::iterator entry);
  void evict_locked(std::size_t limit);

  mutable std::mutex mutex_;
  std::atomic<std::size_t> capacity_{0};
  Lru lru_;
  std::unordered_map<std::string, std::unordered_map<std::uint32_t, Lru::iterator>> index_;
  std::size_t bytes_ = 0;
  std::size_t entries_ = 0;
  std::uint64_t hits_ = 0;
  std::uint64_t misses_ = 0;
  std::uint64_t evictions_ = 0;
  std::uint64_t invalidations_ = 0;
};

}  // namespace zarrdirect

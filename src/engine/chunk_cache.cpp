#include "engine/chunk_cache.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

namespace zarrdirect {

FileSignature signature_of(const StoreObject& object) {
  if (const StoreFile* file = object.local_file()) return file_signature(file->fd(), file->path());
  FileSignature signature;
  signature.size = object.size();
  return signature;
}

FileSignature file_signature(int fd, const std::string& path) {
  struct stat info {};
  if (::fstat(fd, &info) != 0)
    throw Error(ErrorKind::io, fmt::format("{}: fstat failed: {}", path, std::strerror(errno)));
  FileSignature signature;
  signature.size = static_cast<std::uint64_t>(info.st_size);
  signature.mtime_ns = static_cast<std::int64_t>(info.st_mtim.tv_sec) * 1'000'000'000 + info.st_mtim.tv_nsec;
  signature.inode = static_cast<std::uint64_t>(info.st_ino);
  signature.device = static_cast<std::uint64_t>(info.st_dev);
  return signature;
}

DecodedChunk::DecodedChunk(std::size_t nbytes) : data(new std::byte[std::max<std::size_t>(nbytes, 1)]), size(nbytes) {}

DecodedChunk::DecodedChunk(std::byte* device_data, std::size_t nbytes, int device_id, void (*release)(std::byte*, int))
    : data(device_data, ChunkRelease{release, device_id}), size(nbytes), device(device_id) {}

void ChunkCache::set_capacity(std::size_t bytes) {
  std::lock_guard lock(mutex_);
  capacity_.store(bytes, std::memory_order_relaxed);
  evict_locked(bytes);
  if (bytes == 0) hits_ = misses_ = evictions_ = invalidations_ = 0;
}

DecodedChunkPtr ChunkCache::find(const std::string& key, std::uint32_t inner, const FileSignature& now) {
  std::lock_guard lock(mutex_);
  auto outer = index_.find(key);
  if (outer != index_.end()) {
    auto found = outer->second.find(inner);
    if (found != outer->second.end()) {
      Lru::iterator entry = found->second;
      if (entry->signature == now) {
        lru_.splice(lru_.begin(), lru_, entry);
        ++hits_;
        return entry->chunk;
      }
      ++invalidations_;
      erase_locked(entry);
    }
  }
  ++misses_;
  return nullptr;
}

void ChunkCache::insert(const std::string& key, std::uint32_t inner, const FileSignature& signature,
                        DecodedChunkPtr chunk) {
  if (!chunk) return;
  std::lock_guard lock(mutex_);
  const std::size_t capacity = capacity_.load(std::memory_order_relaxed);
  if (chunk->size > capacity) return;
  auto& slots = index_[key];
  if (auto found = slots.find(inner); found != slots.end()) erase_locked(found->second);
  evict_locked(capacity - chunk->size);
  bytes_ += chunk->size;
  ++entries_;
  lru_.push_front(Entry{key, inner, signature, std::move(chunk)});
  index_[key][inner] = lru_.begin();
}

void ChunkCache::invalidate(const std::string& key) {
  std::lock_guard lock(mutex_);
  auto outer = index_.find(key);
  if (outer == index_.end()) return;
  std::vector<Lru::iterator> doomed;
  for (auto& [inner, entry] : outer->second) doomed.push_back(entry);
  for (auto entry : doomed) {
    ++invalidations_;
    erase_locked(entry);
  }
}

void ChunkCache::clear() {
  std::lock_guard lock(mutex_);
  evict_locked(0);
}

CacheStats ChunkCache::stats() const {
  std::lock_guard lock(mutex_);
  CacheStats stats;
  stats.capacity_bytes = capacity_.load(std::memory_order_relaxed);
  stats.bytes = bytes_;
  stats.entries = entries_;
  stats.hits = hits_;
  stats.misses = misses_;
  stats.evictions = evictions_;
  stats.invalidations = invalidations_;
  return stats;
}

void ChunkCache::erase_locked(Lru::iterator entry) {
  auto outer = index_.find(entry->key);
  if (outer != index_.end()) {
    outer->second.erase(entry->inner);
    if (outer->second.empty()) index_.erase(outer);
  }
  bytes_ -= entry->chunk->size;
  --entries_;
  lru_.erase(entry);
}

void ChunkCache::evict_locked(std::size_t limit) {
  while (bytes_ > limit && !lru_.empty()) {
    ++evictions_;
    erase_locked(std::prev(lru_.end()));
  }
}

}  // namespace zarrdirect

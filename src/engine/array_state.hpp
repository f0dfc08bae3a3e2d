// What an open Array holds: its metadata, its store and its prepared codec chain.
#pragma once

#include <filesystem>
#include <memory>

#include "codec/codec.hpp"
#include "codec/sharding.hpp"
#include "engine/chunk_cache.hpp"
#include "store/file_store.hpp"
#include "zarrdirect/array.hpp"

namespace zarrdirect {

struct Array::Impl {
  std::filesystem::path path;
  ArrayMetadata metadata;
  std::unique_ptr<Store> store;  // a FileStore or an HttpStore (open_store)
  codec::CodecChain chain;                              // prepared for one (outer) chunk
  const codec::ShardingCodec* sharding = nullptr;       // set when partial shard reads apply
  // Decoded chunks shared by the handle's reads (off until enabled); the pointer is const, the
  // cache is internally synchronized.
  std::unique_ptr<ChunkCache> cache = std::make_unique<ChunkCache>();
  // The same in GPU memory (Array::set_device_cache_bytes): entries are device chunks.
  std::unique_ptr<ChunkCache> device_cache = std::make_unique<ChunkCache>();

  // The store as a local folder, for writes; Error(unsupported) naming the URL for a remote one.
  const FileStore& file_store() const;

  static std::shared_ptr<const Impl> create(const std::filesystem::path& path, std::unique_ptr<Store> store,
                                            ArrayMetadata metadata);
  // The same with the store of a local folder (writes: never a URL).
  static std::shared_ptr<const Impl> create(const std::filesystem::path& path, ArrayMetadata metadata) {
    return create(path, open_store(path), std::move(metadata));
  }
};

}  // namespace zarrdirect

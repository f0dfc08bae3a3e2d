// The `sharding_indexed` codec (v3 sharding extension).
//
// A shard is one stored object holding a grid of inner chunks, each encoded by the inner codec
// chain, plus an index of (offset, nbytes) pairs, one per inner chunk, stored at the start or end
// of the shard and itself encoded by the index codecs (bytes + crc32c in practice). An inner chunk
// whose entry is (2^64-1, 2^64-1) is missing and reads as the fill value.
//
// Partial reads: the engine reads the index (index_nbytes() bytes at the start or end of the
// shard file), then only the inner chunks a region needs. decode() handles a whole shard in
// memory, used when the sharding codec is not alone in its chain or is itself an inner codec.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "codec/codec.hpp"

namespace zarrdirect::codec {

struct ShardIndexEntry {
  std::uint64_t offset = 0;
  std::uint64_t nbytes = 0;
  bool missing() const { return offset == ~std::uint64_t{0}; }
};

class ShardIndex {
 public:
  explicit ShardIndex(std::vector<ShardIndexEntry> entries) : entries_(std::move(entries)) {}
  const ShardIndexEntry& operator[](std::uint64_t inner_chunk) const { return entries_[inner_chunk]; }
  std::size_t size() const { return entries_.size(); }

 private:
  std::vector<ShardIndexEntry> entries_;
};

enum class IndexLocation { start, end };

class ShardingCodec final : public ArrayToBytesCodec {
 public:
  ShardingCodec(const nlohmann::json& configuration, const ArraySpec& shard_spec);
  std::string_view name() const override { return "sharding_indexed"; }

  const std::vector<std::uint64_t>& inner_chunk_shape() const { return inner_spec_.shape; }
  // Inner chunks along each dimension of a shard.
  const std::vector<std::uint64_t>& chunks_per_shard() const { return chunks_per_shard_; }
  std::uint64_t inner_chunk_count() const { return inner_chunk_count_; }
  const CodecChain& inner_chain() const { return inner_chain_; }
  IndexLocation index_location() const { return index_location_; }
  std::uint64_t index_nbytes() const { return index_nbytes_; }

  // Offset of the index in a shard of `shard_size` bytes (which must hold it).
  std::uint64_t index_offset(std::uint64_t shard_size) const;
  // Decodes and checks the encoded index of a shard of `shard_size` bytes. Entries that overflow,
  // run past the shard, overlap the index, are half-missing or exceed the inner chain's largest
  // encoding are Error(corrupt_data) naming the inner chunk and the field.
  ShardIndex decode_index(ByteSpan index_bytes, std::uint64_t shard_size) const;

  void decode(ByteSpan encoded, MutableByteSpan decoded) const override;
  void encode(ByteSpan decoded, ByteBuffer& encoded) const override;
  std::uint64_t max_encoded_size() const override;

 private:
  ArraySpec shard_spec_;
  ArraySpec inner_spec_;
  std::vector<std::uint64_t> chunks_per_shard_;
  std::uint64_t inner_chunk_count_ = 0;
  CodecChain inner_chain_;
  CodecChain index_chain_;
  IndexLocation index_location_ = IndexLocation::end;
  std::uint64_t index_nbytes_ = 0;
};

std::shared_ptr<ArrayToBytesCodec> make_sharding_codec(const nlohmann::json& configuration, const ArraySpec& decoded);

}  // namespace zarrdirect::codec

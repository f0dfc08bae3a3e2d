// The `sharding_indexed` codec (v3 sharding extension).
//
// A shard is one stored object holding a grid of inner chunks, each encoded by the inner codec
// chain, plus an index of (offset, nbytes) pairs, one per inner chunk, stored at the start or end
// of the shard and itself encoded by the index codecs (bytes + crc32c in practice). An inner chunk
// whose entry is (2^64-1, 2^64-1) is missing and reads as the fill value.
//
// Partial reads: the engine reads the index (index_nbytes() bytes at the start or end of the
// shard file), then only the inner chunks a region needs. When the index has no checksum (its
// codecs are just "bytes"), the engine reads only the index entries it needs: entry i is the 16
// bytes at index_offset() + 16 i. With a checksum the whole index must be read to verify it; the
// engine bounds it by its memory limit before allocating. decode() handles a whole shard in
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

// Checked (offset, nbytes) entries of inner chunks [first, first + size) of a shard, read from
// the stored bytes on demand (16 bytes an entry instead of a decoded copy beside them).
class ShardIndex {
 public:
  // `entries` holds 16 bytes per entry (two u64, byte-swapped when `swap` is set), possibly
  // followed by bytes that are not entries (a checksum).
  ShardIndex(ByteBuffer entries, std::uint64_t first, std::uint64_t count, bool swap)
      : bytes_(std::move(entries)), first_(first), count_(count), swap_(swap) {}
  // The entry of inner chunk `inner_chunk` (C-order linear index in the shard), which must be in
  // [first(), first() + size()).
  ShardIndexEntry operator[](std::uint64_t inner_chunk) const;
  std::uint64_t first() const { return first_; }
  std::size_t size() const { return static_cast<std::size_t>(count_); }

 private:
  ByteBuffer bytes_;
  std::uint64_t first_ = 0;
  std::uint64_t count_ = 0;
  bool swap_ = false;
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
  // The chain the index is stored with (index_codecs; bytes + crc32c when the metadata names none).
  const CodecChain& index_chain() const { return index_chain_; }
  IndexLocation index_location() const { return index_location_; }
  std::uint64_t index_nbytes() const { return index_nbytes_; }

  // Offset of the index in a shard of `shard_size` bytes (which must hold it).
  std::uint64_t index_offset(std::uint64_t shard_size) const;
  // Decodes and checks the whole encoded index of a shard of `shard_size` bytes (the checksum
  // too). Entries that overflow, run past the shard, overlap the index, are half-missing or exceed
  // the inner chain's largest encoding are Error(corrupt_data) naming the inner chunk and the
  // field. The rvalue form keeps `index_bytes` as the index's storage (no second copy) when the
  // index codecs are bytes [+ crc32c].
  ShardIndex decode_index(ByteSpan index_bytes, std::uint64_t shard_size) const;
  ShardIndex decode_index(ByteBuffer&& index_bytes, std::uint64_t shard_size) const;
  // Bytes of memory decode_index() holds at once for a whole index (the stored index, plus a
  // decoded copy and scratch when the index codecs need a real decode).
  std::uint64_t index_decode_nbytes() const;

  // True when the index codecs are just "bytes": no checksum, each entry readable on its own.
  bool index_entries_addressable() const { return index_direct_ && !index_checksum_; }
  // Where the stored entry of inner chunk `inner_chunk` starts in a shard of `shard_size` bytes
  // (meaningful when index_entries_addressable()).
  std::uint64_t index_entry_offset(std::uint64_t inner_chunk, std::uint64_t shard_size) const {
    return index_offset(shard_size) + 16 * inner_chunk;
  }
  // Checks the stored entries of inner chunks [first, first + stored_entries.size() / 16) read
  // from a shard of `shard_size` bytes (index_entries_addressable() only), as decode_index does.
  ShardIndex decode_index_entries(ByteBuffer&& stored_entries, std::uint64_t first, std::uint64_t shard_size) const;

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
  // The index codecs are bytes [+ crc32c]: entries are read from the stored bytes.
  bool index_direct_ = false;
  bool index_checksum_ = false;
  bool index_big_endian_ = false;

  void check_entries(const ShardIndex& index, std::uint64_t shard_size) const;
};

std::shared_ptr<ArrayToBytesCodec> make_sharding_codec(const nlohmann::json& configuration, const ArraySpec& decoded);

}  // namespace zarrdirect::codec

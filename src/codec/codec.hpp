// The codec model of Zarr v3, used for v2 arrays too.
//
// A chunk is encoded by a chain: zero or more array->array codecs (transpose, v2 filters), exactly
// one array->bytes codec (bytes, sharding_indexed), zero or more bytes->bytes codecs (compressors,
// crc32c). Decoding runs the chain backwards. Each codec is *prepared* once per array for the
// chunk spec it will see, so per-chunk work does no parsing and no allocation beyond the
// caller's reusable scratch buffers.
//
// In memory, arrays between codecs are C-order and in native byte order; only the `bytes` codec
// deals with the stored byte order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "zarrdirect/dtype.hpp"
#include "zarrdirect/error.hpp"

namespace zarrdirect::codec {

using ByteSpan = std::span<const std::byte>;
using MutableByteSpan = std::span<std::byte>;
// A growable buffer reused across chunks by one thread; decode() resizes it, which allocates
// only while it grows.
using ByteBuffer = std::vector<std::byte>;

// The array a codec sees: the chunk's shape and element type.
struct ArraySpec {
  std::vector<std::uint64_t> shape;
  DataType dtype;
  std::vector<std::byte> fill_value;  // one element, native order (sharding fills missing chunks)
  std::uint64_t num_elements() const;
  std::uint64_t nbytes() const;  // overflow-checked when the spec is made
};

class ArrayToArrayCodec {
 public:
  virtual ~ArrayToArrayCodec() = default;
  virtual std::string_view name() const = 0;
  // The spec of the encoded array this codec produces from its decoded spec.
  virtual const ArraySpec& encoded_spec() const = 0;
  // `encoded` holds encoded_spec().nbytes() bytes; `decoded` the decoded spec's nbytes.
  virtual void decode(ByteSpan encoded, MutableByteSpan decoded) const = 0;
  virtual void encode(ByteSpan decoded, MutableByteSpan encoded) const = 0;
};

class ArrayToBytesCodec {
 public:
  virtual ~ArrayToBytesCodec() = default;
  virtual std::string_view name() const = 0;
  // Fills `decoded` (exactly the decoded spec's nbytes) from the stored bytes.
  virtual void decode(ByteSpan encoded, MutableByteSpan decoded) const = 0;
  virtual void encode(ByteSpan decoded, ByteBuffer& encoded) const = 0;
  // The most bytes a valid encoding of one chunk can take: a bound for bytes->bytes decoders.
  virtual std::uint64_t max_encoded_size() const = 0;
  // True when the stored bytes *are* the decoded array (bytes codec in native order).
  virtual bool is_identity() const { return false; }
  // True when decode() accepts `encoded` and `decoded` as the same memory (the bytes codec: at
  // most a byte swap in place). The chain then lets the codec before it decode straight into the
  // destination.
  virtual bool decodes_in_place() const { return false; }
};

class BytesToBytesCodec {
 public:
  virtual ~BytesToBytesCodec() = default;
  virtual std::string_view name() const = 0;
  // Decodes `encoded` into `decoded` (resized to fit). Producing, or a header claiming, more than
  // `max_decoded_size` bytes is Error(corrupt_data): decompression bombs stop here, before any
  // allocation of what they claim.
  virtual void decode(ByteSpan encoded, ByteBuffer& decoded, std::uint64_t max_decoded_size) const = 0;
  // Decodes into `decoded` when the encoding says it decodes to exactly decoded.size() bytes,
  // saving the chain a copy of every chunk; returns false, having written nothing, when it says
  // otherwise or cannot tell in advance (decode() then handles the chunk, errors included).
  virtual bool decode_exact(ByteSpan /*encoded*/, MutableByteSpan /*decoded*/) const { return false; }
  // True when decode_exact() takes every chunk that decodes to the size asked (declining or
  // throwing only on chunks the chain would refuse anyway): the chain then needs no scratch copy
  // for it, which its memory estimate (CodecChain::decode_scratch_nbytes) counts on.
  virtual bool always_decodes_exactly() const { return false; }
  // Decodes at least the first `needed` bytes of what `encoded` decodes to into `decoded` (room
  // for the whole chunk), stopping early where the format allows: a read that needs the start of
  // a chunk pays for about that part. Bytes past `needed` may be written too. False, having
  // promised nothing about `decoded`, when the codec cannot, or not for this encoding (decode()
  // then takes the whole chunk). Error(corrupt_data) when the encoding is damaged before
  // `needed` bytes are decoded, or decodes to fewer.
  virtual bool decode_prefix(ByteSpan /*encoded*/, MutableByteSpan /*decoded*/, std::size_t /*needed*/) const {
    return false;
  }
  virtual void encode(ByteSpan decoded, ByteBuffer& encoded) const = 0;
  // The most bytes encode() can produce from `decoded_size` bytes (for bounds going up a chain).
  virtual std::uint64_t max_encoded_size(std::uint64_t decoded_size) const = 0;
};

// Scratch buffers one thread reuses across chunks.
struct Scratch {
  ByteBuffer a;
  ByteBuffer b;
  ByteBuffer c;
};

class ShardingCodec;

// A prepared chain for one chunk spec.
class CodecChain {
 public:
  // Builds the chain from a v3 `codecs` list (v2 metadata is converted to this form on parsing).
  // `where` names the metadata file in errors.
  static CodecChain create(const nlohmann::json& codecs, const ArraySpec& decoded,
                           const std::string& where);

  const ArraySpec& decoded_spec() const { return decoded_; }

  // Decodes one stored chunk into `decoded` (decoded_spec().nbytes(), C order, native order).
  void decode(ByteSpan encoded, MutableByteSpan decoded, Scratch& scratch) const;
  // At least the first `needed` bytes of what decode() would write into `decoded` (room for the
  // whole chunk), decoding no further than the chain's last codec needs to
  // (BytesToBytesCodec::decode_prefix): true when done; false, having promised nothing, when the
  // chain cannot (array->array codecs, a byte swap, a compressor that decodes whole chunks only),
  // and the caller decodes the whole chunk instead.
  bool decode_prefix(ByteSpan encoded, MutableByteSpan decoded, std::size_t needed, Scratch& scratch) const;
  // Encodes one chunk (C order, native order); used by tests, fuzz seeds and the sample writer.
  ByteBuffer encode(ByteSpan decoded) const;

  // True when stored bytes equal decoded bytes: the reader may place file bytes directly.
  bool is_identity() const;
  // The most bytes a valid stored chunk can take.
  std::uint64_t max_encoded_size() const;
  // The most scratch bytes decode() holds for one valid chunk (beyond `encoded` and `decoded`):
  // what a reader must budget per thread besides the chunk and its stored bytes.
  std::uint64_t decode_scratch_nbytes() const;
  // The sharding codec when the chain is exactly [sharding_indexed] (partial reads possible).
  const ShardingCodec* sole_sharding_codec() const;

  const std::vector<std::unique_ptr<ArrayToArrayCodec>>& array_to_array() const { return a2a_; }
  const ArrayToBytesCodec& array_to_bytes() const { return *a2b_; }
  const std::vector<std::unique_ptr<BytesToBytesCodec>>& bytes_to_bytes() const { return b2b_; }

 private:
  ArraySpec decoded_;
  std::vector<std::unique_ptr<ArrayToArrayCodec>> a2a_;
  std::shared_ptr<ArrayToBytesCodec> a2b_;
  std::vector<std::unique_ptr<BytesToBytesCodec>> b2b_;
};

// Helpers for codec implementations.
[[noreturn]] void throw_corrupt(std::string_view codec, const std::string& message);
[[noreturn]] void throw_bad_config(std::string_view codec, const std::string& message);

// Reads a configuration member, failing with the codec and field named when it is missing or of
// the wrong type.
const nlohmann::json& require_member(const nlohmann::json& config, std::string_view codec,
                                     std::string_view field);
std::int64_t require_integer(const nlohmann::json& config, std::string_view codec,
                             std::string_view field);
std::string require_string(const nlohmann::json& config, std::string_view codec,
                           std::string_view field);
// True when `config` sets `field`: present and not null (numcodecs writes unset parameters as null).
bool has_setting(const nlohmann::json& config, std::string_view field);

}  // namespace zarrdirect::codec

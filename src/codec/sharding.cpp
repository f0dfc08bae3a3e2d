#include "codec/sharding.hpp"

#include <bit>
#include <cstring>

#include <fmt/format.h>

#include "codec/crc32c.hpp"
#include "util/box_copy.hpp"
#include "util/checked_math.hpp"
#include "util/geometry.hpp"

namespace zarrdirect::codec {
namespace {

constexpr std::uint64_t kMissing = ~std::uint64_t{0};

std::string describe_coords(std::uint64_t linear, const std::vector<std::uint64_t>& grid) {
  Extents coords = linear_to_coords(linear, to_extents(grid), grid.size());
  return fmt::format("[{}]", fmt::join(std::span(coords.data(), grid.size()), ", "));
}

std::uint64_t load_u64(const std::byte* p, bool swap) {
  std::uint64_t value;
  std::memcpy(&value, p, 8);
  return swap ? __builtin_bswap64(value) : value;
}

std::uint32_t load_le32(const std::byte* p) {
  std::uint32_t value = 0;
  for (int i = 3; i >= 0; --i) value = (value << 8) | std::to_integer<std::uint32_t>(p[i]);
  return value;
}

constexpr bool kNativeBigEndian = std::endian::native == std::endian::big;

}  // namespace

ShardIndexEntry ShardIndex::operator[](std::uint64_t inner_chunk) const {
  const std::byte* p = bytes_.data() + 16 * (inner_chunk - first_);
  return {load_u64(p, swap_), load_u64(p + 8, swap_)};
}

ShardingCodec::ShardingCodec(const nlohmann::json& configuration, const ArraySpec& shard_spec) : shard_spec_(shard_spec) {
  const auto& shape_json = require_member(configuration, name(), "chunk_shape");
  if (!shape_json.is_array() || shape_json.size() != shard_spec.shape.size())
    throw_bad_config(name(), fmt::format("\"chunk_shape\" must list {} extents", shard_spec.shape.size()));
  inner_spec_.dtype = shard_spec.dtype;
  inner_spec_.fill_value = shard_spec.fill_value;
  for (std::size_t d = 0; d < shape_json.size(); ++d) {
    const auto& extent = shape_json[d];
    if (!extent.is_number_integer() || (!extent.is_number_unsigned() && extent.get<std::int64_t>() <= 0) ||
        extent.get<std::uint64_t>() == 0)
      throw_bad_config(name(), "\"chunk_shape\" extents must be positive integers");
    auto inner = shape_json[d].get<std::uint64_t>();
    if (shard_spec.shape[d] % inner != 0)
      throw_bad_config(name(), fmt::format("inner chunk extent {} does not divide the shard extent {} (dimension {})",
                                           inner, shard_spec.shape[d], d));
    inner_spec_.shape.push_back(inner);
    chunks_per_shard_.push_back(shard_spec.shape[d] / inner);
  }
  auto count = checked_product(chunks_per_shard_);
  if (!count || *count > (std::uint64_t{1} << 32)) throw_bad_config(name(), "too many inner chunks per shard");
  inner_chunk_count_ = *count;

  inner_chain_ = CodecChain::create(require_member(configuration, name(), "codecs"), inner_spec_, "sharding_indexed.codecs");

  ArraySpec index_spec;
  index_spec.shape = chunks_per_shard_;
  index_spec.shape.push_back(2);
  index_spec.dtype = DataType{ScalarKind::unsigned_int, 8};
  index_spec.fill_value.assign(8, std::byte{0xff});
  nlohmann::json index_codecs = configuration.contains("index_codecs")
                                    ? configuration["index_codecs"]
                                    : nlohmann::json::parse(R"([{"name":"bytes","configuration":{"endian":"little"}},{"name":"crc32c"}])");
  // Checked here, before any entry is read: a number or a nameless entry is a metadata error.
  if (!index_codecs.is_array()) throw_bad_config(name(), "\"index_codecs\" must be a list");
  for (const auto& codec : index_codecs) {
    auto name_field = codec.is_object() ? codec.find("name") : codec.end();
    const nlohmann::json* codec_name_json = codec.is_string() ? &codec : name_field != codec.end() ? &*name_field : nullptr;
    if (!codec_name_json || !codec_name_json->is_string())
      throw_bad_config(name(), fmt::format("\"index_codecs\" entry {} has no name", codec.dump()));
    auto codec_name = codec_name_json->get<std::string>();
    // The index must have a size known in advance to be found at the start or end of a shard.
    if (codec_name != "bytes" && codec_name != "crc32c" && codec_name != "transpose")
      throw Error(ErrorKind::unsupported,
                  fmt::format("codec sharding_indexed: index codec {} has no fixed size", codec_name));
  }
  nlohmann::json normalized = nlohmann::json::array();
  for (const auto& codec : index_codecs)
    normalized.push_back(codec.is_string() ? nlohmann::json{{"name", codec}} : codec);
  index_chain_ = CodecChain::create(normalized, index_spec, "sharding_indexed.index_codecs");
  index_nbytes_ = index_chain_.max_encoded_size();
  // The usual index codecs, bytes [+ crc32c]: the stored index is the entries themselves.
  const bool bytes_first = !normalized.empty() && normalized[0].value("name", "") == "bytes";
  if (bytes_first && (normalized.size() == 1 || (normalized.size() == 2 && normalized[1].value("name", "") == "crc32c"))) {
    index_direct_ = true;
    index_checksum_ = normalized.size() == 2;
    const auto config = normalized[0].value("configuration", nlohmann::json::object());
    index_big_endian_ = config.is_object() && config.value("endian", "little") == "big";
  }

  if (auto it = configuration.find("index_location"); it != configuration.end()) {
    auto where = it->is_string() ? it->get<std::string>() : std::string();
    if (where == "start") index_location_ = IndexLocation::start;
    else if (where == "end") index_location_ = IndexLocation::end;
    else throw_bad_config(name(), "\"index_location\" must be \"start\" or \"end\"");
  }
}

std::uint64_t ShardingCodec::index_offset(std::uint64_t shard_size) const {
  return index_location_ == IndexLocation::start ? 0 : shard_size - index_nbytes_;
}

std::uint64_t ShardingCodec::index_decode_nbytes() const {
  // The general path holds the stored index, the decoded entries and a scratch copy.
  if (index_direct_) return index_nbytes_;
  auto total = checked_mul(index_nbytes_, 3);
  return total ? *total : ~std::uint64_t{0};
}

ShardIndex ShardingCodec::decode_index(ByteSpan index_bytes, std::uint64_t shard_size) const {
  return decode_index(ByteBuffer(index_bytes.begin(), index_bytes.end()), shard_size);
}

ShardIndex ShardingCodec::decode_index(ByteBuffer&& index_bytes, std::uint64_t shard_size) const {
  if (index_bytes.size() != index_nbytes_)
    throw_corrupt(name(), fmt::format("index is {} bytes, expected {}", index_bytes.size(), index_nbytes_));
  const bool swap = index_big_endian_ != kNativeBigEndian;
  if (index_direct_) {
    if (index_checksum_) {
      // As the crc32c codec checks it, without copying the index.
      const std::size_t body = index_bytes.size() - 4;
      const std::uint32_t stored = load_le32(index_bytes.data() + body);
      const std::uint32_t computed = crc32c(ByteSpan(index_bytes).first(body));
      if (stored != computed)
        throw Error(ErrorKind::corrupt_data,
                    fmt::format("shard index: codec crc32c: checksum mismatch: stored {:08x}, computed {:08x}", stored,
                                computed));
    }
    ShardIndex index(std::move(index_bytes), 0, inner_chunk_count_, swap);
    check_entries(index, shard_size);
    return index;
  }
  ByteBuffer raw(static_cast<std::size_t>(inner_chunk_count_ * 16));
  Scratch scratch;
  try {
    index_chain_.decode(index_bytes, raw, scratch);
  } catch (const Error& e) {
    throw e.with_context("shard index");
  }
  index_bytes = ByteBuffer();  // the decoded copy replaces it
  ShardIndex index(std::move(raw), 0, inner_chunk_count_, false);
  check_entries(index, shard_size);
  return index;
}

ShardIndex ShardingCodec::decode_index_entries(ByteBuffer&& stored_entries, std::uint64_t first,
                                               std::uint64_t shard_size) const {
  if (!index_entries_addressable())
    throw Error(ErrorKind::invalid_argument, "sharding_indexed: index entries are not readable one by one");
  const std::uint64_t count = stored_entries.size() / 16;
  if (stored_entries.size() % 16 != 0 || first > inner_chunk_count_ || count > inner_chunk_count_ - first)
    throw Error(ErrorKind::invalid_argument, "sharding_indexed: index entries out of range");
  ShardIndex index(std::move(stored_entries), first, count, index_big_endian_ != kNativeBigEndian);
  check_entries(index, shard_size);
  return index;
}

void ShardingCodec::check_entries(const ShardIndex& index, std::uint64_t shard_size) const {
  const std::uint64_t index_begin = index_offset(shard_size);
  const std::uint64_t index_end = index_begin + index_nbytes_;
  const std::uint64_t largest_chunk = inner_chain_.max_encoded_size();
  for (std::uint64_t i = index.first(); i < index.first() + index.size(); ++i) {
    const ShardIndexEntry entry = index[i];
    auto fail = [&](const std::string& why) {
      throw_corrupt(name(), fmt::format("shard index entry for inner chunk {} (offset {}, nbytes {}) {}",
                                        describe_coords(i, chunks_per_shard_), entry.offset, entry.nbytes, why));
    };
    if (entry.offset == kMissing || entry.nbytes == kMissing) {
      if (entry.offset != entry.nbytes) fail("is half-missing: both fields must be 2^64-1");
      continue;
    }
    auto end = checked_add(entry.offset, entry.nbytes);
    if (!end) fail("overflows 64 bits");
    if (*end > shard_size) fail(fmt::format("runs past the end of the {} byte shard", shard_size));
    if (entry.offset < index_end && *end > index_begin && entry.nbytes > 0) fail("overlaps the shard index");
    if (entry.nbytes > largest_chunk)
      fail(fmt::format("is larger than any valid encoding of the inner chunk ({} bytes)", largest_chunk));
  }
}

void ShardingCodec::decode(ByteSpan encoded, MutableByteSpan decoded) const {
  if (encoded.size() < index_nbytes_)
    throw_corrupt(name(), fmt::format("shard is {} bytes, shorter than its {} byte index", encoded.size(), index_nbytes_));
  ShardIndex index = decode_index(encoded.subspan(index_offset(encoded.size()), index_nbytes_), encoded.size());
  DestinationLayout shard = DestinationLayout::contiguous(decoded.data(), shard_spec_.shape, shard_spec_.dtype.size);
  ByteBuffer inner(inner_spec_.nbytes());
  Scratch scratch;
  ChunkBox box;
  box.rank = inner_spec_.shape.size();
  for (std::size_t d = 0; d < box.rank; ++d) box.chunk_shape[d] = box.extent[d] = inner_spec_.shape[d];
  const Extents grid = to_extents(chunks_per_shard_);
  for (std::uint64_t i = 0; i < inner_chunk_count_; ++i) {
    const Extents coords = linear_to_coords(i, grid, box.rank);
    for (std::size_t d = 0; d < box.rank; ++d) box.offset_in_dest[d] = coords[d] * inner_spec_.shape[d];
    const ShardIndexEntry entry = index[i];
    if (entry.missing()) {
      fill_box_on_host(inner_spec_.fill_value.data(), box, shard);
      continue;
    }
    try {
      inner_chain_.decode(encoded.subspan(entry.offset, entry.nbytes), inner, scratch);
    } catch (const Error& e) {
      throw e.with_context(fmt::format("inner chunk {}", describe_coords(i, chunks_per_shard_)));
    }
    copy_box_to_host(inner.data(), box, shard);
  }
}

void ShardingCodec::encode(ByteSpan decoded, ByteBuffer& encoded) const {
  // Inner chunks in C order, each encoded by the inner chain; the index where configured.
  std::vector<std::uint64_t> raw;
  ByteBuffer body;
  ByteBuffer inner(inner_spec_.nbytes());
  const std::size_t rank = inner_spec_.shape.size();
  const std::uint64_t base = index_location_ == IndexLocation::start ? index_nbytes_ : 0;
  const Extents grid = to_extents(chunks_per_shard_);
  // Inner chunk i is the box of the shard (as a C-order "chunk") at its origin, gathered into a
  // contiguous inner buffer.
  DestinationLayout inner_layout = DestinationLayout::contiguous(inner.data(), inner_spec_.shape, shard_spec_.dtype.size);
  ChunkBox box;
  box.rank = rank;
  for (std::size_t d = 0; d < rank; ++d) {
    box.chunk_shape[d] = shard_spec_.shape[d];
    box.extent[d] = inner_spec_.shape[d];
  }
  for (std::uint64_t i = 0; i < inner_chunk_count_; ++i) {
    const Extents coords = linear_to_coords(i, grid, rank);
    for (std::size_t d = 0; d < rank; ++d) box.offset_in_chunk[d] = coords[d] * inner_spec_.shape[d];
    copy_box_to_host(decoded.data(), box, inner_layout);
    ByteBuffer chunk = inner_chain_.encode(inner);
    raw.push_back(base + body.size());
    raw.push_back(chunk.size());
    body.insert(body.end(), chunk.begin(), chunk.end());
  }
  ByteBuffer index = index_chain_.encode(std::as_bytes(std::span(raw)));
  encoded.clear();
  if (index_location_ == IndexLocation::start) encoded.insert(encoded.end(), index.begin(), index.end());
  encoded.insert(encoded.end(), body.begin(), body.end());
  if (index_location_ == IndexLocation::end) encoded.insert(encoded.end(), index.begin(), index.end());
}

std::uint64_t ShardingCodec::max_encoded_size() const {
  auto chunks = checked_mul(inner_chain_.max_encoded_size(), inner_chunk_count_);
  auto total = chunks ? checked_add(*chunks, index_nbytes_) : std::nullopt;
  return total ? *total : ~std::uint64_t{0};
}

std::shared_ptr<ArrayToBytesCodec> make_sharding_codec(const nlohmann::json& configuration, const ArraySpec& decoded) {
  return std::make_shared<ShardingCodec>(configuration, decoded);
}

}  // namespace zarrdirect::codec

#include "codec/sharding.hpp"

#include <cstring>

#include <fmt/format.h>

#include "engine/layout.hpp"
#include "util/checked_math.hpp"

namespace zarrdirect::codec {
namespace {

constexpr std::uint64_t kMissing = ~std::uint64_t{0};

std::string describe_coords(std::uint64_t linear, const std::vector<std::uint64_t>& grid) {
  std::vector<std::uint64_t> coords(grid.size());
  for (std::size_t d = grid.size(); d-- > 0;) {
    coords[d] = linear % grid[d];
    linear /= grid[d];
  }
  return fmt::format("[{}]", fmt::join(coords, ", "));
}

}  // namespace

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

ShardIndex ShardingCodec::decode_index(ByteSpan index_bytes, std::uint64_t shard_size) const {
  if (index_bytes.size() != index_nbytes_)
    throw_corrupt(name(), fmt::format("index is {} bytes, expected {}", index_bytes.size(), index_nbytes_));
  std::vector<std::uint64_t> raw(inner_chunk_count_ * 2);
  Scratch scratch;
  try {
    index_chain_.decode(index_bytes, std::as_writable_bytes(std::span(raw)), scratch);
  } catch (const Error& e) {
    throw e.with_context("shard index");
  }
  const std::uint64_t index_begin = index_offset(shard_size);
  const std::uint64_t index_end = index_begin + index_nbytes_;
  const std::uint64_t largest_chunk = inner_chain_.max_encoded_size();
  std::vector<ShardIndexEntry> entries(inner_chunk_count_);
  for (std::uint64_t i = 0; i < inner_chunk_count_; ++i) {
    ShardIndexEntry entry{raw[2 * i], raw[2 * i + 1]};
    auto fail = [&](const std::string& why) {
      throw_corrupt(name(), fmt::format("shard index entry for inner chunk {} (offset {}, nbytes {}) {}",
                                        describe_coords(i, chunks_per_shard_), entry.offset, entry.nbytes, why));
    };
    if (entry.offset == kMissing || entry.nbytes == kMissing) {
      if (entry.offset != entry.nbytes) fail("is half-missing: both fields must be 2^64-1");
      entries[i] = entry;
      continue;
    }
    auto end = checked_add(entry.offset, entry.nbytes);
    if (!end) fail("overflows 64 bits");
    if (*end > shard_size) fail(fmt::format("runs past the end of the {} byte shard", shard_size));
    if (entry.offset < index_end && *end > index_begin && entry.nbytes > 0) fail("overlaps the shard index");
    if (entry.nbytes > largest_chunk)
      fail(fmt::format("is larger than any valid encoding of the inner chunk ({} bytes)", largest_chunk));
    entries[i] = entry;
  }
  return ShardIndex(std::move(entries));
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
  for (std::uint64_t i = 0; i < inner_chunk_count_; ++i) {
    std::uint64_t linear = i;
    for (std::size_t d = box.rank; d-- > 0;) {
      box.offset_in_dest[d] = (linear % chunks_per_shard_[d]) * inner_spec_.shape[d];
      linear /= chunks_per_shard_[d];
    }
    const auto& entry = index[i];
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
  const std::size_t element = shard_spec_.dtype.size;
  const std::uint64_t base = index_location_ == IndexLocation::start ? index_nbytes_ : 0;
  for (std::uint64_t i = 0; i < inner_chunk_count_; ++i) {
    // Gather inner chunk i from the shard array.
    std::vector<std::uint64_t> origin(rank);
    std::uint64_t linear = i;
    for (std::size_t d = rank; d-- > 0;) {
      origin[d] = (linear % chunks_per_shard_[d]) * inner_spec_.shape[d];
      linear /= chunks_per_shard_[d];
    }
    std::uint64_t count = inner_spec_.num_elements();
    for (std::uint64_t e = 0; e < count; ++e) {
      std::uint64_t rest = e, shard_offset = 0, stride = 1;
      for (std::size_t d = rank; d-- > 0;) {
        shard_offset += (origin[d] + rest % inner_spec_.shape[d]) * stride;
        rest /= inner_spec_.shape[d];
        stride *= shard_spec_.shape[d];
      }
      std::memcpy(inner.data() + e * element, decoded.data() + shard_offset * element, element);
    }
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

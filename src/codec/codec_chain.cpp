#include <algorithm>

#include <fmt/format.h>

#include "codec/codec.hpp"
#include "codec/registry.hpp"
#include "codec/sharding.hpp"
#include "util/checked_math.hpp"

namespace zarrdirect::codec {

std::uint64_t ArraySpec::num_elements() const {
  auto n = checked_product(shape);
  if (!n) throw Error(ErrorKind::invalid_metadata, "chunk shape: element count overflows 64 bits");
  return *n;
}

std::uint64_t ArraySpec::nbytes() const {
  auto n = checked_mul(num_elements(), dtype.size);
  if (!n) throw Error(ErrorKind::invalid_metadata, "chunk shape: byte count overflows 64 bits");
  return *n;
}

void throw_corrupt(std::string_view codec, const std::string& message) {
  throw Error(ErrorKind::corrupt_data, fmt::format("codec {}: {}", codec, message));
}

void throw_bad_config(std::string_view codec, const std::string& message) {
  throw Error(ErrorKind::invalid_metadata, fmt::format("codec {} configuration: {}", codec, message));
}

const nlohmann::json& require_member(const nlohmann::json& config, std::string_view codec, std::string_view field) {
  auto it = config.find(field);
  if (it == config.end()) throw_bad_config(codec, fmt::format("\"{}\" is missing", field));
  return *it;
}

std::int64_t require_integer(const nlohmann::json& config, std::string_view codec, std::string_view field) {
  const auto& value = require_member(config, codec, field);
  if (!value.is_number_integer()) throw_bad_config(codec, fmt::format("\"{}\" must be an integer", field));
  // Parsed text holds non-negative integers unsigned: past INT64_MAX they would wrap to negatives.
  if (value.is_number_unsigned() && value.get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX))
    throw_bad_config(codec, fmt::format("\"{}\" is {}, out of range", field, value.dump()));
  return value.get<std::int64_t>();
}

std::string require_string(const nlohmann::json& config, std::string_view codec, std::string_view field) {
  const auto& value = require_member(config, codec, field);
  if (!value.is_string()) throw_bad_config(codec, fmt::format("\"{}\" must be a string", field));
  return value.get<std::string>();
}

bool has_setting(const nlohmann::json& config, std::string_view field) {
  if (!config.is_object()) return false;
  auto it = config.find(field);
  return it != config.end() && !it->is_null();
}

CodecChain CodecChain::create(const nlohmann::json& codecs, const ArraySpec& decoded, const std::string& where) {
  CodecChain chain;
  chain.decoded_ = decoded;
  try {
    if (!codecs.is_array()) throw_bad_config("chain", "codecs must be a list");
    ArraySpec current = decoded;
    for (const auto& entry : codecs) {
      if (!entry.is_object() || !entry.contains("name") || !entry["name"].is_string())
        throw_bad_config("chain", fmt::format("entry {} has no name", entry.dump()));
      auto name = entry["name"].get<std::string>();
      // Names go into messages (and the registry's): one with control characters is refused here,
      // before it can put a second line into the CLI's one-line error.
      if (std::any_of(name.begin(), name.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; }))
        throw_bad_config("chain", fmt::format("codec name {} holds control characters", entry["name"].dump()));
      nlohmann::json configuration = entry.value("configuration", nlohmann::json::object());
      if (!configuration.is_object()) throw_bad_config(name, "configuration must be an object");
      switch (codec_kind(name, chain.a2b_ != nullptr)) {
        case CodecKind::array_to_array:
          if (chain.a2b_) throw_bad_config(name, "an array->array codec cannot follow the array->bytes codec");
          chain.a2a_.push_back(make_array_to_array(name, configuration, current));
          current = chain.a2a_.back()->encoded_spec();
          break;
        case CodecKind::array_to_bytes:
          if (chain.a2b_) throw_bad_config(name, "a chain has exactly one array->bytes codec");
          chain.a2b_ = make_array_to_bytes(name, configuration, current);
          break;
        case CodecKind::bytes_to_bytes:
          if (!chain.a2b_) throw_bad_config(name, "a bytes->bytes codec must follow the array->bytes codec");
          chain.b2b_.push_back(make_bytes_to_bytes(name, configuration, current));
          break;
      }
    }
    if (!chain.a2b_) throw_bad_config("chain", "no array->bytes codec (such as \"bytes\")");
  } catch (const Error& e) {
    throw e.with_context(where);
  }
  return chain;
}

bool CodecChain::is_identity() const { return a2a_.empty() && b2b_.empty() && a2b_->is_identity(); }

std::uint64_t CodecChain::max_encoded_size() const {
  std::uint64_t bound = a2b_->max_encoded_size();
  for (const auto& codec : b2b_) bound = codec->max_encoded_size(bound);
  return bound;
}

std::uint64_t CodecChain::decode_scratch_nbytes() const {
  // Mirrors decode(): the largest size each of scratch.a, .b and .c reaches. Sums saturate.
  auto add = [](std::uint64_t x, std::uint64_t y) { return checked_add(x, y).value_or(~std::uint64_t{0}); };
  std::uint64_t a = 0, b = 0, c = 0;
  if (!b2b_.empty()) {
    std::uint64_t bound = a2b_->max_encoded_size();  // bounds[0]
    const std::uint64_t first_bound = bound;
    for (std::size_t i = 1; i < b2b_.size(); ++i) {
      bound = b2b_[i - 1]->max_encoded_size(bound);  // bounds[i], decoded into buffers[i % 2]
      (i % 2 == 0 ? a : b) = std::max(i % 2 == 0 ? a : b, bound);
    }
    const bool exact = a2a_.empty() && a2b_->decodes_in_place() && b2b_[0]->always_decodes_exactly();
    if (!exact) a = std::max(a, first_bound);
  }
  if (!a2a_.empty()) {
    c = a2a_.back()->encoded_spec().nbytes();
    for (std::size_t i = 0; i + 1 < a2a_.size(); ++i) {
      a = std::max(a, a2a_[i]->encoded_spec().nbytes());
      b = std::max(b, a2a_[i]->encoded_spec().nbytes());
    }
  }
  return add(add(a, b), c);
}

const ShardingCodec* CodecChain::sole_sharding_codec() const {
  if (!a2a_.empty() || !b2b_.empty()) return nullptr;
  return dynamic_cast<const ShardingCodec*>(a2b_.get());
}

void CodecChain::decode(ByteSpan encoded, MutableByteSpan decoded, Scratch& scratch) const {
  // Bytes->bytes codecs, last first. bounds[i] is the most the input of b2b_[i] may hold.
  ByteSpan bytes = encoded;
  if (!b2b_.empty()) {
    std::uint64_t bounds[16];
    std::size_t levels = std::min<std::size_t>(b2b_.size(), 16);
    if (b2b_.size() > 16) throw_bad_config("chain", "more than 16 bytes->bytes codecs");
    bounds[0] = a2b_->max_encoded_size();
    for (std::size_t i = 1; i < levels; ++i) bounds[i] = b2b_[i - 1]->max_encoded_size(bounds[i - 1]);
    ByteBuffer* buffers[2] = {&scratch.a, &scratch.b};
    for (std::size_t i = levels; i-- > 1;) {
      ByteBuffer& out = *buffers[i % 2];
      b2b_[i]->decode(bytes, out, bounds[i]);
      bytes = ByteSpan(out.data(), out.size());
    }
    // The common case (a compressor before "bytes"): the compressor writes the chunk straight
    // into `decoded`, and the bytes codec swaps it there if it must; no copy through scratch.
    if (a2a_.empty() && a2b_->decodes_in_place() && b2b_[0]->decode_exact(bytes, decoded)) {
      a2b_->decode(decoded, decoded);
      return;
    }
    b2b_[0]->decode(bytes, scratch.a, bounds[0]);
    bytes = ByteSpan(scratch.a.data(), scratch.a.size());
  }
  if (a2a_.empty()) {
    a2b_->decode(bytes, decoded);
    return;
  }
  // Array->bytes into scratch.c, then array->array codecs last first, the final one into `decoded`.
  scratch.c.resize(a2a_.back()->encoded_spec().nbytes());
  a2b_->decode(bytes, scratch.c);
  ByteBuffer* source = &scratch.c;
  for (std::size_t i = a2a_.size(); i-- > 0;) {
    if (i == 0) {
      a2a_[0]->decode(*source, decoded);
      break;
    }
    ByteBuffer* target = source == &scratch.c ? &scratch.a : (source == &scratch.a ? &scratch.b : &scratch.a);
    target->resize(a2a_[i - 1]->encoded_spec().nbytes());
    a2a_[i]->decode(*source, *target);
    source = target;
  }
}

bool CodecChain::decode_prefix(ByteSpan encoded, MutableByteSpan decoded, std::size_t needed, Scratch& scratch) const {
  const std::uint64_t whole = decoded_.nbytes();
  if (decoded.size() != whole || needed > whole)
    throw Error(ErrorKind::invalid_argument,
                fmt::format("decode_prefix: {} bytes asked of a {} byte chunk, into {} bytes", needed, whole,
                            decoded.size()));
  // Only a compressor right before a native-order `bytes` codec stops early: anything between
  // them (a transpose, a filter, a byte swap) needs the whole chunk.
  if (!a2a_.empty() || !a2b_->is_identity() || b2b_.empty() || b2b_.size() > 16) return false;
  ByteSpan bytes = encoded;
  std::uint64_t bounds[16];
  bounds[0] = a2b_->max_encoded_size();
  for (std::size_t i = 1; i < b2b_.size(); ++i) bounds[i] = b2b_[i - 1]->max_encoded_size(bounds[i - 1]);
  ByteBuffer* buffers[2] = {&scratch.a, &scratch.b};
  // The codecs after the compressor (a checksum) take the whole stored chunk: they are cheap, and
  // they verify what the compressor reads.
  for (std::size_t i = b2b_.size(); i-- > 1;) {
    ByteBuffer& out = *buffers[i % 2];
    b2b_[i]->decode(bytes, out, bounds[i]);
    bytes = ByteSpan(out.data(), out.size());
  }
  return b2b_[0]->decode_prefix(bytes, decoded, needed);
}

ByteBuffer CodecChain::encode(ByteSpan decoded) const {
  ByteBuffer current(decoded.begin(), decoded.end());
  for (const auto& codec : a2a_) {
    ByteBuffer next(codec->encoded_spec().nbytes());
    codec->encode(current, next);
    current.swap(next);
  }
  ByteBuffer bytes;
  a2b_->encode(current, bytes);
  for (const auto& codec : b2b_) {
    ByteBuffer next;
    codec->encode(bytes, next);
    bytes.swap(next);
  }
  return bytes;
}

}  // namespace zarrdirect::codec

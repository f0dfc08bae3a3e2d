// Helpers for the codec unit tests (header only: the library glob takes every .cpp that is not a
// test, and this must not end up in the library).
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "codec/codec.hpp"
#include "codec/numpy_scalar.hpp"
#include "codec/registry.hpp"

namespace zarrdirect::codec::test {

inline DataType dtype(std::string_view v3_name) { return parse_v3_data_type(v3_name); }

inline ArraySpec make_spec(std::vector<std::uint64_t> shape, const DataType& type) {
  ArraySpec spec;
  spec.shape = std::move(shape);
  spec.dtype = type;
  spec.fill_value.assign(type.size, std::byte{0});
  return spec;
}

// Values of `spec`'s type that look like real data: a smooth ramp with some noise, so compressors
// have something to find, negative numbers for signed types, fractions for floats.
inline std::vector<std::byte> sample_data(const ArraySpec& spec, unsigned seed = 1) {
  std::vector<std::byte> data(spec.nbytes());
  const auto count = static_cast<std::size_t>(spec.num_elements());
  visit_element_type(spec.dtype, "test", [&]<class T>(T) {
    std::uint32_t state = seed * 2654435761u + 1;
    for (std::size_t i = 0; i < count; ++i) {
      state = state * 1664525u + 1013904223u;
      double value = std::sin(static_cast<double>(i) * 0.05) * 40.0 + static_cast<double>(state >> 28);
      if constexpr (std::is_unsigned_v<T> || std::is_same_v<T, Bool8>) value = std::fabs(value);
      if constexpr (is_float_element<T>) value += 0.25;
      store_element(data.data(), i, numpy_cast<T>(value));
    }
  });
  return data;
}

inline CodecChain make_chain(const std::string& codecs_json, const ArraySpec& spec) {
  return CodecChain::create(nlohmann::json::parse(codecs_json), spec, "test");
}

inline std::vector<std::byte> decode_chunk(const CodecChain& chain, ByteSpan encoded) {
  std::vector<std::byte> decoded(chain.decoded_spec().nbytes());
  Scratch scratch;
  chain.decode(encoded, decoded, scratch);
  return decoded;
}

// Encodes `data` through the chain and decodes it back; the result must equal `data`.
inline void expect_round_trip(const std::string& codecs_json, const ArraySpec& spec,
                              const std::vector<std::byte>& data) {
  SCOPED_TRACE(codecs_json + " " + spec.dtype.name());
  CodecChain chain = make_chain(codecs_json, spec);
  ByteBuffer encoded = chain.encode(data);
  EXPECT_LE(encoded.size(), chain.max_encoded_size());
  EXPECT_EQ(decode_chunk(chain, encoded), data);
}

// The bytes->bytes codec `name` alone, prepared for `spec`.
inline std::unique_ptr<BytesToBytesCodec> make_compressor(std::string_view name, const std::string& configuration,
                                                          const ArraySpec& spec) {
  return make_bytes_to_bytes(name, nlohmann::json::parse(configuration), spec);
}

// A chain of the little-endian bytes codec and the bytes->bytes codec `name` with `configuration`.
inline std::string bytes_then(std::string_view name, const std::string& configuration) {
  return R"([{"name":"bytes","configuration":{"endian":"little"}},{"name":")" + std::string(name) +
         R"(","configuration":)" + configuration + "}]";
}

// Two streams of the codec `name`, one after the other, decode as their concatenated data (what
// Python's bz2 and lzma modules, which numcodecs calls, do).
inline void expect_concatenated_streams_decode(std::string_view name, const std::string& configuration) {
  SCOPED_TRACE(std::string(name) + " " + configuration);
  const ArraySpec spec = make_spec({600}, dtype("uint8"));
  const auto data = sample_data(spec);
  auto codec = make_compressor(name, configuration, spec);
  ByteBuffer first, second;
  codec->encode(ByteSpan(data).first(250), first);
  codec->encode(ByteSpan(data).subspan(250), second);
  first.insert(first.end(), second.begin(), second.end());
  ByteBuffer out;
  codec->decode(first, out, 600);
  EXPECT_EQ(out, data);
}

// Runs `action`, which must throw Error of `kind` whose message contains every one of `parts`.
inline void expect_error(ErrorKind kind, std::vector<std::string> parts, const std::function<void()>& action) {
  try {
    action();
    ADD_FAILURE() << "no error thrown; expected " << to_string(kind);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), kind) << e.what();
    for (const auto& part : parts) EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
  }
}

inline std::vector<std::byte> to_bytes(std::string_view text) {
  std::vector<std::byte> bytes(text.size());
  std::memcpy(bytes.data(), text.data(), text.size());
  return bytes;
}

template <class T>
std::vector<std::byte> bytes_of(const std::vector<T>& values) {
  std::vector<std::byte> bytes(values.size() * sizeof(T));
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

template <class T>
std::vector<T> values_of(const std::vector<std::byte>& bytes) {
  std::vector<T> values(bytes.size() / sizeof(T));
  std::memcpy(values.data(), bytes.data(), values.size() * sizeof(T));
  return values;
}

// A buffer of zeros: compresses to almost nothing, the material of decompression bombs.
inline std::vector<std::byte> zeros(std::size_t size) { return std::vector<std::byte>(size, std::byte{0}); }

}  // namespace zarrdirect::codec::test

#include <gtest/gtest.h>

#include <numeric>

#include "codec/codec.hpp"
#include "codec/registry.hpp"
#include "codec/sharding.hpp"

namespace zarrdirect::codec {
namespace {

using nlohmann::json;

ArraySpec spec(std::vector<std::uint64_t> shape, DataType type = {ScalarKind::signed_int, 4}) {
  return {std::move(shape), type, std::vector<std::byte>(type.size)};
}

json bytes(const char* endian = "little") { return {{"name", "bytes"}, {"configuration", {{"endian", endian}}}}; }

std::string error_of(const json& codecs, ErrorKind kind, const ArraySpec& s = spec({4, 4})) {
  try {
    CodecChain::create(codecs, s, "arr/zarr.json");
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), kind) << e.what();
    EXPECT_NE(std::string(e.what()).find("arr/zarr.json"), std::string::npos) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "accepted " << codecs.dump();
  return {};
}

TEST(CodecChain, StructureErrorsNameTheFile) {
  EXPECT_NE(error_of(json::object(), ErrorKind::invalid_metadata).find("list"), std::string::npos);
  EXPECT_NE(error_of(json::array(), ErrorKind::invalid_metadata).find("array->bytes"), std::string::npos);
  EXPECT_NE(error_of(json::array({{{"name", "crc32c"}}}), ErrorKind::invalid_metadata).find("must follow"),
            std::string::npos);
  EXPECT_NE(error_of(json::array({bytes(), bytes()}), ErrorKind::invalid_metadata).find("exactly one"),
            std::string::npos);
  json transpose = {{"name", "transpose"}, {"configuration", {{"order", {1, 0}}}}};
  EXPECT_NE(error_of(json::array({bytes(), transpose}), ErrorKind::invalid_metadata).find("cannot follow"),
            std::string::npos);
  EXPECT_NE(error_of(json::array({{{"configuration", json::object()}}}), ErrorKind::invalid_metadata).find("no name"),
            std::string::npos);
  EXPECT_NE(error_of(json::array({5}), ErrorKind::invalid_metadata).find("no name"), std::string::npos);
  EXPECT_NE(error_of(json::array({{{"name", "bytes"}, {"configuration", 3}}}), ErrorKind::invalid_metadata)
                .find("configuration"),
            std::string::npos);
}

TEST(CodecChain, UnknownAndRefusedCodecs) {
  std::string message = error_of(json::array({bytes(), {{"name", "no-such-codec"}}}), ErrorKind::unsupported);
  EXPECT_NE(message.find("unsupported codec no-such-codec"), std::string::npos) << message;
  for (const char* name : {"numcodecs.pickle", "numcodecs.vlen-utf8", "numcodecs.json2", "numcodecs.msgpack2",
                           "numcodecs.categorize"}) {
    message = error_of(json::array({{{"name", name}}, bytes()}), ErrorKind::unsupported);
    EXPECT_NE(message.find("refused"), std::string::npos) << message;
    EXPECT_NE(message.find(name), std::string::npos) << message;
  }
  EXPECT_THROW(codec_kind("nope"), Error);
  EXPECT_EQ(codec_kind("bytes"), CodecKind::array_to_bytes);
  EXPECT_EQ(codec_kind("transpose"), CodecKind::array_to_array);
  EXPECT_EQ(codec_kind("crc32c"), CodecKind::bytes_to_bytes);
  EXPECT_EQ(codec_kind("sharding_indexed"), CodecKind::array_to_bytes);
  auto names = supported_codec_names();
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
  for (const char* name : {"bytes", "crc32c", "sharding_indexed", "transpose"})
    EXPECT_NE(std::find(names.begin(), names.end(), name), names.end()) << name;
}

TEST(CodecChain, IdentityAndBounds) {
  auto identity = CodecChain::create(json::array({bytes(native_byte_order() == ByteOrder::little ? "little" : "big")}),
                                     spec({4, 4}), "x");
  EXPECT_TRUE(identity.is_identity());
  EXPECT_EQ(identity.max_encoded_size(), 64u);
  EXPECT_EQ(identity.sole_sharding_codec(), nullptr);
  auto swapped = CodecChain::create(json::array({bytes(native_byte_order() == ByteOrder::little ? "big" : "little")}),
                                    spec({4, 4}), "x");
  EXPECT_FALSE(swapped.is_identity());
  auto checked = CodecChain::create(json::array({bytes(), {{"name", "crc32c"}}, {{"name", "crc32c"}}}), spec({4, 4}), "x");
  EXPECT_FALSE(checked.is_identity());
  EXPECT_EQ(checked.max_encoded_size(), 72u);
  EXPECT_EQ(checked.bytes_to_bytes().size(), 2u);
  EXPECT_EQ(checked.array_to_bytes().name(), "bytes");
  EXPECT_EQ(checked.decoded_spec().shape, (std::vector<std::uint64_t>{4, 4}));
}

TEST(CodecChain, FullChainRoundTrips) {
  // transpose -> transpose -> bytes (big) -> crc32c -> crc32c, on a 3-d chunk.
  json codecs = json::array({{{"name", "transpose"}, {"configuration", {{"order", {2, 0, 1}}}}},
                             {{"name", "transpose"}, {"configuration", {{"order", {1, 2, 0}}}}},
                             {{"name", "transpose"}, {"configuration", {{"order", {0, 2, 1}}}}}, bytes("big"),
                             {{"name", "crc32c"}}, {{"name", "crc32c"}}});
  auto chain = CodecChain::create(codecs, spec({2, 3, 5}), "x");
  EXPECT_EQ(chain.array_to_array().size(), 3u);
  std::vector<std::int32_t> values(30);
  std::iota(values.begin(), values.end(), -15);
  ByteBuffer encoded = chain.encode(std::as_bytes(std::span(values)));
  EXPECT_EQ(encoded.size(), 128u);
  std::vector<std::int32_t> decoded(30);
  Scratch scratch;
  for (int repeat = 0; repeat < 2; ++repeat) {  // scratch buffers are reused
    std::fill(decoded.begin(), decoded.end(), 0);
    chain.decode(encoded, std::as_writable_bytes(std::span(decoded)), scratch);
    EXPECT_EQ(decoded, values);
  }
  // Any corruption is caught by the checksum and named.
  encoded[5] ^= std::byte{4};
  try {
    chain.decode(encoded, std::as_writable_bytes(std::span(decoded)), scratch);
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::corrupt_data);
    EXPECT_NE(std::string(e.what()).find("crc32c"), std::string::npos);
  }
}

TEST(CodecChain, TruncatedAndOverlongInputsAreCorrupt) {
  auto chain = CodecChain::create(json::array({bytes(), {{"name", "crc32c"}}}), spec({2, 2}), "x");
  std::vector<std::int32_t> values{1, 2, 3, 4};
  ByteBuffer encoded = chain.encode(std::as_bytes(std::span(values)));
  std::vector<std::int32_t> decoded(4);
  Scratch scratch;
  for (std::size_t size : {std::size_t{0}, std::size_t{3}, encoded.size() - 1}) {
    ByteBuffer cut(encoded.begin(), encoded.begin() + static_cast<std::ptrdiff_t>(size));
    EXPECT_THROW(chain.decode(cut, std::as_writable_bytes(std::span(decoded)), scratch), Error) << size;
  }
  ByteBuffer longer = encoded;
  longer.insert(longer.begin(), std::byte{0});
  EXPECT_THROW(chain.decode(longer, std::as_writable_bytes(std::span(decoded)), scratch), Error);
}

TEST(ArraySpec, SizesAreOverflowChecked) {
  ArraySpec s{{std::uint64_t{1} << 40, std::uint64_t{1} << 30}, {ScalarKind::unsigned_int, 8}, {}};
  EXPECT_THROW(s.num_elements(), Error);
  ArraySpec t{{std::uint64_t{1} << 31, std::uint64_t{1} << 31}, {ScalarKind::unsigned_int, 8}, {}};
  EXPECT_EQ(t.num_elements(), std::uint64_t{1} << 62);
  EXPECT_THROW(t.nbytes(), Error);
}

}  // namespace
}  // namespace zarrdirect::codec

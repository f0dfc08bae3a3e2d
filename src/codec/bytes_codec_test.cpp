#include "codec/bytes_codec.hpp"

#include <gtest/gtest.h>

namespace zarrdirect::codec {
namespace {

using nlohmann::json;

ArraySpec spec(std::vector<std::uint64_t> shape, DataType type) {
  return {std::move(shape), type, std::vector<std::byte>(type.size)};
}

TEST(BytesCodec, LittleAndBigEndian) {
  const DataType u2{ScalarKind::unsigned_int, 2};
  std::vector<std::uint16_t> values{0x0102, 0x0304, 0x0506};
  auto native = std::as_bytes(std::span(values));
  for (const char* endian : {"little", "big"}) {
    SCOPED_TRACE(endian);
    auto codec = make_bytes_codec({{"endian", endian}}, spec({3}, u2));
    ByteBuffer encoded;
    codec->encode(native, encoded);
    ASSERT_EQ(encoded.size(), 6u);
    bool big = std::string_view(endian) == "big";
    EXPECT_EQ(encoded[0], std::byte(big ? 0x01 : 0x02));
    EXPECT_EQ(encoded[1], std::byte(big ? 0x02 : 0x01));
    EXPECT_EQ(codec->is_identity(), (big ? ByteOrder::big : ByteOrder::little) == native_byte_order());
    std::vector<std::uint16_t> back(3);
    codec->decode(encoded, std::as_writable_bytes(std::span(back)));
    EXPECT_EQ(back, values);
    EXPECT_EQ(codec->max_encoded_size(), 6u);
  }
}

TEST(BytesCodec, ComplexSwapsEachHalf) {
  const DataType c8{ScalarKind::complex, 8};
  auto codec = make_bytes_codec({{"endian", "big"}}, spec({1}, c8));
  float parts[2] = {1.0f, -2.0f};
  ByteBuffer encoded;
  codec->encode(std::as_bytes(std::span(parts)), encoded);
  EXPECT_EQ(encoded[0], std::byte{0x3f});  // 1.0f big-endian: 3f 80 00 00
  EXPECT_EQ(encoded[4], std::byte{0xc0});  // -2.0f: c0 00 00 00
  float back[2];
  codec->decode(encoded, std::as_writable_bytes(std::span(back)));
  EXPECT_EQ(back[0], 1.0f);
  EXPECT_EQ(back[1], -2.0f);
}

TEST(BytesCodec, DecodesInPlace) {
  const DataType u4{ScalarKind::unsigned_int, 4};
  auto codec = make_bytes_codec({{"endian", native_byte_order() == ByteOrder::little ? "big" : "little"}}, spec({2}, u4));
  std::vector<std::uint32_t> values{0x01020304u, 0x05060708u};
  auto span = std::as_writable_bytes(std::span(values));
  codec->decode(span, span);
  EXPECT_EQ(values[0], 0x04030201u);
  EXPECT_EQ(values[1], 0x08070605u);
}

TEST(BytesCodec, SingleBytesNeedNoEndian) {
  auto codec = make_bytes_codec(json::object(), spec({4}, {ScalarKind::unsigned_int, 1}));
  EXPECT_TRUE(codec->is_identity());
  auto big = make_bytes_codec({{"endian", "big"}}, spec({4}, {ScalarKind::boolean, 1}));
  EXPECT_TRUE(big->is_identity());
}

void expect_bad_config(const json& config, const DataType& type, std::string_view fragment) {
  try {
    make_bytes_codec(config, spec({2}, type));
    ADD_FAILURE() << config.dump();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::invalid_metadata);
    EXPECT_NE(std::string(e.what()).find("bytes"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST(BytesCodec, BadConfigurations) {
  const DataType u2{ScalarKind::unsigned_int, 2};
  expect_bad_config(json::object(), u2, "endian");
  expect_bad_config({{"endian", "middle"}}, u2, "middle");
  expect_bad_config({{"endian", 1}}, u2, "endian");
  expect_bad_config({{"endian", nullptr}}, u2, "endian");
}

TEST(BytesCodec, WrongSizesAreCorrupt) {
  auto codec = make_bytes_codec({{"endian", "little"}}, spec({2, 3}, {ScalarKind::signed_int, 2}));
  std::vector<std::byte> out(12);
  for (std::size_t size : {0, 11, 13, 24}) {
    std::vector<std::byte> in(size);
    try {
      codec->decode(in, out);
      ADD_FAILURE() << size;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::corrupt_data);
      EXPECT_NE(std::string(e.what()).find("codec bytes"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("12"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace zarrdirect::codec

#include "codec/crc32c.hpp"

#include <gtest/gtest.h>

#include <random>
#include <string_view>

namespace zarrdirect::codec {
namespace {

ByteSpan bytes(std::string_view text) { return std::as_bytes(std::span(text.data(), text.size())); }

// Bit at a time, straight from the definition (reflected polynomial 0x82F63B78).
std::uint32_t reference_crc32c(ByteSpan data) {
  std::uint32_t crc = ~0u;
  for (std::byte b : data) {
    crc ^= static_cast<std::uint8_t>(b);
    for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ ((crc & 1u) ? 0x82f63b78u : 0u);
  }
  return ~crc;
}

TEST(Crc32c, KnownVectors) {
  EXPECT_EQ(crc32c(bytes("123456789")), 0xe3069283u);
  EXPECT_EQ(crc32c(bytes("")), 0u);
  EXPECT_EQ(crc32c(bytes("a")), 0xc1d04330u);
  // RFC 3720 (iSCSI) B.4: 32 bytes of zeros, of 0xff, ascending and descending.
  std::vector<std::byte> zeros(32, std::byte{0}), ones(32, std::byte{0xff}), up(32), down(32);
  for (int i = 0; i < 32; ++i) {
    up[i] = std::byte(i);
    down[i] = std::byte(31 - i);
  }
  EXPECT_EQ(crc32c(zeros), 0x8a9136aau);
  EXPECT_EQ(crc32c(ones), 0x62a8ab43u);
  EXPECT_EQ(crc32c(up), 0x46dd794eu);
  EXPECT_EQ(crc32c(down), 0x113fdb5cu);
}

TEST(Crc32c, MatchesTheDefinitionAtEveryLengthAndAlignment) {
  std::mt19937 rng(42);
  std::vector<std::byte> data(4096 + 16);
  for (auto& b : data) b = static_cast<std::byte>(rng());
  for (std::size_t offset = 0; offset < 9; ++offset)
    for (std::size_t length : {0, 1, 7, 8, 9, 15, 16, 17, 63, 64, 65, 1000, 4096}) {
      ByteSpan piece = ByteSpan(data).subspan(offset, length);
      ASSERT_EQ(crc32c(piece), reference_crc32c(piece)) << offset << " " << length;
    }
}

TEST(Crc32c, Continues) {
  auto whole = bytes("hello, checksummed world");
  std::uint32_t first = crc32c(whole.first(10));
  EXPECT_EQ(crc32c(whole.subspan(10), first), crc32c(whole));
}

TEST(Crc32cCodec, AppendsLittleEndianAndVerifies) {
  auto codec = make_crc32c_codec(nlohmann::json::object(), ArraySpec{});
  EXPECT_EQ(codec->name(), "crc32c");
  EXPECT_EQ(codec->max_encoded_size(100), 104u);
  ByteBuffer encoded;
  codec->encode(bytes("123456789"), encoded);
  ASSERT_EQ(encoded.size(), 13u);
  EXPECT_EQ(encoded[9], std::byte{0x83});
  EXPECT_EQ(encoded[10], std::byte{0x92});
  EXPECT_EQ(encoded[11], std::byte{0x06});
  EXPECT_EQ(encoded[12], std::byte{0xe3});
  ByteBuffer decoded;
  codec->decode(encoded, decoded, 9);
  EXPECT_EQ(decoded, ByteBuffer(bytes("123456789").begin(), bytes("123456789").end()));
  // An empty body still carries a checksum.
  codec->encode({}, encoded);
  EXPECT_EQ(encoded.size(), 4u);
  codec->decode(encoded, decoded, 0);
  EXPECT_TRUE(decoded.empty());
}

void expect_corrupt(const BytesToBytesCodec& codec, const ByteBuffer& encoded, std::uint64_t max,
                    std::string_view fragment) {
  ByteBuffer decoded;
  try {
    codec.decode(encoded, decoded, max);
    ADD_FAILURE() << "decoded";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::corrupt_data);
    EXPECT_NE(std::string(e.what()).find("crc32c"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST(Crc32cCodec, MismatchesAndShortInputAreCorrupt) {
  auto codec = make_crc32c_codec(nlohmann::json::object(), ArraySpec{});
  ByteBuffer encoded;
  codec->encode(bytes("123456789"), encoded);
  for (std::size_t i = 0; i < encoded.size(); ++i) {
    ByteBuffer flipped = encoded;
    flipped[i] ^= std::byte{0x10};
    expect_corrupt(*codec, flipped, 9, "mismatch");
  }
  expect_corrupt(*codec, ByteBuffer(3), 100, "4 byte");
  expect_corrupt(*codec, ByteBuffer(), 100, "4 byte");
  expect_corrupt(*codec, encoded, 8, "more than");  // body larger than the chain allows
}

}  // namespace
}  // namespace zarrdirect::codec

#include "codec/checksum32_codec.hpp"

#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "codec/codec_test_support.hpp"

namespace zarrdirect::codec {
namespace {

using namespace test;

std::uint32_t stored_le32(const ByteBuffer& bytes, std::size_t at) {
  std::uint32_t value = 0;
  for (int i = 0; i < 4; ++i) value |= static_cast<std::uint32_t>(bytes[at + i]) << (8 * i);
  return value;
}

TEST(Checksum32Codec, StoresTheKnownChecksumsWhereNumcodecsDoes) {
  const ArraySpec spec = make_spec({9}, dtype("uint8"));
  const auto data = to_bytes("123456789");
  // name, configuration, the checksum of "123456789", at the start
  const std::vector<std::tuple<std::string, std::string, std::uint32_t, bool>> cases = {
      {"numcodecs.crc32", "{}", 0xcbf43926u, true},
      {"numcodecs.crc32", R"({"location":"end"})", 0xcbf43926u, false},
      {"numcodecs.adler32", "{}", 0x091e01deu, true},
      {"numcodecs.crc32c", "{}", 0xe3069283u, false},
      {"numcodecs.crc32c", R"({"location":"start"})", 0xe3069283u, true},
      {"numcodecs.fletcher32", "{}", fletcher32(data), false},
  };
  for (const auto& [name, configuration, checksum, at_start] : cases) {
    SCOPED_TRACE(name + " " + configuration);
    auto codec = make_compressor(name, configuration, spec);
    ByteBuffer encoded;
    codec->encode(data, encoded);
    ASSERT_EQ(encoded.size(), data.size() + 4);
    EXPECT_EQ(stored_le32(encoded, at_start ? 0 : data.size()), checksum);
    EXPECT_TRUE(std::equal(data.begin(), data.end(), encoded.begin() + (at_start ? 4 : 0)));
    ByteBuffer decoded;
    codec->decode(encoded, decoded, 9);
    EXPECT_EQ(decoded, data);
    ByteBuffer exact(9);
    EXPECT_TRUE(codec->decode_exact(encoded, exact));
    EXPECT_EQ(exact, data);
    ByteBuffer wrong_size(8);
    EXPECT_FALSE(codec->decode_exact(encoded, wrong_size));
  }
}

TEST(Checksum32Codec, Fletcher32MatchesThePublishedValues) {
  // Little-endian 16-bit words, an odd last byte padded with zero, sums modulo 65535.
  EXPECT_EQ(fletcher32(to_bytes("abcde")), 0xf04fc729u);
  EXPECT_EQ(fletcher32(to_bytes("abcdef")), 0x56502d2au);
  EXPECT_EQ(fletcher32(to_bytes("abcdefgh")), 0xebe19591u);
  EXPECT_EQ(fletcher32({}), 0u);
  // Long inputs cross the 64-bit sums' reduction blocks: the same as reducing every word.
  ByteBuffer ones(300'000, std::byte{0xff});
  std::uint32_t sum1 = 0, sum2 = 0;
  for (std::size_t w = 0; w < ones.size() / 2; ++w) {
    sum1 = (sum1 + 0xffffu) % 0xffffu;
    sum2 = (sum2 + sum1) % 0xffffu;
  }
  EXPECT_EQ(fletcher32(ones), (sum2 << 16) | sum1);
}

TEST(Checksum32Codec, JenkinsLookup3MatchesLookup3cSelfTest) {
  // The values lookup3.c's own driver prints for these inputs.
  EXPECT_EQ(jenkins_lookup3({}, 0), 0xdeadbeefu);
  EXPECT_EQ(jenkins_lookup3(to_bytes("Four score and seven years ago"), 0), 0x17770551u);
  EXPECT_EQ(jenkins_lookup3(to_bytes("Four score and seven years ago"), 1), 0xcd628161u);
  const ArraySpec spec = make_spec({30}, dtype("uint8"));
  auto codec = make_compressor("numcodecs.jenkins_lookup3", R"({"initval":1,"prefix":null})", spec);
  ByteBuffer encoded;
  codec->encode(to_bytes("Four score and seven years ago"), encoded);
  EXPECT_EQ(stored_le32(encoded, 30), 0xcd628161u);
  expect_error(ErrorKind::unsupported, {"numcodecs.jenkins_lookup3", "prefix"},
               [&] { make_compressor("numcodecs.jenkins_lookup3", R"({"prefix":[1,2]})", spec); });
  expect_error(ErrorKind::invalid_metadata, {"numcodecs.jenkins_lookup3", "initval"},
               [&] { make_compressor("numcodecs.jenkins_lookup3", R"({"initval":-1})", spec); });
}

TEST(Checksum32Codec, RoundTripsInChainsAfterTheBytesCodec) {
  for (const char* type : {"uint8", "int16", "float64"}) {
    const ArraySpec spec = make_spec({7, 13}, dtype(type));
    const auto data = sample_data(spec);
    for (const char* codec : {"numcodecs.crc32", "numcodecs.adler32", "numcodecs.crc32c", "numcodecs.fletcher32",
                              "numcodecs.jenkins_lookup3"})
      expect_round_trip(std::string(R"([{"name":"bytes","configuration":{"endian":"big"}},{"name":")") + codec +
                            R"("},{"name":"numcodecs.zlib","configuration":{"level":1}}])",
                        spec, data);
  }
}

TEST(Checksum32Codec, DamageIsCorruptDataNamingTheCodec) {
  const ArraySpec spec = make_spec({64}, dtype("uint8"));
  const auto data = sample_data(spec);
  for (const char* name : {"numcodecs.crc32", "numcodecs.adler32", "numcodecs.crc32c", "numcodecs.fletcher32",
                           "numcodecs.jenkins_lookup3"}) {
    SCOPED_TRACE(name);
    auto codec = make_compressor(name, "{}", spec);
    ByteBuffer encoded;
    codec->encode(data, encoded);
    for (std::size_t at : {std::size_t{0}, std::size_t{2}, std::size_t{30}, encoded.size() - 1}) {
      ByteBuffer damaged = encoded;
      damaged[at] ^= std::byte{0x10};
      ByteBuffer out;
      expect_error(ErrorKind::corrupt_data, {name, "checksum mismatch"}, [&] { codec->decode(damaged, out, 64); });
      ByteBuffer exact(64);
      expect_error(ErrorKind::corrupt_data, {name, "checksum mismatch"}, [&] { codec->decode_exact(damaged, exact); });
    }
    ByteBuffer out;
    const ByteBuffer short_input(3);
    expect_error(ErrorKind::corrupt_data, {name, "3 bytes cannot hold"}, [&] { codec->decode(short_input, out, 64); });
    expect_error(ErrorKind::corrupt_data, {name, "more than the 10 expected"}, [&] { codec->decode(encoded, out, 10); });
  }
}

TEST(Checksum32Codec, LocationsOtherThanStartAndEndAreRefused) {
  const ArraySpec spec = make_spec({4}, dtype("uint8"));
  expect_error(ErrorKind::invalid_metadata, {"numcodecs.crc32", "location", "middle"},
               [&] { make_compressor("numcodecs.crc32", R"({"location":"middle"})", spec); });
  expect_error(ErrorKind::invalid_metadata, {"numcodecs.adler32", "location"},
               [&] { make_compressor("numcodecs.adler32", R"({"location":3})", spec); });
}

}  // namespace
}  // namespace zarrdirect::codec

#include <gtest/gtest.h>

#include <numbers>

#include "codec/codec_test_support.hpp"

namespace zarrdirect::codec {
namespace {

using namespace test;

std::unique_ptr<ArrayToArrayCodec> make_bitround(int keepbits, const ArraySpec& spec) {
  return make_array_to_array("numcodecs.bitround", {{"keepbits", keepbits}}, spec);
}

template <class Bits, class Value>
std::vector<Bits> rounded_bits(int keepbits, const std::vector<Value>& values, const DataType& type) {
  ArraySpec spec = make_spec({values.size()}, type);
  ByteBuffer encoded(spec.nbytes());
  make_bitround(keepbits, spec)->encode(bytes_of(values), encoded);
  return values_of<Bits>(encoded);
}

TEST(BitRoundFilter, MatchesNumcodecs) {
  // Expected bit patterns from numcodecs.BitRound(keepbits) on these float32 values.
  const std::vector<float> values{std::numbers::pi_v<float>, -std::numbers::e_v<float>, 1.0f / 3.0f, 1e-3f, 65504.0f};
  const std::vector<std::pair<int, std::vector<std::uint32_t>>> cases = {
      {0, {1082130432, 3221225472, 1048576000, 981467136, 1199570944}},
      {3, {1078984704, 3224371200, 1051721728, 981467136, 1199570944}},
      {10, {1078525952, 3224240128, 1051369472, 981671936, 1199562752}},
      {22, {1078530012, 3224238164, 1051372204, 981668464, 1199562752}},
      {23, {1078530011, 3224238164, 1051372203, 981668463, 1199562752}},
  };
  for (const auto& [keepbits, expected] : cases)
    EXPECT_EQ((rounded_bits<std::uint32_t>(keepbits, values, dtype("float32"))), expected) << "keepbits " << keepbits;

  EXPECT_EQ((rounded_bits<std::uint64_t>(7, std::vector<double>{std::numbers::pi, -std::numbers::e, 1.0 / 3.0},
                                         dtype("float64"))),
            (std::vector<std::uint64_t>{4614254477589872640u, 13836676536398249984u, 4599688147545096192u}));
  // float16 pi, -e, 1/3 as NumPy rounds them.
  EXPECT_EQ((rounded_bits<std::uint16_t>(4, std::vector<std::uint16_t>{0x4248, 0xc170, 0x3555}, dtype("float16"))),
            (std::vector<std::uint16_t>{16960, 49536, 13632}));
}

TEST(BitRoundFilter, TiesRoundToEven) {
  const std::vector<std::uint32_t> values{0x3f800004, 0x3f80000c, 0x3f800005};
  EXPECT_EQ((rounded_bits<std::uint32_t>(20, values, dtype("float32"))),
            (std::vector<std::uint32_t>{1065353216, 1065353232, 1065353224}));
}

TEST(BitRoundFilter, DecodingChangesNothing) {
  ArraySpec spec = make_spec({20, 20}, dtype("float32"));
  auto codec = make_bitround(8, spec);
  CodecChain chain = make_chain(R"([{"name":"numcodecs.bitround","configuration":{"keepbits":8}},
                                    {"name":"bytes","configuration":{"endian":"little"}},
                                    {"name":"zstd","configuration":{"level":3,"checksum":false}}])",
                                spec);
  auto data = sample_data(spec);
  ByteBuffer rounded(spec.nbytes());
  codec->encode(data, rounded);
  EXPECT_EQ(decode_chunk(chain, chain.encode(data)), rounded);
  expect_round_trip(R"([{"name":"numcodecs.bitround","configuration":{"keepbits":8}},
                        {"name":"bytes","configuration":{"endian":"little"}}])",
                    spec, rounded);
}

TEST(BitRoundFilter, BadConfigurationIsInvalidMetadata) {
  expect_error(ErrorKind::invalid_metadata, {"numcodecs.bitround", "keepbits", "0 to 23"},
               [&] { make_bitround(24, make_spec({4}, dtype("float32"))); });
  expect_error(ErrorKind::invalid_metadata, {"numcodecs.bitround", "keepbits"},
               [&] { make_bitround(-1, make_spec({4}, dtype("float64"))); });
  expect_error(ErrorKind::invalid_metadata, {"numcodecs.bitround", "int32"},
               [&] { make_bitround(3, make_spec({4}, dtype("int32"))); });
}

}  // namespace
}  // namespace zarrdirect::codec

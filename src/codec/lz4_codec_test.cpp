#include <gtest/gtest.h>

#include "codec/codec_test_support.hpp"

namespace zarrdirect::codec {
namespace {

using namespace test;

constexpr const char* kLz4Chain = R"([{"name":"bytes","configuration":{"endian":"little"}},
                                      {"name":"numcodecs.lz4","configuration":{"acceleration":1}}])";

void set_header(ByteBuffer& encoded, std::uint32_t size) {
  for (int i = 0; i < 4; ++i) encoded[static_cast<std::size_t>(i)] = static_cast<std::byte>((size >> (8 * i)) & 0xffu);
}

TEST(Lz4Codec, RoundTripsThroughChainsOfSeveralTypesAndShapes) {
  for (const char* type : {"uint8", "int16", "float32", "float64", "uint64"})
    for (std::vector<std::uint64_t> shape : {std::vector<std::uint64_t>{1000}, {7, 13}, {8, 8, 8}, {}}) {
      ArraySpec spec = make_spec(shape, dtype(type));
      auto data = sample_data(spec);
      expect_round_trip(kLz4Chain, spec, data);
      expect_round_trip(R"([{"name":"bytes","configuration":{"endian":"big"}},
                            {"name":"numcodecs.lz4","configuration":{"acceleration":20}}])", spec, data);
    }
}

TEST(Lz4Codec, StoresTheDecodedSizeInALittleEndianHeader) {
  ArraySpec spec = make_spec({300}, dtype("uint8"));
  auto codec = make_compressor("numcodecs.lz4", "{}", spec);
  ByteBuffer encoded;
  codec->encode(sample_data(spec), encoded);
  ASSERT_GE(encoded.size(), 4u);
  EXPECT_EQ(encoded[0], std::byte{300 & 0xff});
  EXPECT_EQ(encoded[1], std::byte{300 >> 8});
  EXPECT_EQ(encoded[2], std::byte{0});
  EXPECT_EQ(encoded[3], std::byte{0});
}

TEST(Lz4Codec, CorruptInputIsCorruptData) {
  ArraySpec spec = make_spec({500}, dtype("int32"));
  auto data = sample_data(spec);
  CodecChain chain = make_chain(kLz4Chain, spec);
  ByteBuffer encoded = chain.encode(data);

  // The header promises fewer bytes than the block holds, or more.
  ByteBuffer short_claim = encoded;
  set_header(short_claim, 1000);
  expect_error(ErrorKind::corrupt_data, {"codec numcodecs.lz4"}, [&] { decode_chunk(chain, short_claim); });
  ByteBuffer trailing = encoded;
  trailing.push_back(std::byte{0x42});
  expect_error(ErrorKind::corrupt_data, {"codec numcodecs.lz4"}, [&] { decode_chunk(chain, trailing); });
  expect_error(ErrorKind::corrupt_data, {"codec numcodecs.lz4", "header"}, [&] { decode_chunk(chain, to_bytes("ab")); });
}

TEST(Lz4Codec, TruncatedInputIsCorruptData) {
  ArraySpec spec = make_spec({500}, dtype("float64"));
  auto data = sample_data(spec);
  CodecChain chain = make_chain(kLz4Chain, spec);
  ByteBuffer encoded = chain.encode(data);
  for (std::size_t keep : {std::size_t{0}, std::size_t{3}, std::size_t{4}, encoded.size() / 2, encoded.size() - 1}) {
    ByteSpan cut(encoded.data(), keep);
    expect_error(ErrorKind::corrupt_data, {"codec numcodecs.lz4"}, [&] { decode_chunk(chain, cut); });
  }
}

TEST(Lz4Codec, HeaderClaimingMoreThanTheChunkFailsBeforeAllocating) {
  ArraySpec spec = make_spec({1000}, dtype("uint8"));
  auto codec = make_compressor("numcodecs.lz4", "{}", spec);
  ByteBuffer encoded;
  codec->encode(zeros(1000), encoded);
  set_header(encoded, 0xfffffff0u);
  ByteBuffer out;
  expect_error(ErrorKind::corrupt_data, {"codec numcodecs.lz4", "claims 4294967280 bytes"},
               [&] { codec->decode(encoded, out, 1000); });
  EXPECT_EQ(out.capacity(), 0u);

  // A real 1 MiB block offered to a 1000-byte chunk.
  ByteBuffer bomb;
  codec->encode(zeros(1 << 20), bomb);
  expect_error(ErrorKind::corrupt_data, {"codec numcodecs.lz4", "more than the 1000"},
               [&] { codec->decode(bomb, out, 1000); });
  EXPECT_EQ(out.capacity(), 0u);
}

TEST(Lz4Codec, BadConfigurationIsInvalidMetadata) {
  ArraySpec spec = make_spec({10}, dtype("uint8"));
  expect_error(ErrorKind::invalid_metadata, {"numcodecs.lz4", "acceleration"},
               [&] { make_compressor("numcodecs.lz4", R"({"acceleration":"fast"})", spec); });
}

}  // namespace
}  // namespace zarrdirect::codec

#include <gtest/gtest.h>

#include "codec/codec_test_support.hpp"

namespace zarrdirect::codec {
namespace {

using namespace test;

constexpr const char* kBz2Chain = R"([{"name":"bytes","configuration":{"endian":"little"}},
                                      {"name":"numcodecs.bz2","configuration":{"level":9}}])";

TEST(Bz2Codec, RoundTripsThroughChainsOfSeveralTypesAndShapes) {
  for (const char* type : {"uint8", "int16", "float32", "float64"})
    for (std::vector<std::uint64_t> shape : {std::vector<std::uint64_t>{1000}, {7, 13}, {3, 4, 5}}) {
      ArraySpec spec = make_spec(shape, dtype(type));
      auto data = sample_data(spec);
      expect_round_trip(kBz2Chain, spec, data);
      expect_round_trip(R"([{"name":"bytes","configuration":{"endian":"big"}},{"name":"numcodecs.bz2"}])", spec, data);
    }
}

TEST(Bz2Codec, AcceptsConcatenatedStreams) {
  expect_concatenated_streams_decode("numcodecs.bz2", "{}");
}

TEST(Bz2Codec, CorruptInputIsCorruptData) {
  ArraySpec spec = make_spec({500}, dtype("int32"));
  auto data = sample_data(spec);
  CodecChain chain = make_chain(kBz2Chain, spec);
  ByteBuffer encoded = chain.encode(data);

  expect_error(ErrorKind::corrupt_data, {"codec numcodecs.bz2"}, [&] { decode_chunk(chain, to_bytes("not bzip2")); });

  ByteBuffer damaged = encoded;
  damaged[encoded.size() / 2] ^= std::byte{0xff};
  expect_error(ErrorKind::corrupt_data, {"codec numcodecs.bz2"}, [&] { decode_chunk(chain, damaged); });

  ByteBuffer trailing = encoded;
  trailing.push_back(std::byte{0x42});
  expect_error(ErrorKind::corrupt_data, {"codec numcodecs.bz2", "garbage"}, [&] { decode_chunk(chain, trailing); });
}

TEST(Bz2Codec, TruncatedInputIsCorruptData) {
  ArraySpec spec = make_spec({500}, dtype("float64"));
  auto data = sample_data(spec);
  CodecChain chain = make_chain(kBz2Chain, spec);
  ByteBuffer encoded = chain.encode(data);
  for (std::size_t keep : {std::size_t{0}, std::size_t{4}, encoded.size() / 2, encoded.size() - 1}) {
    ByteSpan cut(encoded.data(), keep);
    expect_error(ErrorKind::corrupt_data, {"codec numcodecs.bz2"}, [&] { decode_chunk(chain, cut); });
  }
}

TEST(Bz2Codec, DecompressionBombStopsAtTheLimit) {
  ArraySpec spec = make_spec({1000}, dtype("uint8"));
  auto codec = make_compressor("numcodecs.bz2", "{}", spec);
  ByteBuffer bomb;
  codec->encode(zeros(16 << 20), bomb);
  ASSERT_LT(bomb.size(), 10u << 10);
  ByteBuffer out;
  expect_error(ErrorKind::corrupt_data, {"codec numcodecs.bz2", "more than the 1000 bytes"},
               [&] { codec->decode(bomb, out, 1000); });
  EXPECT_LE(out.capacity(), 2002u);
}

TEST(Bz2Codec, BadConfigurationIsInvalidMetadata) {
  ArraySpec spec = make_spec({10}, dtype("uint8"));
  expect_error(ErrorKind::invalid_metadata, {"numcodecs.bz2", "level"},
               [&] { make_compressor("numcodecs.bz2", R"({"level":0})", spec); });
  expect_error(ErrorKind::invalid_metadata, {"numcodecs.bz2", "level"},
               [&] { make_compressor("numcodecs.bz2", R"({"level":"max"})", spec); });
}

}  // namespace
}  // namespace zarrdirect::codec

#include <gtest/gtest.h>

#include "codec/codec_test_support.hpp"

namespace zarrdirect::codec {
namespace {

using namespace test;

constexpr const char* kZlibChain = R"([{"name":"bytes","configuration":{"endian":"little"}},
                                       {"name":"numcodecs.zlib","configuration":{"level":3}}])";

TEST(ZlibCodec, RoundTripsThroughChainsOfSeveralTypesAndShapes) {
  for (const char* type : {"uint8", "int16", "float32", "float64", "int64"})
    for (std::vector<std::uint64_t> shape : {std::vector<std::uint64_t>{1000}, {7, 13}, {3, 4, 5}, {}}) {
      ArraySpec spec = make_spec(shape, dtype(type));
      auto data = sample_data(spec);
      expect_round_trip(kZlibChain, spec, data);
      expect_round_trip(R"([{"name":"bytes","configuration":{"endian":"big"}},
                            {"name":"numcodecs.zlib","configuration":{"level":-1}}])", spec, data);
    }
}

TEST(ZlibCodec, CorruptInputIsCorruptData) {
  ArraySpec spec = make_spec({500}, dtype("int32"));
  auto data = sample_data(spec);
  CodecChain chain = make_chain(kZlibChain, spec);
  ByteBuffer encoded = chain.encode(data);

  expect_error(ErrorKind::corrupt_data, {"codec numcodecs.zlib"}, [&] { decode_chunk(chain, to_bytes("not zlib")); });

  ByteBuffer damaged = encoded;
  damaged.back() ^= std::byte{0xff};  // the Adler-32 trailer
  expect_error(ErrorKind::corrupt_data, {"codec numcodecs.zlib"}, [&] { decode_chunk(chain, damaged); });

  ByteBuffer trailing = encoded;
  trailing.push_back(std::byte{0});
  expect_error(ErrorKind::corrupt_data, {"codec numcodecs.zlib", "garbage"}, [&] { decode_chunk(chain, trailing); });

  auto gzip = make_compressor("gzip", "{}", spec);
  ByteBuffer wrong_wrapper;
  gzip->encode(data, wrong_wrapper);
  expect_error(ErrorKind::corrupt_data, {"codec numcodecs.zlib"}, [&] { decode_chunk(chain, wrong_wrapper); });
}

TEST(ZlibCodec, TruncatedInputIsCorruptData) {
  ArraySpec spec = make_spec({500}, dtype("float32"));
  auto data = sample_data(spec);
  CodecChain chain = make_chain(kZlibChain, spec);
  ByteBuffer encoded = chain.encode(data);
  for (std::size_t keep : {std::size_t{0}, std::size_t{2}, encoded.size() / 2, encoded.size() - 1}) {
    ByteSpan cut(encoded.data(), keep);
    expect_error(ErrorKind::corrupt_data, {"codec numcodecs.zlib"}, [&] { decode_chunk(chain, cut); });
  }
}

TEST(ZlibCodec, DecompressionBombStopsAtTheLimit) {
  ArraySpec spec = make_spec({4096}, dtype("uint8"));
  CodecChain chain = make_chain(kZlibChain, spec);
  auto codec = make_compressor("numcodecs.zlib", R"({"level":9})", spec);
  ByteBuffer bomb;
  codec->encode(zeros(64 << 20), bomb);
  expect_error(ErrorKind::corrupt_data, {"codec numcodecs.zlib", "more than the 4096 bytes"},
               [&] { decode_chunk(chain, bomb); });
  // One byte more than the chunk is already too much.
  ByteBuffer just_over;
  codec->encode(zeros(4097), just_over);
  expect_error(ErrorKind::corrupt_data, {"codec numcodecs.zlib"}, [&] { decode_chunk(chain, just_over); });
}

TEST(ZlibCodec, BadConfigurationIsInvalidMetadata) {
  ArraySpec spec = make_spec({10}, dtype("uint8"));
  expect_error(ErrorKind::invalid_metadata, {"numcodecs.zlib", "level"},
               [&] { make_compressor("numcodecs.zlib", R"({"level":10})", spec); });
}

}  // namespace
}  // namespace zarrdirect::codec

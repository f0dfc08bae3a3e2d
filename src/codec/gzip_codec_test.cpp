#include <gtest/gtest.h>

#include "codec/codec_test_support.hpp"

namespace zarrdirect::codec {
namespace {

using namespace test;

constexpr const char* kGzipChain = R"([{"name":"bytes","configuration":{"endian":"little"}},
                                       {"name":"gzip","configuration":{"level":5}}])";

TEST(GzipCodec, RoundTripsThroughChainsOfSeveralTypesAndShapes) {
  for (const char* type : {"uint8", "int16", "float32", "float64", "uint64"})
    for (std::vector<std::uint64_t> shape : {std::vector<std::uint64_t>{1000}, {7, 13}, {3, 4, 5}}) {
      ArraySpec spec = make_spec(shape, dtype(type));
      auto data = sample_data(spec);
      expect_round_trip(kGzipChain, spec, data);
      expect_round_trip(R"([{"name":"bytes","configuration":{"endian":"big"}},
                            {"name":"numcodecs.gzip","configuration":{"level":9}}])", spec, data);
      expect_round_trip(R"([{"name":"bytes","configuration":{"endian":"little"}},
                            {"name":"gzip","configuration":{"level":0}}])", spec, data);
    }
}

TEST(GzipCodec, AcceptsConcatenatedMembersAndZeroPadding) {
  ArraySpec spec = make_spec({600}, dtype("uint8"));
  auto data = sample_data(spec);
  auto codec = make_compressor("gzip", R"({"level":1})", spec);
  ByteBuffer first, second;
  codec->encode(ByteSpan(data).first(100), first);
  codec->encode(ByteSpan(data).subspan(100), second);
  ByteBuffer both = first;
  both.insert(both.end(), second.begin(), second.end());
  both.insert(both.end(), 5, std::byte{0});
  ByteBuffer out;
  codec->decode(both, out, 600);
  EXPECT_EQ(out, data);
}

TEST(GzipCodec, CorruptInputIsCorruptData) {
  ArraySpec spec = make_spec({500}, dtype("int32"));
  auto data = sample_data(spec);
  CodecChain chain = make_chain(kGzipChain, spec);
  ByteBuffer encoded = chain.encode(data);

  expect_error(ErrorKind::corrupt_data, {"codec gzip"}, [&] { decode_chunk(chain, to_bytes("not gzip at all")); });

  ByteBuffer damaged = encoded;
  damaged[damaged.size() - 6] ^= std::byte{0xff};  // the CRC-32 in the trailer
  expect_error(ErrorKind::corrupt_data, {"codec gzip"}, [&] { decode_chunk(chain, damaged); });

  ByteBuffer trailing = encoded;
  trailing.push_back(std::byte{0x42});
  expect_error(ErrorKind::corrupt_data, {"codec gzip", "garbage"}, [&] { decode_chunk(chain, trailing); });

  // zlib-wrapped data is not gzip.
  auto zlib = make_compressor("numcodecs.zlib", "{}", spec);
  ByteBuffer wrong_wrapper;
  zlib->encode(data, wrong_wrapper);
  expect_error(ErrorKind::corrupt_data, {"codec gzip"}, [&] { decode_chunk(chain, wrong_wrapper); });
}

TEST(GzipCodec, TruncatedInputIsCorruptData) {
  ArraySpec spec = make_spec({500}, dtype("float64"));
  auto data = sample_data(spec);
  CodecChain chain = make_chain(kGzipChain, spec);
  ByteBuffer encoded = chain.encode(data);
  for (std::size_t keep : {std::size_t{0}, std::size_t{5}, encoded.size() / 2, encoded.size() - 1}) {
    ByteSpan cut(encoded.data(), keep);
    expect_error(ErrorKind::corrupt_data, {"codec gzip"}, [&] { decode_chunk(chain, cut); });
  }
}

TEST(GzipCodec, DecompressionBombStopsAtTheLimit) {
  ArraySpec spec = make_spec({1000}, dtype("uint8"));
  auto codec = make_compressor("gzip", R"({"level":9})", spec);
  ByteBuffer bomb;
  codec->encode(zeros(64 << 20), bomb);
  ASSERT_LT(bomb.size(), 100u << 10);
  ByteBuffer out;
  expect_error(ErrorKind::corrupt_data, {"codec gzip", "more than the 1000 bytes"},
               [&] { codec->decode(bomb, out, 1000); });
  EXPECT_LE(out.capacity(), 2002u);
}

TEST(GzipCodec, BadConfigurationIsInvalidMetadata) {
  ArraySpec spec = make_spec({10}, dtype("uint8"));
  expect_error(ErrorKind::invalid_metadata, {"gzip", "level"}, [&] { make_compressor("gzip", R"({"level":12})", spec); });
  expect_error(ErrorKind::invalid_metadata, {"numcodecs.gzip", "level"},
               [&] { make_compressor("numcodecs.gzip", R"({"level":"fast"})", spec); });
}

TEST(GzipCodec, DecodesStraightIntoTheChunkWithoutAScratchCopy) {
  // A chunk is inflated into its destination: no second chunk-sized buffer (issue 11, item 3c).
  for (const char* codecs : {kGzipChain, R"([{"name":"bytes","configuration":{"endian":"big"}},
                                             {"name":"numcodecs.zlib","configuration":{"level":3}}])"}) {
    ArraySpec spec = make_spec({256, 64}, dtype("uint16"));
    auto data = sample_data(spec);
    CodecChain chain = make_chain(codecs, spec);
    ByteBuffer encoded = chain.encode(data);
    std::vector<std::byte> decoded(spec.nbytes());
    Scratch scratch;
    chain.decode(encoded, decoded, scratch);
    EXPECT_EQ(decoded, data);
    EXPECT_EQ(scratch.a.capacity() + scratch.b.capacity() + scratch.c.capacity(), 0u) << codecs;
    EXPECT_EQ(chain.decode_scratch_nbytes(), 0u);
    // A stream of another size is refused, whether longer or shorter than the chunk.
    ArraySpec other = make_spec({256, 65}, dtype("uint16"));
    ByteBuffer longer = make_chain(codecs, other).encode(sample_data(other));
    EXPECT_THROW(chain.decode(longer, decoded, scratch), Error);
    ArraySpec smaller = make_spec({255, 64}, dtype("uint16"));
    ByteBuffer shorter = make_chain(codecs, smaller).encode(sample_data(smaller));
    try {
      chain.decode(shorter, decoded, scratch);
      ADD_FAILURE() << "a short stream was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::corrupt_data);
      EXPECT_NE(std::string(e.what()).find("the chunk holds 32768"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace zarrdirect::codec

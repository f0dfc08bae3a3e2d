#include <gtest/gtest.h>

#include <blosc.h>
#include <fmt/format.h>

#include "codec/codec_test_support.hpp"

namespace zarrdirect::codec {
namespace {

using namespace test;

std::string v3_chain(std::string_view cname, std::string_view shuffle) {
  return fmt::format(R"([{{"name":"bytes","configuration":{{"endian":"little"}}}},
                         {{"name":"blosc","configuration":{{"cname":"{}","clevel":5,"shuffle":"{}","blocksize":0}}}}])",
                     cname, shuffle);
}

std::string numcodecs_chain(std::string_view cname, int shuffle) {
  return fmt::format(R"([{{"name":"bytes","configuration":{{"endian":"little"}}}},
                         {{"name":"numcodecs.blosc","configuration":{{"cname":"{}","clevel":3,"shuffle":{},"blocksize":0}}}}])",
                     cname, shuffle);
}

struct Meta {
  std::size_t typesize;
  int flags;
};

Meta header_meta(const ByteBuffer& encoded) {
  std::size_t typesize = 0;
  int flags = 0;
  blosc_cbuffer_metainfo(encoded.data(), &typesize, &flags);
  return {typesize, flags};
}

TEST(BloscCodec, RoundTripsEveryCompressorAndShuffle) {
  for (const char* type : {"uint8", "uint16", "int32", "float32", "float64"})
    for (std::vector<std::uint64_t> shape : {std::vector<std::uint64_t>{1000}, {7, 13}, {2, 16, 32}}) {
      ArraySpec spec = make_spec(shape, dtype(type));
      auto data = sample_data(spec);
      for (const char* cname : {"lz4", "lz4hc", "blosclz", "zstd", "zlib"}) {
        for (const char* shuffle : {"noshuffle", "shuffle", "bitshuffle"}) expect_round_trip(v3_chain(cname, shuffle), spec, data);
        for (int shuffle : {-1, 0, 1, 2}) expect_round_trip(numcodecs_chain(cname, shuffle), spec, data);
      }
    }
}

TEST(BloscCodec, TypesizeComesFromTheConfigurationOrTheArray) {
  ArraySpec spec = make_spec({256}, dtype("uint16"));
  auto data = sample_data(spec);
  ByteBuffer encoded;
  make_compressor("blosc", R"({"cname":"lz4","clevel":5,"shuffle":"shuffle"})", spec)->encode(data, encoded);
  EXPECT_EQ(header_meta(encoded).typesize, 2u);
  make_compressor("blosc", R"({"cname":"lz4","clevel":5,"shuffle":"shuffle","typesize":4})", spec)->encode(data, encoded);
  EXPECT_EQ(header_meta(encoded).typesize, 4u);
}

TEST(BloscCodec, NumcodecsAutoshuffleIsBitshuffleForBytesAndByteShuffleOtherwise) {
  ArraySpec bytes = make_spec({256}, dtype("uint8"));
  ArraySpec words = make_spec({256}, dtype("int32"));
  ByteBuffer encoded;
  make_compressor("numcodecs.blosc", R"({"cname":"lz4","clevel":5,"shuffle":-1})", bytes)
      ->encode(sample_data(bytes), encoded);
  EXPECT_TRUE(header_meta(encoded).flags & BLOSC_DOBITSHUFFLE);
  make_compressor("numcodecs.blosc", R"({"cname":"lz4","clevel":5,"shuffle":-1})", words)
      ->encode(sample_data(words), encoded);
  EXPECT_TRUE(header_meta(encoded).flags & BLOSC_DOSHUFFLE);
  EXPECT_FALSE(header_meta(encoded).flags & BLOSC_DOBITSHUFFLE);
}

TEST(BloscCodec, CorruptInputIsCorruptData) {
  ArraySpec spec = make_spec({2048}, dtype("int32"));
  auto data = sample_data(spec);
  CodecChain chain = make_chain(v3_chain("zstd", "shuffle"), spec);
  ByteBuffer encoded = chain.encode(data);

  expect_error(ErrorKind::corrupt_data, {"codec blosc", "header"}, [&] { decode_chunk(chain, to_bytes("short")); });
  expect_error(ErrorKind::corrupt_data, {"codec blosc"},
               [&] { decode_chunk(chain, to_bytes("sixteen bytes of garbage, and a bit more")); });

  ByteBuffer damaged = encoded;
  for (std::size_t i = 32; i < damaged.size(); i += 7) damaged[i] ^= std::byte{0xa5};
  expect_error(ErrorKind::corrupt_data, {"codec blosc"}, [&] { decode_chunk(chain, damaged); });
}

// A C++ Zarr writer stores each blosc chunk with 16 bytes after the frame; numcodecs reads such
// chunks by decoding the frame the header describes. Both a compressible and an incompressible
// chunk (whose frame is already the largest possible, decoded size + 16) must decode.
TEST(BloscCodec, BytesAfterTheFrameAreIgnored) {
  for (bool compressible : {true, false}) {
    SCOPED_TRACE(compressible ? "compressible" : "incompressible");
    ArraySpec spec = make_spec({2500}, dtype("uint32"));
    std::vector<std::byte> data = sample_data(spec);
    if (!compressible) {
      std::uint64_t state = 88172645463325252ull;  // xorshift: bytes no compressor shrinks
      for (auto& b : data) {
        state ^= state << 13, state ^= state >> 7, state ^= state << 17;
        b = static_cast<std::byte>(state);
      }
    }
    for (const char* chain_json : {"v3", "numcodecs"}) {
      SCOPED_TRACE(chain_json);
      CodecChain chain = make_chain(chain_json == std::string_view("v3") ? v3_chain("lz4", "shuffle")
                                                                          : numcodecs_chain("lz4", 1),
                                    spec);
      ByteBuffer stored = chain.encode(data);
      if (!compressible) {
        ASSERT_EQ(stored.size(), data.size() + BLOSC_MAX_OVERHEAD);  // the issue's 10016
      }
      for (int i = 0; i < 16; ++i) stored.push_back(static_cast<std::byte>(0xa0 + i));
      EXPECT_LE(stored.size(), chain.max_encoded_size());  // the reader's bound: 10032 must pass
      EXPECT_EQ(decode_chunk(chain, stored), data);
    }
  }
}

TEST(BloscCodec, AChunkShorterThanItsHeaderSaysIsCorrupt) {
  ArraySpec spec = make_spec({2048}, dtype("int32"));
  CodecChain chain = make_chain(v3_chain("zstd", "shuffle"), spec);
  ByteBuffer encoded = chain.encode(sample_data(spec));
  encoded.pop_back();
  expect_error(ErrorKind::corrupt_data, {"codec blosc", "header says the chunk is"}, [&] { decode_chunk(chain, encoded); });
  // A header whose compressed size is smaller than the header itself.
  ByteBuffer tiny = chain.encode(sample_data(spec));
  for (int b = 0; b < 4; ++b) tiny[12 + b] = std::byte{0};
  tiny[12] = std::byte{8};
  expect_error(ErrorKind::corrupt_data, {"codec blosc"}, [&] { decode_chunk(chain, tiny); });
}

TEST(BloscCodec, TruncatedInputIsCorruptData) {
  ArraySpec spec = make_spec({1000}, dtype("float64"));
  auto data = sample_data(spec);
  CodecChain chain = make_chain(numcodecs_chain("lz4", 1), spec);
  ByteBuffer encoded = chain.encode(data);
  for (std::size_t keep : {std::size_t{0}, std::size_t{15}, std::size_t{16}, encoded.size() / 2, encoded.size() - 1}) {
    ByteSpan cut(encoded.data(), keep);
    expect_error(ErrorKind::corrupt_data, {"codec numcodecs.blosc"}, [&] { decode_chunk(chain, cut); });
  }
}

TEST(BloscCodec, HeaderClaimingMoreThanTheChunkFailsBeforeAllocating) {
  ArraySpec spec = make_spec({1000}, dtype("uint8"));
  auto codec = make_compressor("blosc", R"({"cname":"lz4","clevel":9,"shuffle":"noshuffle"})", spec);
  ByteBuffer bomb;
  codec->encode(zeros(16 << 20), bomb);
  ASSERT_LT(bomb.size(), 1u << 20);
  ByteBuffer out;
  expect_error(ErrorKind::corrupt_data, {"codec blosc", "claims 16777216 bytes"},
               [&] { codec->decode(bomb, out, 1000); });
  EXPECT_EQ(out.capacity(), 0u);
}

TEST(BloscCodec, BadConfigurationIsInvalidMetadata) {
  ArraySpec spec = make_spec({10}, dtype("uint8"));
  expect_error(ErrorKind::invalid_metadata, {"blosc", "cname"},
               [&] { make_compressor("blosc", R"({"cname":"brotli","clevel":5,"shuffle":"shuffle"})", spec); });
  expect_error(ErrorKind::invalid_metadata, {"blosc", "shuffle"},
               [&] { make_compressor("blosc", R"({"cname":"lz4","clevel":5,"shuffle":"sideways"})", spec); });
  expect_error(ErrorKind::invalid_metadata, {"blosc", "clevel"},
               [&] { make_compressor("blosc", R"({"cname":"lz4","clevel":10,"shuffle":"shuffle"})", spec); });
  expect_error(ErrorKind::invalid_metadata, {"numcodecs.blosc", "shuffle"},
               [&] { make_compressor("numcodecs.blosc", R"({"cname":"lz4","clevel":5,"shuffle":3})", spec); });
  expect_error(ErrorKind::invalid_metadata, {"blosc", "typesize"},
               [&] { make_compressor("blosc", R"({"cname":"lz4","shuffle":"shuffle","typesize":0})", spec); });
}

}  // namespace
}  // namespace zarrdirect::codec

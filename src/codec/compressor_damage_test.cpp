// Damaged chunks through every compressor: decoding either succeeds (some damage goes unnoticed
// without a checksum) or fails with Error(corrupt_data) naming the codec. Never another error,
// never a crash, never more output than the chunk.
#include <gtest/gtest.h>

#include <random>

#include "codec/codec_test_support.hpp"

namespace zarrdirect::codec {
namespace {

using namespace test;

TEST(CompressorDamage, EveryDamagedChunkDecodesOrIsCorruptData) {
  const std::vector<std::pair<std::string, std::string>> compressors = {
      {"zstd", R"({"level":3,"checksum":false})"},
      {"numcodecs.zstd", R"({"level":1})"},
      {"gzip", R"({"level":5})"},
      {"numcodecs.zlib", R"({"level":1})"},
      {"numcodecs.bz2", R"({"level":1})"},
      {"numcodecs.lz4", R"({"acceleration":1})"},
      {"blosc", R"({"cname":"lz4","clevel":5,"shuffle":"shuffle","typesize":2})"},
      {"blosc", R"({"cname":"zstd","clevel":5,"shuffle":"bitshuffle","typesize":2})"},
      {"numcodecs.blosc", R"({"cname":"blosclz","clevel":5,"shuffle":1})"},
      {"numcodecs.blosc", R"({"cname":"zlib","clevel":5,"shuffle":0})"},
  };
  ArraySpec spec = make_spec({48, 40}, dtype("uint16"));
  const auto data = sample_data(spec);
  std::mt19937 random(12345);
  for (const auto& [name, configuration] : compressors) {
    SCOPED_TRACE(name + " " + configuration);
    auto codec = make_compressor(name, configuration, spec);
    ByteBuffer encoded;
    codec->encode(data, encoded);
    ByteBuffer decoded;
    for (int trial = 0; trial < 300; ++trial) {
      ByteBuffer damaged = encoded;
      const int flips = 1 + trial % 4;
      for (int f = 0; f < flips; ++f) {
        std::uniform_int_distribution<std::size_t> where(0, damaged.size() - 1);
        damaged[where(random)] ^= static_cast<std::byte>(1u << (random() % 8));
      }
      if (trial % 5 == 0) damaged.resize(std::uniform_int_distribution<std::size_t>(0, damaged.size())(random));
      try {
        codec->decode(damaged, decoded, spec.nbytes());
        EXPECT_LE(decoded.size(), spec.nbytes());
      } catch (const Error& e) {
        ASSERT_EQ(e.kind(), ErrorKind::corrupt_data) << e.what();
        ASSERT_NE(std::string(e.what()).find(name), std::string::npos) << e.what();
      }
    }
  }
}

}  // namespace
}  // namespace zarrdirect::codec

#include <gtest/gtest.h>

#include "codec/codec_test_support.hpp"

namespace zarrdirect::codec {
namespace {

using namespace test;

std::unique_ptr<ArrayToArrayCodec> make_shuffle(const std::string& configuration, const ArraySpec& spec) {
  return make_array_to_array("numcodecs.shuffle", nlohmann::json::parse(configuration), spec);
}

TEST(ShuffleFilter, GathersEachByteOfEveryElement) {
  // numcodecs.Shuffle(elementsize=4) on bytes 0..11.
  ArraySpec spec = make_spec({12}, dtype("uint8"));
  auto codec = make_shuffle(R"({"elementsize":4})", spec);
  std::vector<std::uint8_t> bytes(12);
  for (std::uint8_t i = 0; i < 12; ++i) bytes[i] = i;
  ByteBuffer encoded(12);
  codec->encode(bytes_of(bytes), encoded);
  EXPECT_EQ(values_of<std::uint8_t>(encoded), (std::vector<std::uint8_t>{0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11}));
  std::vector<std::byte> decoded(12);
  codec->decode(encoded, decoded);
  EXPECT_EQ(decoded, bytes_of(bytes));
}

TEST(ShuffleFilter, RoundTripsThroughChainsWithCompressors) {
  for (const char* type : {"uint16", "int32", "float64"})
    for (int element_size : {0, 1, 2, 4, 8}) {
      ArraySpec spec = make_spec({16, 8}, dtype(type));
      expect_round_trip(fmt::format(R"([{{"name":"numcodecs.shuffle","configuration":{{"elementsize":{}}}}},
                                         {{"name":"bytes","configuration":{{"endian":"little"}}}},
                                         {{"name":"numcodecs.zlib","configuration":{{"level":1}}}}])",
                                    element_size),
                        spec, sample_data(spec));
    }
}

TEST(ShuffleFilter, BadConfigurationIsInvalidMetadata) {
  ArraySpec spec = make_spec({5}, dtype("uint16"));  // 10 bytes
  expect_error(ErrorKind::invalid_metadata, {"numcodecs.shuffle", "10 byte", "4 byte"},
               [&] { make_shuffle(R"({"elementsize":4})", spec); });
  expect_error(ErrorKind::invalid_metadata, {"numcodecs.shuffle", "elementsize"},
               [&] { make_shuffle(R"({"elementsize":-2})", spec); });
  expect_error(ErrorKind::invalid_metadata, {"numcodecs.shuffle", "elementsize"},
               [&] { make_shuffle(R"({"elementsize":"four"})", spec); });
}

TEST(ShuffleFilter, AfterTheBytesCodecShufflesTheStoredBytes) {
  // zarr-python 3 lists numcodecs.shuffle after "bytes": it then shuffles the big-endian bytes.
  ArraySpec spec = make_spec({3}, dtype("uint16"));
  auto chain = CodecChain::create(nlohmann::json::parse(R"([{"name":"bytes","configuration":{"endian":"big"}},
                                                            {"name":"numcodecs.shuffle","configuration":{"elementsize":2}}])"),
                                  spec, "test");
  // 0x0102, 0x0304, 0x0506 stored big-endian: 01 02 03 04 05 06; shuffled: 01 03 05 02 04 06.
  const std::vector<std::uint8_t> stored{1, 3, 5, 2, 4, 6};
  std::vector<std::byte> decoded(6);
  Scratch scratch;
  chain.decode(bytes_of(stored), decoded, scratch);
  EXPECT_EQ(values_of<std::uint16_t>(decoded), (std::vector<std::uint16_t>{0x0102, 0x0304, 0x0506}));
  const ByteBuffer encoded = chain.encode(decoded);
  EXPECT_EQ(values_of<std::uint8_t>(encoded), stored);
}

TEST(ShuffleFilter, BytesKindRefusesPartialElements) {
  ArraySpec spec = make_spec({4}, dtype("uint16"));
  auto codec = make_bytes_to_bytes("numcodecs.shuffle", nlohmann::json::parse(R"({"elementsize":4})"), spec);
  const std::vector<std::uint8_t> odd{1, 2, 3, 4, 5, 6};
  ByteBuffer decoded;
  expect_error(ErrorKind::corrupt_data, {"numcodecs.shuffle", "6 bytes", "4 byte"},
               [&] { codec->decode(bytes_of(odd), decoded, 8); });
  expect_error(ErrorKind::corrupt_data, {"numcodecs.shuffle", "more than"},
               [&] { codec->decode(bytes_of(odd), decoded, 4); });
}

}  // namespace
}  // namespace zarrdirect::codec

#include <gtest/gtest.h>

#include "codec/codec_test_support.hpp"
#include "codec/quantize_filter.hpp"

namespace zarrdirect::codec {
namespace {

using namespace test;

std::unique_ptr<ArrayToArrayCodec> make_quantize(const std::string& configuration, const ArraySpec& spec) {
  return make_array_to_array("numcodecs.quantize", nlohmann::json::parse(configuration), spec);
}

std::vector<double> linspace_0_1() {
  std::vector<double> values;
  for (int i = 0; i < 10; ++i) values.push_back(static_cast<double>(i) / 9.0);
  return values;
}

TEST(QuantizeFilter, MatchesNumcodecs) {
  // Expected bits from numcodecs.Quantize(digits, dtype='f8') on linspace(0, 1, 10).
  const std::vector<std::pair<int, std::vector<double>>> cases = {
      {1, {0, 0x1p-3, 0x1p-2, 0x1.4p-2, 0x1.cp-2, 0x1.2p-1, 0x1.6p-1, 0x1.8p-1, 0x1.cp-1, 1}},
      {2, {0, 0x1.cp-4, 0x1.cp-3, 0x1.58p-2, 0x1.c8p-2, 0x1.1cp-1, 0x1.54p-1, 0x1.9p-1, 0x1.c8p-1, 1}},
      {3, {0, 0x1.c8p-4, 0x1.c8p-3, 0x1.55p-2, 0x1.c7p-2, 0x1.1c8p-1, 0x1.558p-1, 0x1.8ep-1, 0x1.c7p-1, 1}},
  };
  ArraySpec spec = make_spec({10}, dtype("float64"));
  for (const auto& [digits, expected] : cases) {
    auto codec = make_quantize(fmt::format(R"({{"digits":{},"dtype":"<f8"}})", digits), spec);
    ByteBuffer encoded(spec.nbytes());
    codec->encode(bytes_of(linspace_0_1()), encoded);
    EXPECT_EQ(values_of<double>(encoded), expected) << "digits " << digits;
  }
  EXPECT_EQ(quantize_scale(1), 16.0);
  EXPECT_EQ(quantize_scale(3), 1024.0);
}

TEST(QuantizeFilter, StoresAstypeAndDecodesByConverting) {
  ArraySpec spec = make_spec({3}, dtype("float64"));
  auto codec = make_quantize(R"({"digits":1,"dtype":"<f8","astype":"<f2"})", spec);
  EXPECT_EQ(codec->encoded_spec().dtype, dtype("float16"));
  ByteBuffer encoded(3 * 2);
  codec->encode(bytes_of(std::vector<double>{1.0, 2.5, -3.75}), encoded);
  std::vector<std::byte> decoded(spec.nbytes());
  codec->decode(encoded, decoded);
  EXPECT_EQ(values_of<double>(decoded), (std::vector<double>{1.0, 2.5, -3.75}));
}

TEST(QuantizeFilter, RoundTripsThroughAChainOnceQuantized) {
  // Quantizing is lossy; values already on the grid come back unchanged.
  ArraySpec spec = make_spec({10, 10}, dtype("float32"));
  std::vector<float> values;
  for (int i = 0; i < 100; ++i) values.push_back(static_cast<float>(i - 50) / 16.0f);
  expect_round_trip(R"([{"name":"numcodecs.quantize","configuration":{"digits":1,"dtype":"<f4","astype":"<f4"}},
                        {"name":"bytes","configuration":{"endian":"little"}},
                        {"name":"numcodecs.zlib","configuration":{"level":1}}])",
                    spec, bytes_of(values));
}

TEST(QuantizeFilter, BadConfigurationIsInvalidMetadata) {
  ArraySpec spec = make_spec({10}, dtype("float32"));
  expect_error(ErrorKind::invalid_metadata, {"numcodecs.quantize", "dtype", "float64", "float32"},
               [&] { make_quantize(R"({"digits":2,"dtype":"<f8"})", spec); });
  expect_error(ErrorKind::invalid_metadata, {"numcodecs.quantize", "astype", "int32"},
               [&] { make_quantize(R"({"digits":2,"dtype":"<f4","astype":"<i4"})", spec); });
  expect_error(ErrorKind::invalid_metadata, {"numcodecs.quantize", "digits"},
               [&] { make_quantize(R"({"dtype":"<f4"})", spec); });
  ArraySpec ints = make_spec({10}, dtype("int32"));
  expect_error(ErrorKind::invalid_metadata, {"numcodecs.quantize", "floating"},
               [&] { make_quantize(R"({"digits":2,"dtype":"<i4"})", ints); });
}

}  // namespace
}  // namespace zarrdirect::codec

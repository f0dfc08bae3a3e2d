#include <gtest/gtest.h>

#include "codec/codec_test_support.hpp"

namespace zarrdirect::codec {
namespace {

using namespace test;

std::unique_ptr<ArrayToArrayCodec> make_astype(const std::string& configuration, const ArraySpec& spec) {
  return make_array_to_array("numcodecs.astype", nlohmann::json::parse(configuration), spec);
}

template <class Stored, class Value>
std::vector<Stored> encode_values(const ArrayToArrayCodec& codec, const std::vector<Value>& values) {
  ByteBuffer encoded(values.size() * sizeof(Stored));
  codec.encode(bytes_of(values), encoded);
  return values_of<Stored>(encoded);
}

TEST(AsTypeFilter, ConvertsAsNumpyAstype) {
  // Expected values from numcodecs.AsType: float->int truncates toward zero, int->int wraps.
  ArraySpec doubles = make_spec({5}, dtype("float64"));
  auto to_int = make_astype(R"({"encode_dtype":"<i4","decode_dtype":"<f8"})", doubles);
  EXPECT_EQ(to_int->encoded_spec().dtype, dtype("int32"));
  EXPECT_EQ((encode_values<std::int32_t>(*to_int, std::vector<double>{1.0, 300.7, -2.7, 255.5, 70000.2})),
            (std::vector<std::int32_t>{1, 300, -2, 255, 70000}));

  ArraySpec ints = make_spec({4}, dtype("int32"));
  auto to_byte = make_astype(R"({"encode_dtype":"|u1","decode_dtype":"<i4"})", ints);
  EXPECT_EQ((encode_values<std::uint8_t>(*to_byte, std::vector<std::int32_t>{300, -1, 65535, 7})),
            (std::vector<std::uint8_t>{44, 255, 255, 7}));
}

TEST(AsTypeFilter, DecodesToTheArrayType) {
  ArraySpec spec = make_spec({3}, dtype("float64"));
  auto codec = make_astype(R"({"encode_dtype":"<f4","decode_dtype":"<f8"})", spec);
  std::vector<std::byte> decoded(spec.nbytes());
  codec->decode(bytes_of(std::vector<float>{0.1f, -2.5f, 1e30f}), decoded);
  EXPECT_EQ(values_of<double>(decoded), (std::vector<double>{0.1f, -2.5, 1e30f}));
}

TEST(AsTypeFilter, RoundTripsThroughChainsWithCompressors) {
  // float32 values that are whole numbers survive float64 -> int32 -> float64; half floats too.
  ArraySpec spec = make_spec({8, 9}, dtype("float64"));
  std::vector<double> values;
  for (int i = 0; i < 72; ++i) values.push_back(i * 3 - 100);
  expect_round_trip(R"([{"name":"numcodecs.astype","configuration":{"encode_dtype":"<i4","decode_dtype":"<f8"}},
                        {"name":"bytes","configuration":{"endian":"big"}},
                        {"name":"numcodecs.gzip","configuration":{"level":1}}])",
                    spec, bytes_of(values));
  expect_round_trip(R"([{"name":"numcodecs.astype","configuration":{"encode_dtype":"<f2","decode_dtype":"<f8"}},
                        {"name":"bytes","configuration":{"endian":"little"}},
                        {"name":"numcodecs.lz4","configuration":{"acceleration":1}}])",
                    spec, bytes_of(values));
}

TEST(AsTypeFilter, BadConfigurationIsInvalidMetadata) {
  ArraySpec spec = make_spec({10}, dtype("float64"));
  expect_error(ErrorKind::invalid_metadata, {"numcodecs.astype", "decode_dtype", "float32", "float64"},
               [&] { make_astype(R"({"encode_dtype":"<i4","decode_dtype":"<f4"})", spec); });
  expect_error(ErrorKind::invalid_metadata, {"numcodecs.astype", "encode_dtype", "missing"},
               [&] { make_astype(R"({"decode_dtype":"<f8"})", spec); });
}

}  // namespace
}  // namespace zarrdirect::codec

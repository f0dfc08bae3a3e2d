#include <gtest/gtest.h>

#include "codec/codec_test_support.hpp"

namespace zarrdirect::codec {
namespace {

using namespace test;

std::unique_ptr<ArrayToArrayCodec> make_delta(const std::string& configuration, const ArraySpec& spec) {
  return make_array_to_array("numcodecs.delta", nlohmann::json::parse(configuration), spec);
}

template <class Stored, class Value>
std::vector<Stored> encode_values(const ArrayToArrayCodec& codec, const std::vector<Value>& values) {
  ByteBuffer encoded(values.size() * sizeof(Stored));
  codec.encode(bytes_of(values), encoded);
  return values_of<Stored>(encoded);
}

TEST(DeltaFilter, EncodesTheFirstValueThenDifferences) {
  // numcodecs' documented example: arange(100, 120, 2) as int16, stored as int8.
  std::vector<std::int16_t> values;
  for (std::int16_t v = 100; v < 120; v += 2) values.push_back(v);
  ArraySpec spec = make_spec({values.size()}, dtype("int16"));
  auto codec = make_delta(R"({"dtype":"<i2","astype":"<i1"})", spec);
  EXPECT_EQ(codec->encoded_spec().dtype, dtype("int8"));
  EXPECT_EQ((encode_values<std::int8_t>(*codec, values)), (std::vector<std::int8_t>{100, 2, 2, 2, 2, 2, 2, 2, 2, 2}));
}

TEST(DeltaFilter, IntegerDifferencesWrapAndDecodeBack) {
  // Differences computed by NumPy in int16 wrap around: 5536 is -30000 - 30000 modulo 2^16.
  std::vector<std::int16_t> values{0, 30000, -30000, 5, 32767};
  ArraySpec spec = make_spec({values.size()}, dtype("int16"));
  auto codec = make_delta(R"({"dtype":"<i2","astype":"<i2"})", spec);
  auto encoded = encode_values<std::int16_t>(*codec, values);
  EXPECT_EQ(encoded, (std::vector<std::int16_t>{0, 30000, 5536, 30005, 32762}));
  std::vector<std::byte> decoded(spec.nbytes());
  codec->decode(bytes_of(encoded), decoded);
  EXPECT_EQ(values_of<std::int16_t>(decoded), values);
}

TEST(DeltaFilter, FloatDifferencesStoredNarrowerAccumulateInTheDecodedType) {
  // Expected bits from numcodecs.Delta(dtype='f8', astype='f4').
  std::vector<double> values{1.5, 2.25, -1.0, 1e10};
  ArraySpec spec = make_spec({values.size()}, dtype("float64"));
  auto codec = make_delta(R"({"dtype":"<f8","astype":"<f4"})", spec);
  auto encoded = encode_values<float>(*codec, values);
  EXPECT_EQ(encoded, (std::vector<float>{1.5f, 0.75f, -3.25f, 0x1.2a05f2p+33f}));
  std::vector<std::byte> decoded(spec.nbytes());
  codec->decode(bytes_of(encoded), decoded);
  EXPECT_EQ(values_of<double>(decoded), (std::vector<double>{1.5, 2.25, -1.0, 0x1.2a05f1ff8p+33}));
}

// Whole numbers: their float differences and sums are exact, so a float delta round trip is too
// (on fractions it is not, in numcodecs either).
std::vector<std::byte> whole_numbers(const ArraySpec& spec) {
  std::vector<std::byte> data(spec.nbytes());
  visit_element_type(spec.dtype, "test", [&]<class T>(T) {
    for (std::size_t i = 0; i < spec.num_elements(); ++i)
      store_element(data.data(), i, numpy_cast<T>(std::round(std::sin(static_cast<double>(i) * 0.1) * 100.0)));
  });
  return data;
}

TEST(DeltaFilter, RoundTripsThroughChainsWithCompressors) {
  for (const char* type : {"int8", "uint16", "int32", "int64", "float32", "float64"})
    for (std::vector<std::uint64_t> shape : {std::vector<std::uint64_t>{1000}, {16, 16}, {3, 4, 5}}) {
      ArraySpec spec = make_spec(shape, dtype(type));
      const std::string typestr = spec.dtype.numpy_typestr(ByteOrder::little);
      auto data = spec.dtype.kind == ScalarKind::floating ? whole_numbers(spec) : sample_data(spec);
      expect_round_trip(fmt::format(R"([{{"name":"numcodecs.delta","configuration":{{"dtype":"{0}","astype":"{0}"}}}},
                                         {{"name":"bytes","configuration":{{"endian":"little"}}}},
                                         {{"name":"numcodecs.zlib","configuration":{{"level":3}}}}])",
                                    typestr),
                        spec, data);
    }
  // zarr-python 3 spells the dtype the way the user wrote it.
  ArraySpec spec = make_spec({40, 30}, dtype("int32"));
  expect_round_trip(R"([{"name":"numcodecs.delta","configuration":{"dtype":"int32"}},
                        {"name":"bytes","configuration":{"endian":"big"}},
                        {"name":"zstd","configuration":{"level":1,"checksum":false}}])",
                    spec, sample_data(spec));
}

TEST(DeltaFilter, BadConfigurationIsInvalidMetadata) {
  ArraySpec spec = make_spec({10}, dtype("int32"));
  expect_error(ErrorKind::invalid_metadata, {"numcodecs.delta", "dtype", "float32", "int32"},
               [&] { make_delta(R"({"dtype":"<f4"})", spec); });
  expect_error(ErrorKind::invalid_metadata, {"numcodecs.delta", "dtype", "missing"}, [&] { make_delta("{}", spec); });
  expect_error(ErrorKind::invalid_metadata, {"numcodecs.delta", "astype"},
               [&] { make_delta(R"({"dtype":"<i4","astype":7})", spec); });
  ArraySpec flags = make_spec({10}, dtype("bool"));
  expect_error(ErrorKind::invalid_metadata, {"numcodecs.delta", "bool"}, [&] { make_delta(R"({"dtype":"|b1"})", flags); });
}

}  // namespace
}  // namespace zarrdirect::codec

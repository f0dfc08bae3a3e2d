#include <gtest/gtest.h>

#include "codec/codec_test_support.hpp"

namespace zarrdirect::codec {
namespace {

using namespace test;

std::unique_ptr<ArrayToArrayCodec> make_filter(const std::string& configuration, const ArraySpec& spec) {
  return make_array_to_array("numcodecs.fixedscaleoffset", nlohmann::json::parse(configuration), spec);
}

template <class Stored, class Value>
std::vector<Stored> encode_values(const ArrayToArrayCodec& codec, const std::vector<Value>& values) {
  ByteBuffer encoded(values.size() * sizeof(Stored));
  codec.encode(bytes_of(values), encoded);
  return values_of<Stored>(encoded);
}

template <class Value, class Stored>
std::vector<Value> decode_values(const ArrayToArrayCodec& codec, const std::vector<Stored>& stored) {
  std::vector<std::byte> decoded(stored.size() * sizeof(Value));
  codec.decode(bytes_of(stored), decoded);
  return values_of<Value>(decoded);
}

TEST(FixedScaleOffsetFilter, MatchesNumcodecsDocumentedExample) {
  // numcodecs.FixedScaleOffset(offset=1000, scale=10, dtype='f8', astype='u1') on linspace(1000, 1001, 10).
  std::vector<double> values;
  for (int i = 0; i < 10; ++i) values.push_back(1000.0 + static_cast<double>(i) / 9.0);
  ArraySpec spec = make_spec({10}, dtype("float64"));
  auto codec = make_filter(R"({"offset":1000,"scale":10,"dtype":"<f8","astype":"|u1"})", spec);
  auto encoded = encode_values<std::uint8_t>(*codec, values);
  EXPECT_EQ(encoded, (std::vector<std::uint8_t>{0, 1, 2, 3, 4, 6, 7, 8, 9, 10}));
  EXPECT_EQ((decode_values<double>(*codec, encoded)),
            (std::vector<double>{0x1.f4p+9, 0x1.f40cccccccccdp+9, 0x1.f41999999999ap+9, 0x1.f426666666666p+9,
                                 0x1.f433333333333p+9, 0x1.f44cccccccccdp+9, 0x1.f45999999999ap+9,
                                 0x1.f466666666666p+9, 0x1.f473333333333p+9, 0x1.f48p+9}));
}

TEST(FixedScaleOffsetFilter, RoundsHalfToEvenAsNpAround) {
  ArraySpec spec = make_spec({6}, dtype("float32"));
  auto codec = make_filter(R"({"offset":0,"scale":1,"dtype":"<f4","astype":"<i2"})", spec);
  EXPECT_EQ((encode_values<std::int16_t>(*codec, std::vector<float>{0.5f, 1.5f, 2.5f, -0.5f, -1.5f, 3.49f})),
            (std::vector<std::int16_t>{0, 2, 2, 0, -2, 3}));
}

TEST(FixedScaleOffsetFilter, FloatArrayStoredAsIntegersDecodesThroughFloat64) {
  // Expected bits from numcodecs with dtype '<f4', astype '<i4', scale 100 (zarr-python 2's usual use).
  ArraySpec spec = make_spec({4}, dtype("float32"));
  auto codec = make_filter(R"({"offset":1000,"scale":100,"dtype":"<f4","astype":"<i4"})", spec);
  auto encoded = encode_values<std::int32_t>(*codec, std::vector<float>{1000.123f, 999.5f, 1001.005f, 0.0f});
  EXPECT_EQ(encoded, (std::vector<std::int32_t>{12, -50, 101, -100000}));
  EXPECT_EQ((decode_values<float>(*codec, encoded)),
            (std::vector<float>{0x1.f40f5cp+9f, 0x1.f3cp+9f, 0x1.f48148p+9f, 0.0f}));
}

TEST(FixedScaleOffsetFilter, IntegerArrayWithIntegerOperandsStaysInIntegers) {
  ArraySpec spec = make_spec({4}, dtype("int32"));
  auto codec = make_filter(R"({"offset":5,"scale":3,"dtype":"<i4","astype":"<i2"})", spec);
  auto encoded = encode_values<std::int16_t>(*codec, std::vector<std::int32_t>{10, 20, 35, -7});
  EXPECT_EQ(encoded, (std::vector<std::int16_t>{15, 45, 90, -36}));
  EXPECT_EQ((decode_values<std::int32_t>(*codec, encoded)), (std::vector<std::int32_t>{10, 20, 35, -7}));
}

TEST(FixedScaleOffsetFilter, EncodedSpecCarriesTheEncodedFillValue) {
  // A missing inner chunk of a shard is filled with the encoded spec's fill value; decoding it
  // must give the array's fill value back.
  ArraySpec spec = make_spec({4}, dtype("int32"));
  spec.fill_value = bytes_of(std::vector<std::int32_t>{20});
  auto codec = make_filter(R"({"offset":5,"scale":3,"dtype":"<i4","astype":"<i2"})", spec);
  EXPECT_EQ(codec->encoded_spec().fill_value, bytes_of(std::vector<std::int16_t>{45}));
  EXPECT_EQ(codec->encoded_spec().shape, spec.shape);
}

TEST(FixedScaleOffsetFilter, RoundTripsThroughChainsWithCompressors) {
  // Integer data scaled by 1 survives exactly, whatever the types.
  for (const char* type : {"int16", "int32", "float32", "float64"}) {
    ArraySpec spec = make_spec({16, 16}, dtype(type));
    const std::string typestr = spec.dtype.numpy_typestr(ByteOrder::little);
    std::vector<std::byte> data(spec.nbytes());
    visit_element_type(spec.dtype, "test", [&]<class T>(T) {
      for (std::size_t i = 0; i < 256; ++i) store_element(data.data(), i, numpy_cast<T>(static_cast<double>(i % 50) - 20));
    });
    expect_round_trip(fmt::format(R"([{{"name":"numcodecs.fixedscaleoffset",
                                        "configuration":{{"offset":-30,"scale":1,"dtype":"{}","astype":"<i4"}}}},
                                       {{"name":"bytes","configuration":{{"endian":"little"}}}},
                                       {{"name":"numcodecs.blosc","configuration":{{"cname":"lz4","clevel":5,"shuffle":1}}}}])",
                                  typestr),
                      spec, data);
  }
}

TEST(FixedScaleOffsetFilter, BadConfigurationIsInvalidMetadata) {
  ArraySpec spec = make_spec({10}, dtype("float32"));
  expect_error(ErrorKind::invalid_metadata, {"numcodecs.fixedscaleoffset", "dtype", "float64", "float32"},
               [&] { make_filter(R"({"offset":0,"scale":10,"dtype":"<f8","astype":"<i4"})", spec); });
  expect_error(ErrorKind::invalid_metadata, {"numcodecs.fixedscaleoffset", "scale"},
               [&] { make_filter(R"({"offset":0,"dtype":"<f4","astype":"<i4"})", spec); });
  expect_error(ErrorKind::invalid_metadata, {"numcodecs.fixedscaleoffset", "scale"},
               [&] { make_filter(R"({"offset":0,"scale":"ten","dtype":"<f4"})", spec); });
  expect_error(ErrorKind::invalid_metadata, {"numcodecs.fixedscaleoffset", "scale"},
               [&] { make_filter(R"({"offset":0,"scale":0,"dtype":"<f4"})", spec); });
}

}  // namespace
}  // namespace zarrdirect::codec

#include "codec/filter_support.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <limits>

#include "codec/codec_test_support.hpp"

namespace zarrdirect::codec {
namespace {

using namespace test;
using nlohmann::json;

constexpr std::string_view kCodec = "numcodecs.test";

DataType read(const json& configuration) { return read_filter_dtype(configuration, kCodec, "dtype"); }

TEST(FilterSupport, ReadsNumpyTypestringsInAnyByteOrderAndV3Names) {
  struct Case {
    const char* text;
    const char* type;
  };
  for (const Case& c : std::initializer_list<Case>{
           {"<i4", "int32"},     {">i4", "int32"},   {"=i4", "int32"},    {"|u1", "uint8"},
           {"<f8", "float64"},   {">f2", "float16"}, {"|b1", "bool"},     {"<c16", "complex128"},
           // What zarr-python 3 passes on from the user: NumPy shorthands without a byte order...
           {"i4", "int32"},      {"u2", "uint16"},   {"f8", "float64"},   {"c8", "complex64"},
           {"i8", "int64"},      {"b1", "bool"},
           // ...and Zarr v3 names.
           {"int16", "int16"},   {"uint64", "uint64"}, {"float32", "float32"}, {"bool", "bool"},
           {"complex64", "complex64"}}) {
    SCOPED_TRACE(c.text);
    // Filters run in native order, so the stored byte order is not part of the result.
    EXPECT_EQ(read(json{{"dtype", c.text}}), dtype(c.type));
  }
}

TEST(FilterSupport, MissingOrMistypedDtypeFieldsAreMetadataErrorsNamingCodecAndField) {
  expect_error(ErrorKind::invalid_metadata, {"numcodecs.test", "\"dtype\"", "missing"}, [] { read(json::object()); });
  expect_error(ErrorKind::invalid_metadata, {"numcodecs.test", "\"dtype\"", "string"}, [] { read(json{{"dtype", 4}}); });
  expect_error(ErrorKind::invalid_metadata, {"numcodecs.test", "\"dtype\"", "string"},
               [] { read(json{{"dtype", nullptr}}); });
  // The field named is the one asked for, not always "dtype".
  expect_error(ErrorKind::invalid_metadata, {"numcodecs.test", "\"astype\""},
               [] { read_filter_dtype(json{{"astype", 1.5}}, kCodec, "astype"); });
}

TEST(FilterSupport, UnsupportedTypesKeepTheirKindAndGainTheCodecAndField) {
  for (const char* text : {"<U4", "|S8", "|O", "O8", "<M8", "int31", "float", "x", "", "<i3", "<i4 "}) {
    SCOPED_TRACE(text);
    try {
      read(json{{"dtype", text}});
      ADD_FAILURE() << "accepted " << text;
    } catch (const Error& e) {
      const std::string message = e.what();
      EXPECT_EQ(e.kind(), ErrorKind::unsupported) << message;
      EXPECT_TRUE(message.starts_with("codec numcodecs.test configuration: \"dtype\": ")) << message;
    }
  }
  // Object arrays say why they are refused.
  expect_error(ErrorKind::unsupported, {"pickle"}, [] { read(json{{"dtype", "|O"}}); });
}

TEST(FilterSupport, OptionalDtypeFallsBackOnlyWhenAbsentOrNull) {
  const DataType fallback = dtype("float32");
  auto optional = [&](const json& configuration) {
    return read_optional_filter_dtype(configuration, kCodec, "astype", fallback);
  };
  EXPECT_EQ(optional(json::object()), fallback);
  EXPECT_EQ(optional(json{{"astype", nullptr}}), fallback);
  EXPECT_EQ(optional(json{{"dtype", "<u2"}}), fallback);  // another field does not count
  EXPECT_EQ(optional(json{{"astype", "<u2"}}), dtype("uint16"));
  EXPECT_EQ(optional(json{{"astype", "int8"}}), dtype("int8"));
  expect_error(ErrorKind::invalid_metadata, {"\"astype\"", "string"}, [&] { optional(json{{"astype", 2}}); });
  expect_error(ErrorKind::unsupported, {"\"astype\""}, [&] { optional(json{{"astype", "<U2"}}); });
}

TEST(FilterSupport, ConfiguredDtypeMustBeTheDecodedArraysType) {
  const ArraySpec spec = make_spec({4}, dtype("int16"));
  EXPECT_NO_THROW(require_decoded_dtype(kCodec, "dtype", dtype("int16"), spec));
  // Same size, other kind; same kind, other size: both refused, with both types named.
  expect_error(ErrorKind::invalid_metadata, {"numcodecs.test", "\"dtype\"", "uint16", "int16"},
               [&] { require_decoded_dtype(kCodec, "dtype", dtype("uint16"), spec); });
  expect_error(ErrorKind::invalid_metadata, {"numcodecs.test", "\"decode_dtype\"", "int32", "int16"},
               [&] { require_decoded_dtype(kCodec, "decode_dtype", dtype("int32"), spec); });
}

TEST(FilterSupport, RealNumberAndFloatTypeChecks) {
  for (const char* name : {"int8", "int64", "uint8", "uint64", "float16", "float32", "float64"})
    EXPECT_NO_THROW(require_real_number_type(kCodec, "dtype", dtype(name))) << name;
  for (const char* name : {"bool", "complex64", "complex128"})
    expect_error(ErrorKind::invalid_metadata, {"numcodecs.test", "\"dtype\"", name, "integer and floating"},
                 [&] { require_real_number_type(kCodec, "dtype", dtype(name)); });

  for (const char* name : {"float16", "float32", "float64"})
    EXPECT_NO_THROW(require_float_type(kCodec, "astype", dtype(name))) << name;
  for (const char* name : {"bool", "int32", "uint8", "complex64"})
    expect_error(ErrorKind::invalid_metadata, {"numcodecs.test", "\"astype\"", name, "floating"},
                 [&] { require_float_type(kCodec, "astype", dtype(name)); });
}

TEST(FilterSupport, NumbersAreReadAsDoublesWhateverTheirJsonType) {
  auto number = [](const json& configuration) { return require_number(configuration, kCodec, "scale"); };
  EXPECT_EQ(number(json{{"scale", 10}}), 10.0);
  EXPECT_EQ(number(json{{"scale", -3}}), -3.0);
  EXPECT_EQ(number(json{{"scale", 0.125}}), 0.125);
  EXPECT_EQ(number(json::parse(R"({"scale": 18446744073709551615})")), 18446744073709551615.0);
  EXPECT_EQ(number(json::parse(R"({"scale": 1e300})")), 1e300);
  expect_error(ErrorKind::invalid_metadata, {"numcodecs.test", "\"scale\"", "missing"},
               [&] { number(json{{"offset", 1}}); });
  for (const json& bad : {json("1"), json(true), json(nullptr), json::array({1}), json::object()})
    expect_error(ErrorKind::invalid_metadata, {"numcodecs.test", "\"scale\"", "must be a number"},
                 [&] { number(json{{"scale", bad}}); });
}

// A filter for the base class's tests: uint8 stored as int16 plus 1000.
class PlusThousand final : public FilterCodec {
 public:
  PlusThousand(const ArraySpec& decoded, bool encode_fill)
      : FilterCodec("test.plus_thousand", decoded, DataType{ScalarKind::signed_int, 2}) {
    if (encode_fill) encode_fill_value();
  }
  void decode(ByteSpan encoded, MutableByteSpan decoded) const override {
    for (std::size_t i = 0; i < element_count(); ++i) {
      std::int16_t value = 0;
      std::memcpy(&value, encoded.data() + 2 * i, 2);
      decoded[i] = static_cast<std::byte>(value - 1000);
    }
  }
  using FilterCodec::decoded_spec;
  using FilterCodec::element_count;

 protected:
  void encode_elements(const std::byte* decoded, std::byte* encoded, std::size_t count) const override {
    for (std::size_t i = 0; i < count; ++i) {
      const auto value = static_cast<std::int16_t>(std::to_integer<int>(decoded[i]) + 1000);
      std::memcpy(encoded + 2 * i, &value, 2);
    }
  }
};

TEST(FilterSupport, FilterCodecKeepsNameAndShapeAndChangesOnlyTheType) {
  ArraySpec decoded = make_spec({2, 3}, dtype("uint8"));
  decoded.fill_value = {std::byte{7}};
  PlusThousand filter(decoded, true);
  EXPECT_EQ(filter.name(), "test.plus_thousand");
  EXPECT_EQ(filter.element_count(), 6u);
  EXPECT_EQ(filter.decoded_spec().dtype, dtype("uint8"));
  EXPECT_EQ(filter.encoded_spec().shape, decoded.shape);
  EXPECT_EQ(filter.encoded_spec().dtype, dtype("int16"));
  EXPECT_EQ(filter.encoded_spec().nbytes(), 12u);
  // The fill value is encoded like any element: missing inner chunks decode back to 7.
  ASSERT_EQ(filter.encoded_spec().fill_value.size(), 2u);
  std::int16_t fill = 0;
  std::memcpy(&fill, filter.encoded_spec().fill_value.data(), 2);
  EXPECT_EQ(fill, 1007);

  // encode() runs the element kernel over the whole chunk; decode inverts it.
  const std::vector<std::uint8_t> values{0, 1, 2, 100, 200, 255};
  const auto data = bytes_of(values);
  std::vector<std::byte> encoded(filter.encoded_spec().nbytes(), std::byte{0xee});
  filter.encode(data, encoded);
  EXPECT_EQ(values_of<std::int16_t>(encoded), (std::vector<std::int16_t>{1000, 1001, 1002, 1100, 1200, 1255}));
  std::vector<std::byte> decoded_back(data.size());
  filter.decode(encoded, decoded_back);
  EXPECT_EQ(decoded_back, data);
}

TEST(FilterSupport, FilterCodecLeavesTheFillValueAloneWhenTheSpecHasNone) {
  ArraySpec decoded = make_spec({4}, dtype("uint8"));
  decoded.fill_value.clear();  // a spec made without a fill value
  PlusThousand without(decoded, true);
  EXPECT_TRUE(without.encoded_spec().fill_value.empty());
  // And a filter that never asks for it has none either.
  decoded.fill_value = {std::byte{1}};
  PlusThousand unasked(decoded, false);
  EXPECT_TRUE(unasked.encoded_spec().fill_value.empty());
}

}  // namespace
}  // namespace zarrdirect::codec

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "zarrdirect/error.hpp"
#include "zarrdirect/metadata.hpp"

namespace zarrdirect {
namespace {

using nlohmann::json;

json minimal() {
  return json::parse(R"({
    "zarr_format": 2, "shape": [10, 20], "chunks": [4, 5], "dtype": "<u2", "fill_value": 3,
    "order": "C", "compressor": null, "filters": null
  })");
}

ArrayMetadata parse(const json& doc, const json& attrs = json::object()) {
  return parse_v2_array_metadata(doc, attrs, "arr/.zarray");
}

void expect_error(const json& doc, ErrorKind kind, std::initializer_list<std::string_view> fragments) {
  try {
    parse(doc);
    ADD_FAILURE() << "accepted: " << doc.dump();
  } catch (const Error& e) {
    std::string message = e.what();
    EXPECT_EQ(e.kind(), kind) << message;
    EXPECT_NE(message.find("arr/.zarray"), std::string::npos) << message;
    for (auto fragment : fragments) EXPECT_NE(message.find(fragment), std::string::npos) << message;
  }
}

const json& codec_named(const ArrayMetadata& m, std::string_view name) {
  for (const auto& codec : m.codecs)
    if (codec["name"] == name) return codec;
  static const json none;
  ADD_FAILURE() << "no codec " << name << " in " << m.codecs.dump();
  return none;
}

TEST(V2Metadata, Minimal) {
  ArrayMetadata m = parse(minimal(), {{"units", "m"}});
  EXPECT_EQ(m.zarr_format, 2);
  EXPECT_EQ(m.shape, (std::vector<std::uint64_t>{10, 20}));
  EXPECT_EQ(m.chunk_shape, (std::vector<std::uint64_t>{4, 5}));
  EXPECT_EQ(m.dtype, (DataType{ScalarKind::unsigned_int, 2}));
  EXPECT_EQ(m.chunk_key_encoding.kind, ChunkKeyEncoding::Kind::v2);
  EXPECT_EQ(m.chunk_key_encoding.separator, '.');
  EXPECT_EQ(m.attributes["units"], "m");
  ASSERT_EQ(m.codecs.size(), 1u);
  EXPECT_EQ(m.codecs[0]["name"], "bytes");
  EXPECT_EQ(m.codecs[0]["configuration"]["endian"], "little");
}

TEST(V2Metadata, OrderFBecomesATransposeWithReversedAxes) {
  json doc = minimal();
  doc["shape"] = {4, 5, 6};
  doc["chunks"] = {2, 5, 3};
  doc["order"] = "F";
  auto m = parse(doc);
  ASSERT_EQ(m.codecs.size(), 2u);
  EXPECT_EQ(m.codecs[0]["name"], "transpose");
  EXPECT_EQ(m.codecs[0]["configuration"]["order"], json::array({2, 1, 0}));
  EXPECT_EQ(m.codecs[1]["name"], "bytes");
  // One dimension: F and C are the same layout, no transpose.
  doc["shape"] = {4};
  doc["chunks"] = {2};
  EXPECT_EQ(parse(doc).codecs.size(), 1u);
  doc["order"] = "K";
  expect_error(doc, ErrorKind::invalid_metadata, {"order"});
  doc["order"] = 1;
  expect_error(doc, ErrorKind::invalid_metadata, {"order"});
}

TEST(V2Metadata, ByteOrder) {
  json doc = minimal();
  doc["dtype"] = ">f8";
  doc["fill_value"] = "NaN";
  auto m = parse(doc);
  EXPECT_EQ(codec_named(m, "bytes")["configuration"]["endian"], "big");
  double fill;
  std::memcpy(&fill, m.fill_value.data(), 8);
  EXPECT_TRUE(std::isnan(fill));
  doc["dtype"] = "|u1";
  doc["fill_value"] = 0;
  EXPECT_FALSE(codec_named(parse(doc), "bytes")["configuration"].contains("endian"));
}

TEST(V2Metadata, FiltersBecomeNumcodecsEntriesAndTheirEncodedTypeSetsTheEndian) {
  json doc = minimal();
  doc["dtype"] = "<f8";
  doc["filters"] = json::parse(R"([{"id": "fixedscaleoffset", "offset": 0, "scale": 10, "dtype": "<f8", "astype": ">u2"}])");
  auto m = parse(doc);
  ASSERT_EQ(m.codecs.size(), 2u);
  EXPECT_EQ(m.codecs[0]["name"], "numcodecs.fixedscaleoffset");
  EXPECT_EQ(m.codecs[0]["configuration"]["scale"], 10);
  EXPECT_FALSE(m.codecs[0]["configuration"].contains("id"));
  EXPECT_EQ(m.codecs[1]["configuration"]["endian"], "big");
  doc["filters"] = json::parse(R"([{"id": "delta", "dtype": "<i4", "encode_dtype": "|i1"}])");
  EXPECT_FALSE(codec_named(parse(doc), "bytes")["configuration"].contains("endian"));
  doc["filters"] = json::parse(R"([{"id": "delta", "astype": 4}])");
  expect_error(doc, ErrorKind::invalid_metadata, {"filters[].astype"});
  doc["filters"] = json::parse(R"([{"id": "delta", "astype": "|O"}])");
  expect_error(doc, ErrorKind::unsupported, {"dtype"});
  doc["filters"] = json::parse(R"([{"dtype": "<i4"}])");
  expect_error(doc, ErrorKind::invalid_metadata, {"id"});
  doc["filters"] = json::parse(R"(["delta"])");
  expect_error(doc, ErrorKind::invalid_metadata, {"filters[]"});
  doc["filters"] = json::object();
  expect_error(doc, ErrorKind::invalid_metadata, {"filters"});
}

// Shuffles, checksums and packbits that end the filters act on the stored bytes: after the bytes
// codec, in their order, before the compressor. A checksum before an arithmetic filter is refused.
TEST(V2Metadata, ByteFiltersThatEndTheListFollowTheBytesCodec) {
  json doc = minimal();
  doc["dtype"] = "<i4";
  doc["compressor"] = json::parse(R"({"id": "zlib", "level": 1})");
  doc["filters"] = json::parse(
      R"([{"id": "delta", "dtype": "<i4"}, {"id": "shuffle", "elementsize": 4}, {"id": "crc32", "location": "end"},
          {"id": "fletcher32"}])");
  auto m = parse(doc);
  std::vector<std::string> names;
  for (const auto& codec : m.codecs) names.push_back(codec["name"]);
  EXPECT_EQ(names, (std::vector<std::string>{"numcodecs.delta", "bytes", "numcodecs.shuffle", "numcodecs.crc32",
                                             "numcodecs.fletcher32", "numcodecs.zlib"}));
  EXPECT_EQ(m.codecs[3]["configuration"]["location"], "end");
  doc["filters"] = json::parse(R"([{"id": "adler32"}, {"id": "delta", "dtype": "<i4"}])");
  expect_error(doc, ErrorKind::unsupported, {"\"adler32\"", "followed by an arithmetic filter"});
}

// numcodecs views a filter's input as the filter's dtype: Delta(dtype="<i4") on a ">i4" array
// filters byte-swapped values, and zarr-python reads back what it wrote that way. zarrdirect read
// such arrays as garbage; they are refused, naming the filter's dtype.
TEST(V2Metadata, FiltersOfTheOtherByteOrderAreRefused) {
  json doc = minimal();
  doc["dtype"] = ">i4";
  doc["filters"] = json::parse(R"([{"id": "delta", "dtype": "<i4"}])");
  expect_error(doc, ErrorKind::unsupported, {"filters[].dtype", "\"<i4\"", "little-endian", "big-endian"});
  doc["dtype"] = "<f8";
  doc["filters"] = json::parse(R"([{"id": "astype", "encode_dtype": "<f4", "decode_dtype": ">f8"}])");
  expect_error(doc, ErrorKind::unsupported, {"filters[].decode_dtype"});
  // After an astype to big-endian, the next filter sees big-endian data.
  doc["filters"] = json::parse(R"([{"id": "fixedscaleoffset", "dtype": "<f8", "astype": ">i4", "scale": 1, "offset": 0},
                                   {"id": "delta", "dtype": "<i4"}])");
  expect_error(doc, ErrorKind::unsupported, {"filters[].dtype", "\"<i4\""});
  doc["filters"][1]["dtype"] = ">i4";
  EXPECT_NO_THROW(parse(doc));
  // The same order, or one-byte types, are what they were.
  doc["dtype"] = ">i4";
  doc["filters"] = json::parse(R"([{"id": "delta", "dtype": ">i4", "astype": "|i1"}, {"id": "delta", "dtype": "|i1"}])");
  EXPECT_NO_THROW(parse(doc));
}

TEST(V2Metadata, CompressorBecomesTheLastCodec) {
  json doc = minimal();
  doc["compressor"] = {{"id", "zstd"}, {"level", 3}};
  auto m = parse(doc);
  ASSERT_EQ(m.codecs.size(), 2u);
  EXPECT_EQ(m.codecs[1]["name"], "numcodecs.zstd");
  EXPECT_EQ(m.codecs[1]["configuration"]["level"], 3);
  doc["compressor"] = "zstd";
  expect_error(doc, ErrorKind::invalid_metadata, {"compressor"});
  doc["compressor"] = {{"id", 3}};
  expect_error(doc, ErrorKind::invalid_metadata, {"compressor.id"});
}

TEST(V2Metadata, DimensionSeparator) {
  json doc = minimal();
  doc["dimension_separator"] = "/";
  EXPECT_EQ(parse(doc).chunk_key_encoding.key(std::vector<std::uint64_t>{1, 2}), "1/2");
  doc["dimension_separator"] = nullptr;
  EXPECT_EQ(parse(doc).chunk_key_encoding.key(std::vector<std::uint64_t>{1, 2}), "1.2");
  for (json bad : {json("/.."), json(""), json("\\"), json(1)}) {
    doc["dimension_separator"] = bad;
    expect_error(doc, ErrorKind::invalid_metadata, {"dimension_separator"});
  }
}

TEST(V2Metadata, FillValues) {
  json doc = minimal();
  doc["fill_value"] = nullptr;
  EXPECT_EQ(parse(doc).fill_value, std::vector<std::byte>(2));
  doc.erase("fill_value");
  EXPECT_EQ(parse(doc).fill_value, std::vector<std::byte>(2));
  doc["dtype"] = "|b1";
  doc["fill_value"] = false;
  EXPECT_EQ(parse(doc).fill_value, std::vector<std::byte>(1));
  doc["fill_value"] = "x";
  expect_error(doc, ErrorKind::invalid_metadata, {"fill_value"});
  doc["dtype"] = "<i2";
  doc["fill_value"] = 40000;
  expect_error(doc, ErrorKind::invalid_metadata, {"fill_value"});
}

TEST(V2Metadata, RefusedAndMissing) {
  for (const char* field : {"zarr_format", "shape", "chunks", "dtype"}) {
    json doc = minimal();
    doc.erase(field);
    expect_error(doc, ErrorKind::invalid_metadata, {field, "missing"});
  }
  json doc = minimal();
  doc["zarr_format"] = 3;
  expect_error(doc, ErrorKind::invalid_metadata, {"zarr_format"});
  doc = minimal();
  doc["dtype"] = "|O";
  expect_error(doc, ErrorKind::unsupported, {"dtype", "object"});
  doc["dtype"] = json::parse(R"([["a", "<i4"]])");
  expect_error(doc, ErrorKind::unsupported, {"dtype"});
  doc["dtype"] = "<U8";
  expect_error(doc, ErrorKind::unsupported, {"dtype"});
  doc = minimal();
  doc["chunks"] = {4};
  expect_error(doc, ErrorKind::invalid_metadata, {"chunks", "dimensions"});
  doc["chunks"] = {4, 0};
  expect_error(doc, ErrorKind::invalid_metadata, {"chunks", "zero"});
  doc["chunks"] = {4, -5};
  expect_error(doc, ErrorKind::invalid_metadata, {"chunks", "negative"});
  doc = minimal();
  doc["shape"] = 10;
  expect_error(doc, ErrorKind::invalid_metadata, {"shape"});
}

}  // namespace
}  // namespace zarrdirect

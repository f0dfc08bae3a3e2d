#include <gtest/gtest.h>

#include "zarrdirect/error.hpp"
#include "zarrdirect/metadata.hpp"

namespace zarrdirect {
namespace {

using nlohmann::json;

json minimal() {
  return json::parse(R"({
    "zarr_format": 3, "node_type": "array", "shape": [10, 20], "data_type": "uint16",
    "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [4, 5]}},
    "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
    "fill_value": 7, "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}]
  })");
}

ArrayMetadata parse(const json& doc) { return parse_v3_array_metadata(doc, "arr/zarr.json"); }

// Parsing fails with `kind`, naming the file and every one of `fragments`.
void expect_error(const json& doc, ErrorKind kind, std::initializer_list<std::string_view> fragments) {
  try {
    parse(doc);
    ADD_FAILURE() << "accepted: " << doc.dump();
  } catch (const Error& e) {
    std::string message = e.what();
    EXPECT_EQ(e.kind(), kind) << message;
    EXPECT_NE(message.find("arr/zarr.json"), std::string::npos) << message;
    for (auto fragment : fragments) EXPECT_NE(message.find(fragment), std::string::npos) << message;
  }
}

TEST(V3Metadata, Minimal) {
  ArrayMetadata m = parse(minimal());
  EXPECT_EQ(m.zarr_format, 3);
  EXPECT_EQ(m.shape, (std::vector<std::uint64_t>{10, 20}));
  EXPECT_EQ(m.chunk_shape, (std::vector<std::uint64_t>{4, 5}));
  EXPECT_EQ(m.dtype, (DataType{ScalarKind::unsigned_int, 2}));
  std::uint16_t fill;
  ASSERT_EQ(m.fill_value.size(), 2u);
  std::memcpy(&fill, m.fill_value.data(), 2);
  EXPECT_EQ(fill, 7);
  EXPECT_EQ(m.fill_value_json, json(7));
  EXPECT_EQ(m.chunk_key_encoding.kind, ChunkKeyEncoding::Kind::v3_default);
  EXPECT_EQ(m.chunk_key_encoding.separator, '/');
  ASSERT_EQ(m.codecs.size(), 1u);
  EXPECT_EQ(m.codecs[0]["name"], "bytes");
  EXPECT_EQ(m.codecs[0]["configuration"]["endian"], "little");
  EXPECT_TRUE(m.dimension_names.empty());
  EXPECT_EQ(m.rank(), 2u);
  EXPECT_EQ(m.num_elements(), 200u);
  EXPECT_EQ(m.chunk_grid_shape(), (std::vector<std::uint64_t>{3, 4}));
  EXPECT_EQ(m.num_chunks(), 12u);
  EXPECT_EQ(m.chunk_nbytes(), 40u);
}

TEST(V3Metadata, ChunkKeyEncodings) {
  json doc = minimal();
  doc.erase("chunk_key_encoding");
  EXPECT_EQ(parse(doc).chunk_key_encoding.separator, '/');
  doc["chunk_key_encoding"] = {{"name", "default"}, {"configuration", {{"separator", "."}}}};
  EXPECT_EQ(parse(doc).chunk_key_encoding.key(std::vector<std::uint64_t>{1, 2}), "c.1.2");
  doc["chunk_key_encoding"] = {{"name", "v2"}};
  EXPECT_EQ(parse(doc).chunk_key_encoding.key(std::vector<std::uint64_t>{1, 2}), "1.2");
  doc["chunk_key_encoding"] = {{"name", "v2"}, {"configuration", {{"separator", "/"}}}};
  EXPECT_EQ(parse(doc).chunk_key_encoding.key(std::vector<std::uint64_t>{1, 2}), "1/2");
  doc["chunk_key_encoding"] = "v2";
  EXPECT_EQ(parse(doc).chunk_key_encoding.key(std::vector<std::uint64_t>{1, 2}), "1.2");
  doc["chunk_key_encoding"] = {{"name", "default"}, {"configuration", {{"separator", "../"}}}};
  expect_error(doc, ErrorKind::invalid_metadata, {"separator"});
  doc["chunk_key_encoding"] = {{"name", "default"}, {"configuration", {{"separator", 1}}}};
  expect_error(doc, ErrorKind::invalid_metadata, {"separator"});
  doc["chunk_key_encoding"] = {{"name", "fancy"}};
  expect_error(doc, ErrorKind::unsupported, {"chunk_key_encoding", "fancy"});
  doc["chunk_key_encoding"] = 5;
  expect_error(doc, ErrorKind::invalid_metadata, {"chunk_key_encoding"});
}

TEST(V3Metadata, MustUnderstand) {
  json doc = minimal();
  doc["my_extension"] = {{"must_understand", false}, {"whatever", 1}};
  EXPECT_NO_THROW(parse(doc));
  doc["my_extension"] = {{"must_understand", true}};
  expect_error(doc, ErrorKind::unsupported, {"my_extension", "must_understand"});
  doc["my_extension"] = {{"whatever", 1}};
  expect_error(doc, ErrorKind::unsupported, {"my_extension"});
  doc["my_extension"] = "text";
  expect_error(doc, ErrorKind::unsupported, {"my_extension"});
  doc["my_extension"] = {{"must_understand", "false"}};
  expect_error(doc, ErrorKind::unsupported, {"my_extension"});
  // must_understand on a codec entry must be a boolean.
  doc = minimal();
  doc["codecs"][0]["must_understand"] = 0;
  expect_error(doc, ErrorKind::invalid_metadata, {"must_understand"});
}

TEST(V3Metadata, StorageTransformers) {
  json doc = minimal();
  doc["storage_transformers"] = json::array();
  EXPECT_NO_THROW(parse(doc));
  doc["storage_transformers"] = json::array({{{"name", "caching"}}});
  expect_error(doc, ErrorKind::unsupported, {"storage_transformers"});
  doc["storage_transformers"] = json::object();
  expect_error(doc, ErrorKind::invalid_metadata, {"storage_transformers"});
}

TEST(V3Metadata, DimensionNames) {
  json doc = minimal();
  doc["dimension_names"] = json::array({"y", nullptr});
  auto m = parse(doc);
  ASSERT_EQ(m.dimension_names.size(), 2u);
  EXPECT_EQ(m.dimension_names[0], "y");
  EXPECT_EQ(m.dimension_names[1], std::nullopt);
  doc["dimension_names"] = nullptr;
  EXPECT_TRUE(parse(doc).dimension_names.empty());
  doc["dimension_names"] = json::array({"y"});
  expect_error(doc, ErrorKind::invalid_metadata, {"dimension_names"});
  doc["dimension_names"] = json::array({"y", 3});
  expect_error(doc, ErrorKind::invalid_metadata, {"dimension_names"});
  doc["dimension_names"] = "yx";
  expect_error(doc, ErrorKind::invalid_metadata, {"dimension_names"});
}

TEST(V3Metadata, AttributesAndNamedConfigForms) {
  json doc = minimal();
  doc["attributes"] = {{"a", 1}};
  EXPECT_EQ(parse(doc).attributes["a"], 1);
  doc["attributes"] = json::array();
  expect_error(doc, ErrorKind::invalid_metadata, {"attributes"});
  doc = minimal();
  doc["data_type"] = {{"name", "float32"}, {"configuration", json::object()}};
  doc["fill_value"] = "NaN";
  doc["codecs"] = json::array({{{"name", "bytes"}, {"configuration", {{"endian", "big"}}}}, "crc32c"});
  auto m = parse(doc);
  EXPECT_EQ(m.dtype, (DataType{ScalarKind::floating, 4}));
  EXPECT_EQ(m.codecs[1]["name"], "crc32c");
  EXPECT_TRUE(m.codecs[1]["configuration"].is_object());
  doc["codecs"][1] = {{"name", "crc32c"}, {"configuration", "x"}};
  expect_error(doc, ErrorKind::invalid_metadata, {"codecs[].configuration"});
  doc["codecs"][1] = {{"configuration", json::object()}};
  expect_error(doc, ErrorKind::invalid_metadata, {"name"});
}

TEST(V3Metadata, MissingAndWronglyTypedFields) {
  for (const char* field : {"zarr_format", "node_type", "shape", "data_type", "chunk_grid", "fill_value", "codecs"}) {
    json doc = minimal();
    doc.erase(field);
    expect_error(doc, ErrorKind::invalid_metadata, {field, "missing"});
  }
  json doc = minimal();
  doc["zarr_format"] = 2;
  expect_error(doc, ErrorKind::invalid_metadata, {"zarr_format"});
  doc = minimal();
  doc["zarr_format"] = "3";
  expect_error(doc, ErrorKind::invalid_metadata, {"zarr_format"});
  doc = minimal();
  doc["node_type"] = "group";
  expect_error(doc, ErrorKind::invalid_metadata, {"node_type"});
  doc = minimal();
  doc["shape"] = "10";
  expect_error(doc, ErrorKind::invalid_metadata, {"shape"});
  doc["shape"] = json::array({10, -1});
  expect_error(doc, ErrorKind::invalid_metadata, {"shape", "negative"});
  doc["shape"] = json::array({10, 2.5});
  expect_error(doc, ErrorKind::invalid_metadata, {"shape"});
  doc = minimal();
  doc["chunk_grid"]["configuration"]["chunk_shape"] = json::array({4, 0});
  expect_error(doc, ErrorKind::invalid_metadata, {"chunk_shape", "zero"});
  doc["chunk_grid"]["configuration"]["chunk_shape"] = json::array({4});
  expect_error(doc, ErrorKind::invalid_metadata, {"chunk_shape", "dimensions"});
  doc = minimal();
  doc["chunk_grid"] = {{"name", "rectilinear"}, {"configuration", json::object()}};
  expect_error(doc, ErrorKind::unsupported, {"chunk_grid"});
  doc = minimal();
  doc["chunk_grid"] = {{"name", "regular"}};
  expect_error(doc, ErrorKind::invalid_metadata, {"chunk_shape"});
  doc = minimal();
  doc["data_type"] = "float8";
  expect_error(doc, ErrorKind::unsupported, {"data_type", "float8"});
  doc["data_type"] = 5;
  expect_error(doc, ErrorKind::invalid_metadata, {"data_type"});
  doc = minimal();
  doc["codecs"] = json::array();
  expect_error(doc, ErrorKind::invalid_metadata, {"codecs"});
  doc["codecs"] = json::object();
  expect_error(doc, ErrorKind::invalid_metadata, {"codecs"});
  doc = minimal();
  doc["fill_value"] = "seven";
  expect_error(doc, ErrorKind::invalid_metadata, {"fill_value"});
  doc["fill_value"] = 70000;
  expect_error(doc, ErrorKind::invalid_metadata, {"fill_value"});
  expect_error(json::array(), ErrorKind::invalid_metadata, {"zarr_format"});
  expect_error(json("text"), ErrorKind::invalid_metadata, {"zarr_format"});
}

TEST(V3Metadata, SizesThatOverflowOrExceedLimits) {
  json doc = minimal();
  doc["chunk_grid"]["configuration"]["chunk_shape"] = json::array({4294967296ull, 4294967296ull});
  expect_error(doc, ErrorKind::invalid_metadata, {"chunk_shape", "overflow"});
  doc["chunk_grid"]["configuration"]["chunk_shape"] = json::array({65536, 262144});  // 32 GiB of uint16
  expect_error(doc, ErrorKind::unsupported, {"chunk_shape"});
  doc = minimal();
  doc["shape"] = json::array({4294967296ull, 4294967296ull});
  expect_error(doc, ErrorKind::invalid_metadata, {"shape"});
  doc["shape"] = json::array({~std::uint64_t{0}, 1});
  expect_error(doc, ErrorKind::invalid_metadata, {"shape"});
  doc = minimal();
  json many = json::array();
  for (int i = 0; i < 33; ++i) many.push_back(1);
  doc["shape"] = many;
  doc["chunk_grid"]["configuration"]["chunk_shape"] = many;
  expect_error(doc, ErrorKind::invalid_metadata, {"shape", "32"});
}

TEST(V3Metadata, ZeroDimensionalAndEmptyArrays) {
  json doc = minimal();
  doc["shape"] = json::array();
  doc["chunk_grid"]["configuration"]["chunk_shape"] = json::array();
  auto m = parse(doc);
  EXPECT_EQ(m.rank(), 0u);
  EXPECT_EQ(m.num_elements(), 1u);
  EXPECT_EQ(m.num_chunks(), 1u);
  doc = minimal();
  doc["shape"] = json::array({0, 20});
  m = parse(doc);
  EXPECT_EQ(m.num_elements(), 0u);
  EXPECT_EQ(m.num_chunks(), 0u);
}

}  // namespace
}  // namespace zarrdirect

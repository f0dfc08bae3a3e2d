#include <gtest/gtest.h>

#include "metadata/json_fields.hpp"
#include "metadata/validate.hpp"
#include "test_support.hpp"
#include "zarrdirect/error.hpp"
#include "zarrdirect/metadata.hpp"

namespace zarrdirect {
namespace {

const char* kV3 = R"({"zarr_format": 3, "node_type": "array", "shape": [4], "data_type": "uint8",
  "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}}, "fill_value": 0,
  "codecs": [{"name": "bytes"}]})";
const char* kV2 = R"({"zarr_format": 2, "shape": [6], "chunks": [3], "dtype": "<i4", "fill_value": 0,
  "order": "C", "compressor": null, "filters": null})";

ErrorKind kind_of(const std::filesystem::path& path, std::string* message = nullptr) {
  try {
    read_array_metadata(path);
  } catch (const Error& e) {
    if (message) *message = e.what();
    return e.kind();
  }
  ADD_FAILURE() << "read " << path;
  return ErrorKind::cuda;
}

TEST(ReadMetadata, DetectsTheFormat) {
  test::TempDir dir;
  test::write_text(dir / "v3/zarr.json", kV3);
  test::write_text(dir / "v2/.zarray", kV2);
  test::write_text(dir / "v2/.zattrs", R"({"title": "x"})");
  EXPECT_EQ(read_array_metadata(dir / "v3").zarr_format, 3);
  auto v2 = read_array_metadata(dir / "v2");
  EXPECT_EQ(v2.zarr_format, 2);
  EXPECT_EQ(v2.attributes["title"], "x");
  // zarr.json wins when both are there.
  test::write_text(dir / "v2/zarr.json", kV3);
  EXPECT_EQ(read_array_metadata(dir / "v2").zarr_format, 3);
}

TEST(ReadMetadata, NotAnArray) {
  test::TempDir dir;
  std::string message;
  std::filesystem::create_directories(dir / "empty");
  EXPECT_EQ(kind_of(dir / "empty", &message), ErrorKind::invalid_argument);
  EXPECT_NE(message.find("not a Zarr array"), std::string::npos);
  test::write_text(dir / "group/.zgroup", R"({"zarr_format": 2})");
  EXPECT_EQ(kind_of(dir / "group", &message), ErrorKind::invalid_argument);
  EXPECT_NE(message.find("group"), std::string::npos);
  EXPECT_EQ(kind_of(dir / "nowhere"), ErrorKind::io);
  test::write_text(dir / "file", "x");
  EXPECT_EQ(kind_of(dir / "file"), ErrorKind::io);
}

TEST(ReadMetadata, BadJsonNamesTheFile) {
  test::TempDir dir;
  std::string message;
  test::write_text(dir / "a/zarr.json", "{\"zarr_format\": 3,");
  EXPECT_EQ(kind_of(dir / "a", &message), ErrorKind::invalid_metadata);
  EXPECT_NE(message.find("zarr.json"), std::string::npos) << message;
  test::write_text(dir / "b/.zarray", "[1, 2]");
  EXPECT_EQ(kind_of(dir / "b", &message), ErrorKind::invalid_metadata);
  EXPECT_NE(message.find(".zarray"), std::string::npos) << message;
  test::write_text(dir / "c/.zarray", kV2);
  test::write_text(dir / "c/.zattrs", "{oops");
  EXPECT_EQ(kind_of(dir / "c", &message), ErrorKind::invalid_metadata);
  EXPECT_NE(message.find(".zattrs"), std::string::npos) << message;
  test::write_text(dir / "d/zarr.json", "");
  EXPECT_EQ(kind_of(dir / "d"), ErrorKind::invalid_metadata);
}

TEST(ReadMetadata, OversizedMetadataIsRefusedBeforeReading) {
  test::TempDir dir;
  test::write_text(dir / "a/zarr.json", "{");
  std::filesystem::resize_file(dir / "a/zarr.json", std::uintmax_t{1} << 30);  // sparse
  EXPECT_EQ(kind_of(dir / "a"), ErrorKind::corrupt_data);
}

TEST(JsonFields, ParseDocument) {
  EXPECT_TRUE(parse_json_document(R"({"a": 1})", "f").is_object());
  EXPECT_THROW(parse_json_document("[]", "f"), Error);
  EXPECT_THROW(parse_json_document("{\"a\": }", "f"), Error);
  EXPECT_THROW(parse_json_document("", "f"), Error);
  EXPECT_THROW(parse_json_document("{} {}", "f"), Error);
  EXPECT_THROW(parse_json_document(std::string_view("{\"a\":\0}", 7), "f"), Error);
}

TEST(JsonFields, DeeplyNestedDocumentsAreRefusedNotACrash) {
  // A million nested lists: parsing must not exhaust the stack or be accepted.
  std::string deep = "{\"attributes\": " + std::string(1'000'000, '[') + std::string(1'000'000, ']') + "}";
  try {
    parse_json_document(deep, "deep/zarr.json");
    ADD_FAILURE() << "accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::invalid_metadata);
    EXPECT_NE(std::string(e.what()).find("deep/zarr.json"), std::string::npos);
  }
  // Modest nesting, as real attributes have, is fine.
  std::string modest = "{\"a\": " + std::string(100, '[') + std::string(100, ']') + "}";
  EXPECT_NO_THROW(parse_json_document(modest, "f"));
}

TEST(JsonFields, ExtentLists) {
  using nlohmann::json;
  EXPECT_EQ(parse_extent_list(json::array({0, 3}), "shape", "f", false), (std::vector<std::uint64_t>{0, 3}));
  EXPECT_THROW(parse_extent_list(json::array({0, 3}), "chunks", "f", true), Error);
  EXPECT_THROW(parse_extent_list(json::array({true}), "shape", "f", false), Error);
  EXPECT_THROW(parse_extent_list(json::array({"1"}), "shape", "f", false), Error);
  EXPECT_THROW(parse_extent_list(json::object(), "shape", "f", false), Error);
  EXPECT_THROW(parse_extent_list(json(nullptr), "shape", "f", false), Error);
}

TEST(Validate, ExtentsBeyondSignedSixtyFourBitsAreRefused) {
  // Elements fit in 64 bits, but sizes that NumPy (and byte strides) cannot index are refused.
  ArrayMetadata m;
  m.shape = {std::uint64_t{1} << 63};
  m.chunk_shape = {1024};
  m.dtype = {ScalarKind::unsigned_int, 1};
  m.fill_value = std::vector<std::byte>(1);
  try {
    validate_array_metadata(m, "big/zarr.json");
    ADD_FAILURE() << "accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::invalid_metadata);
    EXPECT_NE(std::string(e.what()).find("shape"), std::string::npos) << e.what();
  }
  m.shape = {(std::uint64_t{1} << 63) - 1};
  EXPECT_NO_THROW(validate_array_metadata(m, "big/zarr.json"));
  m.dtype = {ScalarKind::unsigned_int, 2};
  m.fill_value = std::vector<std::byte>(2);
  EXPECT_THROW(validate_array_metadata(m, "big/zarr.json"), Error);
}

TEST(Validate, FillValueSizeMustMatch) {
  ArrayMetadata m;
  m.shape = {4};
  m.chunk_shape = {2};
  m.dtype = {ScalarKind::unsigned_int, 2};
  m.fill_value = std::vector<std::byte>(1);
  EXPECT_THROW(validate_array_metadata(m, "f"), Error);
}

}  // namespace
}  // namespace zarrdirect

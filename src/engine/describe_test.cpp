#include "zarrdirect/describe.hpp"

#include <gtest/gtest.h>

#include <filesystem>

#include "test_support.hpp"

namespace zarrdirect {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

fs::path corpus_array(const std::string& name) { return test::conformance_dir() / "tensorstore" / name / "array"; }

// The total size of the chunk files below `folder` (everything but metadata documents).
std::uint64_t chunk_file_bytes(const fs::path& folder, std::uint64_t* count) {
  std::uint64_t bytes = 0;
  *count = 0;
  for (const auto& entry : fs::recursive_directory_iterator(folder)) {
    const auto name = entry.path().filename().string();
    if (!entry.is_regular_file() || name == "zarr.json" || name.starts_with(".z")) continue;
    bytes += entry.file_size();
    ++*count;
  }
  return bytes;
}

TEST(Describe, HasEveryKeyOfTheSchema) {
  json doc = describe(Array::open(corpus_array("v3_u1_dimnames")));
  std::vector<std::string> keys;
  for (const auto& item : doc.items()) keys.push_back(item.key());
  std::sort(keys.begin(), keys.end());
  EXPECT_EQ(keys, (std::vector<std::string>{"attributes", "bytes_stored", "chunks", "chunks_stored", "chunks_total",
                                            "codecs", "dimension_names", "dtype", "fill_value", "nbytes", "node_type",
                                            "order", "path", "shape", "shards", "zarr_format"}));
  EXPECT_EQ(doc["node_type"], "array");
  EXPECT_EQ(doc["zarr_format"], 3);
  EXPECT_TRUE(doc["dimension_names"].is_array());
  EXPECT_TRUE(doc["attributes"].is_object());
}

TEST(Describe, ShardedArraysReportInnerChunksAndShards) {
  const fs::path path = corpus_array("v3_sharded_u2");
  json doc = describe(Array::open(path));
  EXPECT_EQ(doc["shape"], json({70, 50, 30}));
  EXPECT_EQ(doc["dtype"], "uint16");
  EXPECT_EQ(doc["chunks"], json({8, 8, 8}));
  EXPECT_EQ(doc["shards"], json({32, 32, 16}));
  EXPECT_EQ(doc["order"], "C");
  EXPECT_EQ(doc["codecs"][0]["name"], "sharding_indexed");
  EXPECT_TRUE(doc["dimension_names"].is_null());
  EXPECT_EQ(doc["nbytes"], 70 * 50 * 30 * 2);
  EXPECT_EQ(doc["chunks_total"], 3 * 2 * 2);
  std::uint64_t files = 0;
  const std::uint64_t bytes = chunk_file_bytes(path, &files);
  EXPECT_EQ(doc["chunks_stored"], files);
  EXPECT_EQ(doc["bytes_stored"], bytes);
}

TEST(Describe, UnshardedV2InFortranOrder) {
  Array array = Array::open(corpus_array("v2_u2_forder"));
  json doc = describe(array);
  EXPECT_EQ(doc["zarr_format"], 2);
  EXPECT_TRUE(doc["shards"].is_null());
  EXPECT_EQ(doc["order"], "F");
  EXPECT_EQ(doc["chunks"], json(array.metadata().chunk_shape));
  EXPECT_EQ(describe(Array::open(corpus_array("v2_u2_gzip")))["order"], "C");
  // A v2 compressor shows as a codec of the chain.
  json gzip = describe(Array::open(corpus_array("v2_u2_gzip")))["codecs"];
  EXPECT_NE(gzip.dump().find("gzip"), std::string::npos) << gzip.dump();
}

TEST(Describe, ChunksMatchTheMetadataWhenNotSharded) {
  Array array = Array::open(corpus_array("v3_i4_gzip"));
  json doc = describe(array);
  EXPECT_EQ(doc["chunks"], json(array.metadata().chunk_shape));
  EXPECT_EQ(doc["fill_value"], array.metadata().fill_value_json);
}

}  // namespace
}  // namespace zarrdirect

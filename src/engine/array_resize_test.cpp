// Array::resize: the elements kept equal the old ones, chunks (and shards) wholly outside the new
// shape are erased, every element a resize adds reads as the fill value (also where an edge chunk
// held other bytes past the old shape), and refused shapes change nothing.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <filesystem>
#include <fstream>
#include <iterator>

#include <nlohmann/json.hpp>

#include "test_support.hpp"
#include "zarrdirect/array.hpp"

namespace zarrdirect {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

constexpr std::int32_t kFill = -7;

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

json v3_doc(const json& shape, const json& chunks, const json& codecs) {
  return {{"zarr_format", 3},
          {"node_type", "array"},
          {"shape", shape},
          {"data_type", "int32"},
          {"chunk_grid", {{"name", "regular"}, {"configuration", {{"chunk_shape", chunks}}}}},
          {"chunk_key_encoding", {{"name", "default"}, {"configuration", {{"separator", "/"}}}}},
          {"fill_value", kFill},
          {"codecs", codecs},
          {"attributes", {{"kept", true}}}};
}

json plain_codecs() { return json::array({{{"name", "bytes"}, {"configuration", {{"endian", "little"}}}}, {{"name", "zstd"}, {"configuration", {{"level", 1}}}}}); }

json sharded_codecs() {
  return json::array({{{"name", "sharding_indexed"},
                       {"configuration",
                        {{"chunk_shape", {2, 3}},
                         {"codecs", plain_codecs()},
                         {"index_codecs", json::array({{{"name", "bytes"}, {"configuration", {{"endian", "little"}}}}})}}}}});
}

json v2_doc(const json& shape, const json& chunks) {
  return {{"zarr_format", 2}, {"shape", shape},       {"chunks", chunks}, {"dtype", "<i4"},
          {"fill_value", kFill}, {"order", "C"},      {"compressor", nullptr}, {"filters", nullptr}};
}

std::int32_t value_at(std::uint64_t i, std::uint64_t j) { return static_cast<std::int32_t>(i * 100 + j); }

// The array's elements, row by row.
std::vector<std::int32_t> elements(const Array& array) {
  const NDArray result = array.read();
  const auto bytes = copy_to_host(result);
  std::vector<std::int32_t> out(bytes.size() / 4);
  std::memcpy(out.data(), bytes.data(), bytes.size());
  return out;
}

Array filled(const fs::path& path, const json& doc) {
  Array array = Array::create(path, doc);
  const auto& shape = array.metadata().shape;
  std::vector<std::int32_t> data;
  for (std::uint64_t i = 0; i < shape[0]; ++i)
    for (std::uint64_t j = 0; j < shape[1]; ++j) data.push_back(value_at(i, j));
  Source source;
  source.data = data.data();
  array.write({}, source);
  return array;
}

// Every element of `array` (shape rows x cols) is the original where i < keep_rows and j <
// keep_cols, the fill value elsewhere.
void expect_kept_and_filled(const Array& array, std::uint64_t keep_rows, std::uint64_t keep_cols) {
  const auto& shape = array.metadata().shape;
  const auto got = elements(array);
  ASSERT_EQ(got.size(), shape[0] * shape[1]);
  for (std::uint64_t i = 0; i < shape[0]; ++i)
    for (std::uint64_t j = 0; j < shape[1]; ++j) {
      const std::int32_t expected = i < keep_rows && j < keep_cols ? value_at(i, j) : kFill;
      ASSERT_EQ(got[i * shape[1] + j], expected) << "at (" << i << ", " << j << ")";
    }
}

TEST(ArrayResize, ShrinkErasesChunksOutsideAndGrowingShowsTheFillValue) {
  test::TempDir dir;
  Array array = filled(dir / "a", v3_doc({10, 12}, {4, 5}, plain_codecs()));
  ASSERT_TRUE(fs::exists(dir / "a/c/2/2"));
  array.update_attributes({{"missing", std::numeric_limits<double>::quiet_NaN()}});
  array.resize({6, 7});
  // The rest of zarr.json as it was, a NaN attribute included (not turned into null).
  EXPECT_TRUE(std::isnan(Array::open(dir / "a").metadata().attributes["missing"].get<double>()));
  EXPECT_EQ(array.metadata().shape, (std::vector<std::uint64_t>{6, 7}));
  expect_kept_and_filled(array, 6, 7);
  // The grid is now 2 x 2: rows 2 and columns 2 of chunks are gone; c/1/1 is kept.
  EXPECT_FALSE(fs::exists(dir / "a/c/2/0"));
  EXPECT_FALSE(fs::exists(dir / "a/c/0/2"));
  EXPECT_TRUE(fs::exists(dir / "a/c/1/1"));
  // Reopened: the file says the same, other members as they were.
  const Array reopened = Array::open(dir / "a");
  EXPECT_EQ(reopened.metadata().shape, (std::vector<std::uint64_t>{6, 7}));
  EXPECT_EQ(reopened.metadata().attributes["kept"], true);
  // Back to the old shape: what was dropped does not come back, in the erased chunks or in the
  // kept edge chunks (c/1/1 held rows 6-7 and columns 7-9 before).
  array.resize({10, 12});
  expect_kept_and_filled(array, 6, 7);
  expect_kept_and_filled(Array::open(dir / "a"), 6, 7);
}

TEST(ArrayResize, GrowingKeepsEveryElement) {
  test::TempDir dir;
  Array array = filled(dir / "a", v3_doc({5, 6}, {4, 4}, plain_codecs()));
  array.resize({9, 13});
  expect_kept_and_filled(array, 5, 6);
  array.resize({9, 3});  // one axis shrinks, the other stays
  expect_kept_and_filled(array, 5, 3);
}

TEST(ArrayResize, ShardedArraysEraseWholeShardsAndFillInnerChunks) {
  test::TempDir dir;
  Array array = filled(dir / "s", v3_doc({8, 12}, {4, 6}, sharded_codecs()));
  array.resize({5, 4});
  expect_kept_and_filled(array, 5, 4);
  EXPECT_FALSE(fs::exists(dir / "s/c/0/1"));
  EXPECT_TRUE(fs::exists(dir / "s/c/1/0"));
  array.resize({8, 12});
  expect_kept_and_filled(array, 5, 4);
}

TEST(ArrayResize, ZarrV2DottedKeys) {
  test::TempDir dir;
  Array array = filled(dir / "v2", v2_doc({7, 7}, {3, 3}));
  array.resize({4, 5});
  expect_kept_and_filled(array, 4, 5);
  EXPECT_FALSE(fs::exists(dir / "v2/2.0"));
  EXPECT_TRUE(fs::exists(dir / "v2/1.1"));
  const json stored = json::parse(read_text(dir / "v2/.zarray"));
  EXPECT_EQ(stored["shape"], json({4, 5}));
  EXPECT_EQ(stored["dtype"], "<i4");
}

// A writer may leave anything past the array's edge inside an edge chunk (the format does not say
// what): growing shows the fill value there, not those bytes.
TEST(ArrayResize, GrowingPastAnEdgeChunkIgnoresWhatItHeldBeyondTheShape) {
  test::TempDir dir;
  test::write_text(dir / "e/.zarray", v2_doc({1, 5}, {1, 4}).dump());
  const std::int32_t first[4] = {1, 2, 3, 4};
  const std::int32_t edge[4] = {5, 99, 99, 99};  // element (0, 4), then bytes past the shape
  test::write_bytes(dir / "e/0.0", std::vector<std::uint8_t>(reinterpret_cast<const std::uint8_t*>(first),
                                                             reinterpret_cast<const std::uint8_t*>(first) + 16));
  test::write_bytes(dir / "e/0.1", std::vector<std::uint8_t>(reinterpret_cast<const std::uint8_t*>(edge),
                                                             reinterpret_cast<const std::uint8_t*>(edge) + 16));
  Array array = Array::open(dir / "e");
  array.resize({1, 8});
  EXPECT_EQ(elements(array), (std::vector<std::int32_t>{1, 2, 3, 4, 5, kFill, kFill, kFill}));
}

TEST(ArrayResize, RefusedShapesChangeNothing) {
  test::TempDir dir;
  Array array = filled(dir / "a", v3_doc({10, 12}, {4, 5}, plain_codecs()));
  const std::string before = read_text(dir / "a/zarr.json");
  try {
    array.resize({10});
    ADD_FAILURE() << "a resize to another number of dimensions";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("has 2 dimensions"), std::string::npos) << e.what();
  }
  EXPECT_THROW(array.resize({std::uint64_t{1} << 40, std::uint64_t{1} << 40}), Error);  // too many elements
  EXPECT_EQ(read_text(dir / "a/zarr.json"), before);
  EXPECT_TRUE(fs::exists(dir / "a/c/2/2"));
  expect_kept_and_filled(array, 10, 12);
  array.resize({10, 12});  // the same shape: nothing to do
  EXPECT_EQ(read_text(dir / "a/zarr.json"), before);
}

}  // namespace
}  // namespace zarrdirect

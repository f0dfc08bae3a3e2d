// The write path end to end through the public API: create, write (whole, partial, strided,
// sharded), read back with the reader, and what stays on disk.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <map>
#include <numeric>
#include <random>
#include <sstream>

#include "codec/crc32c.hpp"
#include "codec/sharding.hpp"
#include "test_support.hpp"
#include "zarrdirect/array.hpp"
#include "zarrdirect/group.hpp"

namespace zarrdirect {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

// Every file below `root`, with its contents: to check that a refused write changes nothing.
std::map<std::string, std::string> snapshot(const fs::path& root) {
  std::map<std::string, std::string> files;
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    std::string name = fs::relative(entry.path(), root).string();
    if (entry.is_directory()) {
      files[name + "/"] = "";
      continue;
    }
    std::ifstream in(entry.path(), std::ios::binary);
    std::stringstream buffer;
    buffer << in.rdbuf();
    files[name] = buffer.str();
  }
  return files;
}

// An in-memory copy of what the array should hold (C order, native bytes).
struct Model {
  std::vector<std::uint64_t> shape;
  std::size_t element = 1;
  std::vector<std::byte> bytes;

  std::uint64_t count() const {
    std::uint64_t n = 1;
    for (auto e : shape) n *= e;
    return n;
  }
  // Copies `values` (C order, region shape) into the region.
  void write(const Region& region, const std::vector<std::byte>& values) {
    auto rshape = region_shape(region);
    std::uint64_t n = 1;
    for (auto e : rshape) n *= e;
    for (std::uint64_t i = 0; i < n; ++i) {
      std::uint64_t rest = i, offset = 0, stride = 1;
      for (std::size_t d = shape.size(); d-- > 0;) {
        offset += (region[d].start + rest % rshape[d]) * stride;
        rest /= rshape[d];
        stride *= shape[d];
      }
      std::memcpy(bytes.data() + offset * element, values.data() + i * element, element);
    }
  }
};

// Values of `dtype` that every codec under test keeps exactly: small integers (with runs of
// zeros, so that some chunks are all fill value).
std::vector<std::byte> values_for(const DataType& dtype, std::uint64_t count, std::mt19937& rng, bool with_zeros = true) {
  std::vector<std::byte> out(count * dtype.size);
  std::uniform_int_distribution<int> pick(1, 100);
  for (std::uint64_t i = 0; i < count; ++i) {
    int v = (with_zeros && (i / 37) % 3 == 0) ? 0 : pick(rng);
    std::byte* at = out.data() + i * dtype.size;
    switch (dtype.kind) {
      case ScalarKind::floating:
        if (dtype.size == 4) {
          float f = static_cast<float>(v);
          std::memcpy(at, &f, 4);
        } else {
          double f = v;
          std::memcpy(at, &f, 8);
        }
        break;
      default: {
        std::uint64_t u = static_cast<std::uint64_t>(v);
        std::memcpy(at, &u, dtype.size);  // little-endian machine: the low bytes
      }
    }
  }
  return out;
}

std::vector<std::byte> read_all(const Array& array) {
  NDArray result = array.read();
  auto* data = static_cast<const std::byte*>(result.data());
  return {data, data + result.nbytes()};
}

Source source_of(const std::vector<std::byte>& values, const Region& region, const DataType& dtype) {
  Source source;
  source.data = values.data();
  source.shape = region_shape(region);
  source.dtype = dtype;
  return source;
}

struct CodecCase {
  std::string name;
  json metadata;
};

json v3_array(const std::string& dtype, json codecs, json fill = 0) {
  return {{"zarr_format", 3},
          {"node_type", "array"},
          {"shape", {37, 50}},
          {"data_type", dtype},
          {"chunk_grid", {{"name", "regular"}, {"configuration", {{"chunk_shape", {16, 20}}}}}},
          {"chunk_key_encoding", {{"name", "default"}, {"configuration", {{"separator", "/"}}}}},
          {"fill_value", fill},
          {"codecs", codecs},
          {"attributes", {{"made_by", "writer_test"}}},
          {"dimension_names", {"y", "x"}}};
}

json v2_array(const std::string& dtype, json compressor, json filters = nullptr, std::string order = "C",
              std::string separator = ".") {
  return {{"zarr_format", 2},      {"shape", {37, 50}},    {"chunks", {16, 20}},
          {"dtype", dtype},        {"fill_value", 0},      {"order", order},
          {"compressor", compressor}, {"filters", filters}, {"dimension_separator", separator},
          {"attributes", {{"made_by", "writer_test"}}}};
}

json bytes_le() { return {{"name", "bytes"}, {"configuration", {{"endian", "little"}}}}; }

json sharded(json inner_codecs, std::string index_location, json outer_chunks = {32, 40}) {
  json doc = v3_array("uint16", json::array({{{"name", "sharding_indexed"},
                                              {"configuration",
                                               {{"chunk_shape", {8, 10}},
                                                {"codecs", inner_codecs},
                                                {"index_codecs", json::array({bytes_le(), {{"name", "crc32c"}}})},
                                                {"index_location", index_location}}}}}));
  doc["chunk_grid"]["configuration"]["chunk_shape"] = outer_chunks;
  return doc;
}

std::vector<CodecCase> codec_cases() {
  std::vector<CodecCase> cases;
  auto v3 = [&](std::string name, std::string dtype, json codecs) { cases.push_back({name, v3_array(dtype, codecs)}); };
  v3("v3_bytes_little", "uint16", json::array({bytes_le()}));
  v3("v3_bytes_big", "int32", json::array({{{"name", "bytes"}, {"configuration", {{"endian", "big"}}}}}));
  v3("v3_transpose", "uint16", json::array({{{"name", "transpose"}, {"configuration", {{"order", {1, 0}}}}}, bytes_le()}));
  v3("v3_crc32c", "uint16", json::array({bytes_le(), {{"name", "crc32c"}}}));
  v3("v3_zstd", "uint16", json::array({bytes_le(), {{"name", "zstd"}, {"configuration", {{"level", 3}, {"checksum", true}}}}}));
  v3("v3_blosc", "uint16",
     json::array({bytes_le(), {{"name", "blosc"},
                               {"configuration",
                                {{"cname", "lz4"}, {"clevel", 5}, {"shuffle", "shuffle"}, {"typesize", 2}, {"blocksize", 0}}}}}));
  v3("v3_gzip", "float32", json::array({bytes_le(), {{"name", "gzip"}, {"configuration", {{"level", 6}}}}}));
  v3("v3_numcodecs_zlib", "uint16", json::array({bytes_le(), {{"name", "numcodecs.zlib"}, {"configuration", {{"level", 1}}}}}));
  v3("v3_numcodecs_bz2", "uint16", json::array({bytes_le(), {{"name", "numcodecs.bz2"}, {"configuration", {{"level", 9}}}}}));
  v3("v3_numcodecs_lz4", "uint16", json::array({bytes_le(), {{"name", "numcodecs.lz4"}, {"configuration", {{"acceleration", 1}}}}}));
  v3("v3_transpose_zstd_crc", "float64",
     json::array({{{"name", "transpose"}, {"configuration", {{"order", {1, 0}}}}}, bytes_le(),
                  {{"name", "zstd"}, {"configuration", {{"level", 1}, {"checksum", false}}}}, {{"name", "crc32c"}}}));
  cases.push_back({"v3_sharded_end", sharded(json::array({bytes_le(), {{"name", "zstd"}, {"configuration", {{"level", 1}}}}}), "end")});
  cases.push_back({"v3_sharded_start", sharded(json::array({bytes_le()}), "start")});
  cases.push_back({"v3_sharded_edge", sharded(json::array({bytes_le(), {{"name", "crc32c"}}}), "end", {24, 30})});
  json v3_v2keys = v3_array("uint8", json::array({bytes_le()}));
  v3_v2keys["chunk_key_encoding"] = {{"name", "v2"}, {"configuration", {{"separator", "."}}}};
  cases.push_back({"v3_v2_key_encoding", v3_v2keys});
  json v3_nan = v3_array("float32", json::array({bytes_le()}), "NaN");
  cases.push_back({"v3_fill_nan", v3_nan});

  auto v2 = [&](std::string name, std::string dtype, json compressor, json filters = nullptr, std::string order = "C",
                std::string separator = ".") {
    cases.push_back({name, v2_array(dtype, compressor, filters, order, separator)});
  };
  v2("v2_raw", "<u2", nullptr);
  v2("v2_big_endian_F", ">i4", nullptr, nullptr, "F");
  v2("v2_slash_keys", "<u2", {{"id", "zstd"}, {"level", 3}}, nullptr, "C", "/");
  v2("v2_zstd", "<u2", {{"id", "zstd"}, {"level", 3}});
  v2("v2_blosc", "<u2", {{"id", "blosc"}, {"cname", "zstd"}, {"clevel", 3}, {"shuffle", 2}, {"blocksize", 0}});
  v2("v2_gzip", "<f8", {{"id", "gzip"}, {"level", 5}});
  v2("v2_zlib", "<i4", {{"id", "zlib"}, {"level", 1}});
  v2("v2_bz2", "<u2", {{"id", "bz2"}, {"level", 9}});
  v2("v2_lz4", "<f4", {{"id", "lz4"}, {"acceleration", 1}});
  v2("v2_delta", "<i4", {{"id", "zlib"}, {"level", 1}}, json::array({{{"id", "delta"}, {"dtype", "<i4"}, {"astype", "<i4"}}}));
  v2("v2_fixedscaleoffset", "<f8", nullptr,
     json::array({{{"id", "fixedscaleoffset"}, {"offset", 0}, {"scale", 1}, {"dtype", "<f8"}, {"astype", "<i4"}}}));
  v2("v2_astype", "<i4", nullptr, json::array({{{"id", "astype"}, {"encode_dtype", "<i2"}, {"decode_dtype", "<i4"}}}));
  v2("v2_quantize", "<f8", nullptr, json::array({{{"id", "quantize"}, {"digits", 2}, {"dtype", "<f8"}, {"astype", "<f8"}}}));
  v2("v2_bitround", "<f4", nullptr, json::array({{{"id", "bitround"}, {"keepbits", 10}}}));
  v2("v2_shuffle", "<f8", {{"id", "zstd"}, {"level", 1}}, json::array({{{"id", "shuffle"}, {"elementsize", 8}}}));
  return cases;
}

class WriteRoundTrip : public ::testing::TestWithParam<CodecCase> {};

TEST_P(WriteRoundTrip, WholeAndPartialWritesReadBack) {
  const auto& c = GetParam();
  test::TempDir dir;
  Array array = Array::create(dir / "a", c.metadata);
  const auto& metadata = array.metadata();
  const DataType dtype = metadata.dtype;
  Model model{metadata.shape, dtype.size, {}};
  model.bytes.resize(model.count() * dtype.size);
  for (std::uint64_t i = 0; i < model.count(); ++i)
    std::memcpy(model.bytes.data() + i * dtype.size, metadata.fill_value.data(), dtype.size);
  // Before any write: all fill value.
  EXPECT_EQ(read_all(array), model.bytes) << c.name;

  std::mt19937 rng(42);
  Region whole = full_region(metadata.shape);
  auto values = values_for(dtype, model.count(), rng);
  WriteStats stats = array.write(whole, source_of(values, whole, dtype));
  model.write(whole, values);
  EXPECT_EQ(read_all(Array::open(dir / "a")), model.bytes) << c.name;
  EXPECT_GT(stats.files_written, 0u);

  // Regions that cut chunks (and shards) in part, including the array's edges.
  for (Region region : {Region{{3, 29}, {7, 44}}, Region{{0, 1}, {0, 50}}, Region{{30, 37}, {45, 50}},
                        Region{{16, 32}, {20, 40}}}) {
    auto part = values_for(dtype, model.count(), rng, false);
    part.resize(region_shape(region)[0] * region_shape(region)[1] * dtype.size);
    array.write(region, source_of(part, region, dtype));
    model.write(region, part);
    ASSERT_EQ(read_all(Array::open(dir / "a")), model.bytes) << c.name << " after writing " << to_string(region);
  }
  // No lock or temporary file stays behind.
  for (const auto& [name, contents] : snapshot(dir / "a")) EXPECT_EQ(name.find("__lock"), std::string::npos) << name;
}

INSTANTIATE_TEST_SUITE_P(Codecs, WriteRoundTrip, ::testing::ValuesIn(codec_cases()),
                         [](const auto& test_case) { return test_case.param.name; });

TEST(Write, CreateWritesTheMetadataTheReaderAccepts) {
  test::TempDir dir;
  auto cases = codec_cases();
  Array v3 = Array::create(dir / "v3", cases[0].metadata);
  EXPECT_TRUE(fs::exists(dir / "v3/zarr.json"));
  EXPECT_EQ(Array::open(dir / "v3").metadata().attributes["made_by"], "writer_test");
  EXPECT_EQ(Array::open(dir / "v3").metadata().dimension_names.size(), 2u);
  Array v2 = Array::create(dir / "v2", v2_array("<u2", nullptr));
  EXPECT_TRUE(fs::exists(dir / "v2/.zarray"));
  EXPECT_TRUE(fs::exists(dir / "v2/.zattrs"));
  EXPECT_FALSE(json::parse(std::ifstream(dir / "v2/.zarray")).contains("attributes"));
  EXPECT_EQ(Array::open(dir / "v2").metadata().attributes["made_by"], "writer_test");
  EXPECT_EQ(snapshot(dir / "v3").size(), 1u);  // metadata only: no chunk before a write
}

TEST(Write, BadMetadataWritesNothing) {
  test::TempDir dir;
  json bad = v3_array("uint16", json::array({bytes_le(), {{"name", "zstd"}, {"configuration", {{"level", "high"}}}}}));
  EXPECT_THROW(Array::create(dir / "a", bad), Error);
  json unknown = v3_array("uint16", json::array({bytes_le(), {{"name", "snappy9000"}}}));
  EXPECT_THROW(Array::create(dir / "b", unknown), Error);
  json no_format = {{"shape", {1}}};
  EXPECT_THROW(Array::create(dir / "c", no_format), Error);
  EXPECT_FALSE(fs::exists(dir / "a"));
  EXPECT_FALSE(fs::exists(dir / "b"));
  EXPECT_FALSE(fs::exists(dir / "c"));
}

// A URL is refused before anything is made: "http://h/a" must not become the local folders
// "http:/h/a" in the working directory.
TEST(Write, CreatingAtAUrlMakesNoLocalFolder) {
  test::TempDir dir;
  const fs::path previous = fs::current_path();
  fs::current_path(dir.path());
  auto expect_refused = [](auto&& create) {
    try {
      create();
      ADD_FAILURE() << "a URL was accepted as a place to create";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::unsupported) << e.what();
    }
  };
  expect_refused([] { Array::create("http://127.0.0.1:9/new", v3_array("uint16", json::array({bytes_le()}))); });
  expect_refused([] { Group::create("https://127.0.0.1:9/group", 3, json::object()); });
  const bool made_http = fs::exists("http:"), made_https = fs::exists("https:");
  fs::current_path(previous);
  EXPECT_FALSE(made_http);
  EXPECT_FALSE(made_https);
}

TEST(Write, ExistingNodesNeedOverwrite) {
  test::TempDir dir;
  auto doc = v3_array("uint16", json::array({bytes_le()}));
  Array array = Array::create(dir / "a", doc);
  std::vector<std::uint16_t> ones(37 * 50, 1);
  array.write({}, Source{ones.data(), {}, Device::cpu, nullptr, {}, {}});
  auto before = snapshot(dir / "a");
  for (const auto& other : {doc, v2_array("<u2", nullptr)}) {
    try {
      Array::create(dir / "a", other);
      ADD_FAILURE() << "created over an existing array";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::invalid_argument);
      EXPECT_NE(std::string(e.what()).find("overwrite"), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(Group::create(dir / "a"), Error);
  EXPECT_EQ(snapshot(dir / "a"), before);
  // With overwrite: the old node's metadata and chunks are gone.
  Array fresh = Array::create(dir / "a", v2_array("<u2", nullptr), true);
  EXPECT_EQ(snapshot(dir / "a").size(), 2u);  // .zarray, .zattrs
  EXPECT_FALSE(fs::exists(dir / "a/c"));
  auto all = read_all(fresh);
  EXPECT_TRUE(std::all_of(all.begin(), all.end(), [](std::byte b) { return b == std::byte{0}; }));
  Group group = Group::create(dir / "a", 2, {{"k", 1}}, true);
  EXPECT_EQ(group.zarr_format(), 2);
  EXPECT_EQ(group.attributes()["k"], 1);
  EXPECT_FALSE(fs::exists(dir / "a/.zarray"));
}

TEST(Write, GroupsOfBothFormats) {
  test::TempDir dir;
  Group v3 = Group::create(dir / "g3", 3, {{"ome", {{"version", "0.5"}}}});
  Array::create(dir / "g3/image", v3_array("uint16", json::array({bytes_le()})));
  Group reopened = Group::open(dir / "g3");
  EXPECT_EQ(reopened.zarr_format(), 3);
  EXPECT_EQ(reopened.attributes()["ome"]["version"], "0.5");
  EXPECT_EQ(reopened.members(), std::vector<std::string>{"image"});
  Group v2 = Group::create(dir / "g2", 2);
  EXPECT_TRUE(fs::exists(dir / "g2/.zgroup"));
  EXPECT_FALSE(fs::exists(dir / "g2/.zattrs"));
  EXPECT_EQ(Group::open(dir / "g2").zarr_format(), 2);
}

TEST(Write, BadInputChangesNothingOnDisk) {
  test::TempDir dir;
  Array array = Array::create(dir / "a", v3_array("uint16", json::array({bytes_le()})));
  std::vector<std::uint16_t> values(37 * 50, 7);
  array.write({}, Source{values.data(), {}, Device::cpu, nullptr, {}, {}});
  const auto before = snapshot(dir / "a");
  auto expect_refused = [&](const Region& region, const Source& source, std::string_view needle) {
    try {
      array.write(region, source);
      ADD_FAILURE() << "accepted: " << needle;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::invalid_argument) << e.what();
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
    EXPECT_EQ(snapshot(dir / "a"), before);
  };
  Source plain{values.data(), {}, Device::cpu, nullptr, {}, {}};
  expect_refused({{0, 38}, {0, 50}}, plain, "dimension");
  expect_refused({{0, 10}, {40, 60}}, plain, "dimension");
  Source wrong_shape = plain;
  wrong_shape.shape = {10, 10};
  expect_refused({{0, 10}, {0, 20}}, wrong_shape, "shape");
  Source wrong_dtype = plain;
  wrong_dtype.dtype = DataType{ScalarKind::floating, 4};
  expect_refused({{0, 10}, {0, 20}}, wrong_dtype, "float32");
  Source bad_strides = plain;
  bad_strides.byte_strides = {2};
  expect_refused({{0, 10}, {0, 20}}, bad_strides, "strides");
  Source null_data = plain;
  null_data.data = nullptr;
  expect_refused({{0, 10}, {0, 20}}, null_data, "null");
#ifndef ZARRDIRECT_WITH_CUDA
  Source on_device = plain;
  on_device.device = Device::cuda;
  try {
    array.write({}, on_device);
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::unsupported);
  }
  EXPECT_EQ(snapshot(dir / "a"), before);
#endif
}

TEST(Write, StridedSources) {
  test::TempDir dir;
  Array array = Array::create(dir / "a", v3_array("int32", json::array({bytes_le()})));
  // The source is the transpose of a (50, 37) C-order buffer, and a region of every other column.
  std::vector<std::int32_t> transposed(50 * 37);
  for (std::size_t i = 0; i < transposed.size(); ++i) transposed[i] = static_cast<std::int32_t>(i) + 1;
  Source source{transposed.data(), {4, 4 * 37}, Device::cpu, nullptr, {37, 50}, {}};
  array.write({}, source);
  NDArray back = array.read();
  auto* values = static_cast<const std::int32_t*>(back.data());
  for (std::size_t y = 0; y < 37; ++y)
    for (std::size_t x = 0; x < 50; ++x) ASSERT_EQ(values[y * 50 + x], transposed[x * 37 + y]) << y << "," << x;
  // Every other element of a wider buffer: strides skip memory.
  std::vector<std::int32_t> wide(10 * 2 * 20, -1);
  for (std::size_t i = 0; i < 10 * 20; ++i) wide[2 * i] = static_cast<std::int32_t>(1000 + i);
  array.write({{5, 15}, {10, 30}}, Source{wide.data(), {2 * 4 * 20, 2 * 4}, Device::cpu, nullptr, {}, {}});
  back = array.read({{5, 15}, {10, 30}});
  values = static_cast<const std::int32_t*>(back.data());
  for (std::size_t i = 0; i < 200; ++i) ASSERT_EQ(values[i], static_cast<std::int32_t>(1000 + i));
}

TEST(Write, SlabChunksAreStoredStraightFromTheSource) {
  // Chunks of whole rows lie in a C-order source as one run each: written from the source's own
  // memory (HostSource::whole_chunk), the edge chunk padded, in both byte orders.
  for (const char* endian : {"little", "big"}) {
    test::TempDir dir;
    json doc = v3_array("uint16", json::array({{{"name", "bytes"}, {"configuration", {{"endian", endian}}}}}));
    doc["chunk_grid"]["configuration"]["chunk_shape"] = {8, 50};
    Array array = Array::create(dir / "a", doc);
    std::vector<std::uint16_t> values(37 * 50);
    std::iota(values.begin(), values.end(), std::uint16_t{3});
    const auto before = values;
    WriteStats stats = array.write({}, Source{values.data(), {}, Device::cpu, nullptr, {}, {}});
    EXPECT_EQ(stats.files_written, 5u);
    EXPECT_EQ(values, before);  // the source is only read (big endian swaps a copy)
    NDArray back = array.read();
    EXPECT_EQ(std::memcmp(back.data(), values.data(), values.size() * 2), 0) << endian;
    EXPECT_EQ(fs::file_size(dir / "a/c/4/0"), 8u * 50 * 2) << "the edge chunk is stored whole, padded";
  }
}

TEST(Write, FillChunksAreDroppedAndErasedUnlessKept) {
  test::TempDir dir;
  Array array = Array::create(dir / "a", v3_array("uint16", json::array({bytes_le()})));
  std::vector<std::uint16_t> values(37 * 50, 5);
  array.write({}, Source{values.data(), {}, Device::cpu, nullptr, {}, {}});
  EXPECT_TRUE(fs::exists(dir / "a/c/0/0"));
  // Zero the first chunk exactly: removed. Zero part of the next: rewritten, not removed.
  std::vector<std::uint16_t> zeros(16 * 30, 0);
  WriteStats stats = array.write({{0, 16}, {0, 30}}, Source{zeros.data(), {}, Device::cpu, nullptr, {}, {}});
  EXPECT_FALSE(fs::exists(dir / "a/c/0/0"));
  EXPECT_TRUE(fs::exists(dir / "a/c/0/1"));
  EXPECT_EQ(stats.files_erased, 1u);
  EXPECT_EQ(stats.chunks_merged, 1u);
  // A write of fill value where nothing is stored stores nothing.
  Array other = Array::create(dir / "b", v3_array("uint16", json::array({bytes_le()})));
  std::vector<std::uint16_t> all_zero(37 * 50, 0);
  other.write({}, Source{all_zero.data(), {}, Device::cpu, nullptr, {}, {}});
  EXPECT_EQ(snapshot(dir / "b").size(), 1u);
  // write_empty_chunks keeps them.
  WriteSettings keep;
  keep.write_empty_chunks = true;
  other.write({}, Source{all_zero.data(), {}, Device::cpu, nullptr, {}, {}}, keep);
  EXPECT_TRUE(fs::exists(dir / "b/c/0/0"));
  EXPECT_TRUE(fs::exists(dir / "b/c/2/2"));
}

// The decoded index of the stored shard `key`.
codec::ShardIndex stored_index(const Array& array, const std::string& key) {
  auto sharding = codec::ShardingCodec(array.metadata().codecs[0]["configuration"],
                                       codec::ArraySpec{array.metadata().chunk_shape, array.metadata().dtype,
                                                        array.metadata().fill_value});
  std::ifstream in(array.path() / key, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto span = std::as_bytes(std::span(bytes));
  return sharding.decode_index(span.subspan(sharding.index_offset(span.size()), sharding.index_nbytes()), span.size());
}

// A v2 fill_value of null ("no fill value"): zarr-python 2 reads a missing chunk as uninitialised
// memory, so a chunk of zeros erased by zarrdirect came back there as whatever the buffer held
// (the old values, in practice). Such chunks are stored, as zarr-python 2 stores them.
TEST(Write, ChunksOfZerosAreStoredWhenAV2ArrayHasNoFillValue) {
  test::TempDir dir;
  json doc = v2_array("<u2", nullptr);
  doc["fill_value"] = nullptr;
  Array array = Array::create(dir / "a", doc);
  std::vector<std::uint16_t> values(37 * 50, 7);
  array.write({}, Source{values.data(), {}, Device::cpu, nullptr, {}, {}});
  std::vector<std::uint16_t> zeros(16 * 20, 0);
  WriteStats stats = array.write({{0, 16}, {0, 20}}, Source{zeros.data(), {}, Device::cpu, nullptr, {}, {}});
  EXPECT_TRUE(fs::exists(dir / "a/0.0"));
  EXPECT_EQ(stats.files_erased, 0u);
  Array fresh = Array::create(dir / "b", doc);
  std::vector<std::uint16_t> all_zero(37 * 50, 0);
  fresh.write({}, Source{all_zero.data(), {}, Device::cpu, nullptr, {}, {}});
  EXPECT_TRUE(fs::exists(dir / "b/2.2"));
}

TEST(Write, ShardsLeaveFillInnerChunksOutAndKeepUntouchedOnes) {
  test::TempDir dir;
  Array array = Array::create(dir / "a", sharded(json::array({bytes_le(), {{"name", "zstd"}}}), "end"));
  // Shard 0/0 covers [0,32) x [0,40); inner chunks 8x10, 4x4 of them.
  std::vector<std::uint16_t> values(37 * 50, 0);
  for (std::size_t y = 0; y < 8; ++y)
    for (std::size_t x = 0; x < 10; ++x) values[y * 50 + x] = 9;  // only inner chunk (0,0)
  array.write({}, Source{values.data(), {}, Device::cpu, nullptr, {}, {}});
  auto index = stored_index(array, "c/0/0");
  EXPECT_FALSE(index[0].missing());
  for (std::size_t i = 1; i < 16; ++i) EXPECT_TRUE(index[i].missing()) << i;
  EXPECT_FALSE(fs::exists(dir / "a/c/1/1"));  // a shard of fill value only
  const auto kept = index[0];

  // Write part of inner chunk (1,1): it becomes present, (0,0) keeps its bytes.
  std::vector<std::uint16_t> patch(3 * 4, 4);
  WriteStats stats = array.write({{9, 12}, {11, 15}}, Source{patch.data(), {}, Device::cpu, nullptr, {}, {}});
  EXPECT_EQ(stats.chunks_merged, 1u);
  index = stored_index(array, "c/0/0");
  EXPECT_FALSE(index[5].missing());
  EXPECT_EQ(index[0].nbytes, kept.nbytes);
  NDArray back = array.read({{0, 16}, {0, 20}});
  auto* got = static_cast<const std::uint16_t*>(back.data());
  for (std::size_t y = 0; y < 16; ++y)
    for (std::size_t x = 0; x < 20; ++x) {
      std::uint16_t expected = (y < 8 && x < 10) ? 9 : (y >= 9 && y < 12 && x >= 11 && x < 15) ? 4 : 0;
      ASSERT_EQ(got[y * 20 + x], expected) << y << "," << x;
    }
  // Zeroing everything that was written removes the shard.
  std::vector<std::uint16_t> zeros(32 * 40, 0);
  array.write({{0, 32}, {0, 40}}, Source{zeros.data(), {}, Device::cpu, nullptr, {}, {}});
  EXPECT_FALSE(fs::exists(dir / "a/c/0/0"));
}

class ShardUpdates : public ::testing::TestWithParam<std::string> {};

// Two regions of one shard rewritten in turn: the shard is updated by appending (untouched
// inner chunks keep their stored offsets, the file grows), compacted once the replaced bytes
// would make up more than half of it (the file shrinks), never more than about twice its live
// bytes, and always reads back.
TEST_P(ShardUpdates, AppendThenCompactAndReadBack) {
  test::TempDir dir;
  Array array = Array::create(
      dir / "a", sharded(json::array({bytes_le(), {{"name", "zstd"}, {"configuration", {{"level", 1}}}}}), GetParam()));
  const DataType dtype = array.metadata().dtype;
  Model model{array.metadata().shape, dtype.size, {}};
  std::mt19937 rng(5);
  const Region whole = full_region(model.shape);
  model.bytes = values_for(dtype, model.count(), rng, false);
  array.write(whole, source_of(model.bytes, whole, dtype));
  const fs::path shard = dir / "a/c/0/0";
  const std::uint64_t index_bytes = 16 * 16 + 4;  // 4x4 inner chunks, crc32c

  int appends = 0, compactions = 0;
  for (int round = 0; round < 12; ++round) {
    const auto before = stored_index(array, "c/0/0");
    const std::uint64_t size_before = fs::file_size(shard);
    // Parts of inner chunks (0, 0), (0, 1), (1, 0), (1, 1) of shard 0/0 (8x10 each), or of
    // (2, 2), (2, 3), (3, 2), (3, 3): merges. (Rewriting only the chunks the last update
    // appended would just drop them from the copied prefix: the file would not grow.)
    const bool first = round % 2 == 0;
    const Region region = first ? Region{{5, 12}, {5, 16}} : Region{{17, 24}, {25, 36}};
    std::vector<std::byte> part = values_for(dtype, 7 * 11, rng, false);
    WriteStats stats = array.write(region, source_of(part, region, dtype));
    model.write(region, part);
    EXPECT_EQ(stats.chunks_merged, 1u);
    ASSERT_EQ(read_all(Array::open(dir / "a")), model.bytes) << "round " << round;

    const auto after = stored_index(array, "c/0/0");
    const std::uint64_t size_after = fs::file_size(shard);
    std::uint64_t live = 0;
    bool offsets_kept = true;
    for (std::uint64_t i = 0; i < 16; ++i) {
      ASSERT_FALSE(after[i].missing()) << i;
      live += after[i].nbytes;
      const bool touched = first ? (i == 0 || i == 1 || i == 4 || i == 5) : (i == 10 || i == 11 || i == 14 || i == 15);
      if (touched) continue;
      if (after[i].offset != before[i].offset) offsets_kept = false;
      ASSERT_EQ(after[i].nbytes, before[i].nbytes) << "inner chunk " << i << " was re-encoded";
    }
    if (offsets_kept && size_after > size_before) ++appends;
    if (!offsets_kept && size_after < size_before) ++compactions;
    ASSERT_LE(size_after, 2 * live + index_bytes) << "round " << round;
  }
  EXPECT_GT(appends, 0);
  EXPECT_GT(compactions, 0);
  // Other shards were not touched by these writes; no lock file stays.
  for (const auto& [name, contents] : snapshot(dir / "a")) EXPECT_EQ(name.find("__lock"), std::string::npos) << name;
}

// A write that fails in the middle of a shard (an inner chunk it must merge is damaged, after
// another inner chunk of that shard was already appended to the new file) leaves the shard's
// file exactly as it was, and no temporary file behind.
TEST_P(ShardUpdates, AFailureInsideAShardLeavesItsFileAsItWas) {
  test::TempDir dir;
  Array array = Array::create(
      dir / "a", sharded(json::array({bytes_le(), {{"name", "zstd"}, {"configuration", {{"level", 1}}}}}), GetParam()));
  const DataType dtype = array.metadata().dtype;
  std::mt19937 rng(9);
  const Region whole = full_region(array.metadata().shape);
  auto values = values_for(dtype, 37 * 50, rng, false);
  array.write(whole, source_of(values, whole, dtype));
  // Damage inner chunk (0, 1) of shard 0/0 (its zstd frame), keeping the index intact.
  const fs::path shard = dir / "a/c/0/0";
  const auto entry = stored_index(array, "c/0/0")[1];
  {
    std::fstream file(shard, std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(static_cast<std::streamoff>(entry.offset));
    std::string junk(static_cast<std::size_t>(entry.nbytes), '\x5a');
    file.write(junk.data(), static_cast<std::streamsize>(junk.size()));
  }
  const auto before = snapshot(dir / "a");
  // Rows 1-6 of inner chunks (0, 0) and (0, 1): both merged, (0, 0) first on one thread.
  const Region region{{1, 7}, {2, 18}};
  std::vector<std::byte> part = values_for(dtype, 6 * 16, rng, false);
  Settings one_thread;
  one_thread.threads = 1;
  try {
    array.write(region, source_of(part, region, dtype), {}, one_thread);
    ADD_FAILURE() << "the write succeeded";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("shard c/0/0"), std::string::npos) << e.what();
  }
  EXPECT_EQ(snapshot(dir / "a"), before);
}

INSTANTIATE_TEST_SUITE_P(IndexLocations, ShardUpdates, ::testing::Values("start", "end"));

// Hostile stored shards that a partial write must read (its index decoded, kept inner chunks
// copied file to file). Shard c/0/0 of the sharded test array: 4x4 inner chunks of 8x10 uint16,
// raw (160 bytes each), index of 16 entries + crc32c (260 bytes).
constexpr std::uint64_t kInnerBytes = 160;
constexpr std::uint64_t kIndexBytes = 16 * 16 + 4;
constexpr std::uint64_t kNone = ~std::uint64_t{0};

struct HostileShard {
  std::string name;
  // (offset, nbytes) per inner chunk, offsets counted from the start of the file.
  std::vector<std::pair<std::uint64_t, std::uint64_t>> entries;
  std::uint64_t body_bytes = 16 * kInnerBytes;  // body bytes besides the index
  std::string error;                            // what the message must say; empty: the write succeeds
  bool bad_checksum = false;
  std::uint64_t index_entries = 16;  // entries stored in the index (16: the right size)
};

// The file: a body of recognisable uint16 values (1000 + position) and the index, at the start
// (body after it) or the end.
std::string hostile_file(const HostileShard& c, bool start) {
  std::vector<std::uint64_t> raw;
  for (std::uint64_t i = 0; i < c.index_entries; ++i) {
    auto [offset, nbytes] = i < c.entries.size() ? c.entries[i] : std::pair{kNone, kNone};
    raw.push_back(offset);
    raw.push_back(nbytes);
  }
  std::string index(reinterpret_cast<const char*>(raw.data()), raw.size() * 8);
  std::uint32_t crc = codec::crc32c(std::as_bytes(std::span(index.data(), index.size())));
  if (c.bad_checksum) crc ^= 1;
  for (int b = 0; b < 4; ++b) index.push_back(static_cast<char>((crc >> (8 * b)) & 0xff));
  std::string body(static_cast<std::size_t>(c.body_bytes), '\0');
  for (std::size_t i = 0; i + 1 < body.size(); i += 2) {
    const std::uint16_t v = static_cast<std::uint16_t>(1000 + i / 2);
    std::memcpy(body.data() + i, &v, 2);
  }
  return start ? index + body : body + index;
}

std::vector<HostileShard> hostile_shards(bool start) {
  // Where the body begins and where the index is, for a file of `body` body bytes.
  const std::uint64_t b = start ? kIndexBytes : 0;
  const std::uint64_t index_at_end = 16 * kInnerBytes;
  auto all = [&](std::uint64_t offset, std::uint64_t nbytes) {
    return std::vector<std::pair<std::uint64_t, std::uint64_t>>(16, {offset, nbytes});
  };
  auto laid_out = [&] {
    std::vector<std::pair<std::uint64_t, std::uint64_t>> e;
    for (std::uint64_t i = 0; i < 16; ++i) e.push_back({b + i * kInnerBytes, kInnerBytes});
    return e;
  };
  std::vector<HostileShard> cases;
  auto with = [&](std::string name, std::size_t inner, std::pair<std::uint64_t, std::uint64_t> entry, std::string error) {
    HostileShard c{std::move(name), laid_out(), 16 * kInnerBytes, std::move(error)};
    c.entries[inner] = entry;
    return c;
  };
  // Kept (inner chunk 5) and touched (inner chunk 0) entries alike.
  for (std::size_t inner : {0, 5}) {
    const std::string which = inner == 0 ? "touched_" : "kept_";
    cases.push_back(with(which + "past_end", inner, {16 * kInnerBytes + kIndexBytes - 10, kInnerBytes}, "runs past the end"));
    cases.push_back(with(which + "overflow", inner, {kNone - 100, 200}, "overflows 64 bits"));
    cases.push_back(with(which + "offset_max", inner, {kNone - 1, 1}, "runs past the end"));
    cases.push_back(with(which + "into_index", inner, {start ? 8 : index_at_end - 8, kInnerBytes}, "overlaps the shard index"));
    cases.push_back(with(which + "half_missing", inner, {kNone, 5}, "half-missing"));
    cases.push_back(with(which + "half_missing_nbytes", inner, {b, kNone}, "half-missing"));
    cases.push_back(with(which + "huge_nbytes", inner, {b, kNone - b - 1}, "runs past the end"));
  }
  // Larger than the inner chain can ever encode, yet inside a larger file.
  HostileShard large{"kept_larger_than_any_encoding", laid_out(), 32 * kInnerBytes, "larger than any valid encoding"};
  large.entries[5] = {b + 16 * kInnerBytes, 2 * kInnerBytes};
  cases.push_back(large);
  HostileShard crc{"bad_checksum", laid_out(), 16 * kInnerBytes, "checksum mismatch"};
  crc.bad_checksum = true;
  cases.push_back(crc);
  // An index of 8 entries (a shard of another layout): its checksum is not where the 16 entries' one is.
  HostileShard small_index{"index_of_8_entries", laid_out(), 16 * kInnerBytes, "checksum mismatch"};
  small_index.index_entries = 8;
  cases.push_back(small_index);
  HostileShard short_file{"shorter_than_index", {}, 0, "shorter than its 260 byte index"};
  short_file.index_entries = 10;
  cases.push_back(short_file);
  // Legal: every entry missing; every kept entry sharing one run of bytes (and inner chunk 0's
  // too); entries out of order and overlapping each other by half; empty inner chunks anywhere.
  cases.push_back({"all_missing", all(kNone, kNone), 16 * kInnerBytes, ""});
  cases.push_back({"all_share_one_run", all(b + 3 * kInnerBytes, kInnerBytes), 16 * kInnerBytes, ""});
  std::vector<std::pair<std::uint64_t, std::uint64_t>> staggered;
  for (std::uint64_t i = 0; i < 16; ++i) staggered.push_back({b + (15 - i) * kInnerBytes / 2, kInnerBytes});
  cases.push_back({"overlapping_reversed", staggered, 16 * kInnerBytes, ""});
  return cases;
}

class HostileStoredShards : public ::testing::TestWithParam<std::string> {};

// A partial write over each hostile shard: a clear error naming the shard and the field, with
// every file as it was; or, where the index is legal, a new shard holding the old values and the
// new ones.
TEST_P(HostileStoredShards, APartialWriteRefusesOrRewritesThemCorrectly) {
  const bool start = GetParam() == "start";
  for (const HostileShard& c : hostile_shards(start)) {
    SCOPED_TRACE(c.name);
    test::TempDir dir;
    Array array = Array::create(dir / "a", sharded(json::array({bytes_le()}), GetParam()));
    const fs::path shard = dir / "a/c/0/0";
    fs::create_directories(shard.parent_path());
    {
      std::ofstream out(shard, std::ios::binary);
      const std::string bytes = hostile_file(c, start);
      out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    }
    const auto before = snapshot(dir / "a");
    // Rows 1-2, columns 1-2: inside inner chunk 0 of shard 0/0 (merged, the rest kept).
    const Region region{{1, 3}, {1, 3}};
    const std::vector<std::uint16_t> part(4, 7);
    const std::vector<std::byte> part_bytes(reinterpret_cast<const std::byte*>(part.data()),
                                            reinterpret_cast<const std::byte*>(part.data()) + 8);
    if (!c.error.empty()) {
      try {
        array.write(region, source_of(part_bytes, region, array.metadata().dtype));
        ADD_FAILURE() << "the write succeeded";
      } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::corrupt_data) << e.what();
        EXPECT_NE(std::string(e.what()).find("shard c/0/0"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find(c.error), std::string::npos) << e.what();
      }
      EXPECT_EQ(snapshot(dir / "a"), before);
      continue;
    }
    Model model{array.metadata().shape, 2, read_all(array)};
    array.write(region, source_of(part_bytes, region, array.metadata().dtype));
    model.write(region, part_bytes);
    EXPECT_EQ(read_all(Array::open(dir / "a")), model.bytes);
    EXPECT_NO_THROW(stored_index(array, "c/0/0"));
    for (const auto& [name, contents] : snapshot(dir / "a")) EXPECT_EQ(name.find("__lock"), std::string::npos) << name;
  }
}

INSTANTIATE_TEST_SUITE_P(IndexLocations, HostileStoredShards, ::testing::Values("start", "end"));

// Metadata asking for 2^20 inner chunks a shard (16 MiB an index): a write under a smaller memory
// limit is refused before it allocates an index, naming the array and the limit, and writes nothing.
TEST(Write, AShardIndexLargerThanTheMemoryLimitIsRefused) {
  test::TempDir dir;
  json doc = sharded(json::array({bytes_le()}), "end", {1024, 1024});
  doc["shape"] = {1024, 1024};
  doc["data_type"] = "uint8";
  doc["codecs"][0]["configuration"]["chunk_shape"] = {1, 1};
  Array array = Array::create(dir / "a", doc);
  const auto before = snapshot(dir / "a");
  Settings limited;
  limited.memory_limit_bytes = std::size_t{32} << 20;
  const Region region{{0, 1}, {0, 1}};
  const std::vector<std::byte> one{std::byte{5}};
  try {
    array.write(region, source_of(one, region, array.metadata().dtype), {}, limited);
    ADD_FAILURE() << "the write succeeded";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("1048576 inner chunks"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("memory_limit_bytes"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find((dir / "a").string()), std::string::npos) << e.what();
  }
  EXPECT_EQ(snapshot(dir / "a"), before);
}

// A reader reads a shard's index, then its inner chunks from the file opened anew: a writer that
// renamed a new shard over it in between must not make the reader apply the old offsets to the
// new file. Here the swap happens in the progress report that follows the index read (one
// thread: the inner chunks are read after it).
TEST(Write, AShardReplacedWhileBeingReadIsReadFromItsNewVersion) {
  test::TempDir dir;
  Array array = Array::create(
      dir / "a", sharded(json::array({bytes_le(), {{"name", "zstd"}, {"configuration", {{"level", 1}}}}}), "end"));
  const DataType dtype = array.metadata().dtype;
  std::mt19937 rng(3);
  const Region whole = full_region(array.metadata().shape);
  Model model{array.metadata().shape, dtype.size, values_for(dtype, 37 * 50, rng, false)};
  array.write(whole, source_of(model.bytes, whole, dtype));
  const fs::path shard = dir / "a/c/0/0";
  fs::copy_file(shard, dir / "old");
  // The new version: inner chunk (1, 1) rewritten (appended; its old bytes stay in the file,
  // where the old index points).
  const Region region{{8, 16}, {10, 20}};
  std::vector<std::byte> part = values_for(dtype, 80, rng, false);
  array.write(region, source_of(part, region, dtype));
  model.write(region, part);
  fs::copy_file(shard, dir / "new");
  fs::copy_file(dir / "old", shard, fs::copy_options::overwrite_existing);

  bool swapped = false;
  Settings settings;
  settings.threads = 1;
  settings.progress = [&](std::size_t, std::size_t) {
    if (!swapped) fs::rename(dir / "new", shard);
    swapped = true;
    return true;
  };
  NDArray back = Array::open(dir / "a").read({{0, 32}, {0, 40}}, Device::cpu, settings);
  ASSERT_TRUE(swapped);
  auto* got = static_cast<const std::uint16_t*>(back.data());
  const auto* expected = reinterpret_cast<const std::uint16_t*>(model.bytes.data());
  for (std::size_t y = 0; y < 32; ++y)
    for (std::size_t x = 0; x < 40; ++x) ASSERT_EQ(got[y * 40 + x], expected[y * 50 + x]) << y << "," << x;
}

TEST(Write, AFailureNamesTheRegionAndChunkAndLeavesChunksWhole) {
  test::TempDir dir;
  Array array = Array::create(dir / "a", v3_array("uint16", json::array({bytes_le()})));
  std::vector<std::uint16_t> ones(37 * 50, 1);
  array.write({}, Source{ones.data(), {}, Device::cpu, nullptr, {}, {}});
  // A folder where chunk c/1/1 should be: the rename over it fails.
  fs::remove(dir / "a/c/1/1");
  fs::create_directories(dir / "a/c/1/1/blocker");
  std::vector<std::uint16_t> twos(37 * 50, 2);
  Settings one_thread;
  one_thread.threads = 1;
  try {
    array.write({}, Source{twos.data(), {}, Device::cpu, nullptr, {}, {}}, {}, one_thread);
    ADD_FAILURE() << "the write succeeded";
  } catch (const Error& e) {
    std::string message = e.what();
    EXPECT_NE(message.find("write of region 0:37,0:50"), std::string::npos) << message;
    EXPECT_NE(message.find("chunk c/1/1"), std::string::npos) << message;
  }
  // Every other chunk is whole: old (1) or new (2), never a mix within one chunk.
  fs::remove_all(dir / "a/c/1/1");
  NDArray back = Array::open(dir / "a").read();
  auto* got = static_cast<const std::uint16_t*>(back.data());
  for (std::size_t cy = 0; cy < 3; ++cy)
    for (std::size_t cx = 0; cx < 3; ++cx) {
      std::uint16_t first = got[(cy * 16) * 50 + cx * 20];
      for (std::size_t y = cy * 16; y < std::min<std::size_t>(37, cy * 16 + 16); ++y)
        for (std::size_t x = cx * 20; x < std::min<std::size_t>(50, cx * 20 + 20); ++x)
          ASSERT_EQ(got[y * 50 + x], first) << y << "," << x;
    }
  for (const auto& [name, contents] : snapshot(dir / "a")) EXPECT_EQ(name.find("__lock"), std::string::npos) << name;
}

// Several processes write interleaved column stripes that share every shard (and, unsharded,
// every chunk): with each read-modify-write under its key's lock, every value lands.
void stress(const json& metadata) {
  test::TempDir dir;
  Array::create(dir / "a", metadata);
  constexpr int kProcesses = 4, kRounds = 6;
  const std::uint64_t rows = 37, cols = 50;
  std::vector<pid_t> children;
  for (int p = 0; p < kProcesses; ++p) {
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      int status = 0;
      try {
        Array array = Array::open(dir / "a");
        Settings settings;
        settings.threads = 2;
        // Column x belongs to process x % kProcesses; written a few columns at a time.
        for (int round = 0; round < kRounds; ++round)
          for (std::uint64_t x = static_cast<std::uint64_t>(p) + static_cast<std::uint64_t>(round) * kProcesses; x < cols;
               x += kProcesses * kRounds) {
            std::vector<std::uint16_t> column(rows);
            for (std::uint64_t y = 0; y < rows; ++y) column[y] = static_cast<std::uint16_t>(1 + y * cols + x);
            array.write({{0, rows}, {x, x + 1}}, Source{column.data(), {}, Device::cpu, nullptr, {}, {}}, {}, settings);
          }
      } catch (...) {
        status = 1;
      }
      ::_exit(status);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  NDArray back = Array::open(dir / "a").read();
  auto* got = static_cast<const std::uint16_t*>(back.data());
  for (std::uint64_t i = 0; i < rows * cols; ++i) ASSERT_EQ(got[i], 1 + i) << "element " << i;
}

TEST(Write, ProcessesWritingSharedShardsLoseNothing) {
  stress(sharded(json::array({bytes_le(), {{"name", "zstd"}, {"configuration", {{"level", 1}}}}}), "end"));
}

TEST(Write, ProcessesWritingSharedChunksLoseNothing) {
  stress(v2_array("<u2", {{"id", "zstd"}, {"level", 1}}));
}

}  // namespace
}  // namespace zarrdirect

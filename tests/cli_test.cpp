// The zarrdirect command line: exit codes (0 ok, 1 data/metadata/IO error with one "error:" line,
// 2 usage), info text and JSON, read --region/--output against the values written.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "engine/array_writer.hpp"
#include "test_support.hpp"
#include "util/npy.hpp"
#include "zarrdirect/array.hpp"

namespace zarrdirect {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

test::CommandResult cli(const std::string& arguments) {
  return test::run_command(fmt::format("'{}' {}", test::cli_path(), arguments));
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// Exit 1 with exactly one line, "error: ..." containing every fragment.
void expect_error_line(const test::CommandResult& result, std::initializer_list<std::string_view> fragments) {
  EXPECT_EQ(result.exit_code, 1) << result.output;
  auto lines = lines_of(result.output);
  ASSERT_EQ(lines.size(), 1u) << result.output;
  EXPECT_EQ(lines[0].rfind("error: ", 0), 0u) << result.output;
  for (auto fragment : fragments) EXPECT_NE(lines[0].find(fragment), std::string::npos) << result.output;
}

// A 6x7 uint16 array in 4x3 chunks; element (r, c) = 100 r + c.
class Cli : public ::testing::Test {
 protected:
  void SetUp() override {
    values.resize(42);
    for (std::uint16_t r = 0; r < 6; ++r)
      for (std::uint16_t c = 0; c < 7; ++c) values[r * 7 + c] = static_cast<std::uint16_t>(100 * r + c);
    json doc = {{"zarr_format", 3},
                {"node_type", "array"},
                {"shape", {6, 7}},
                {"data_type", "uint16"},
                {"chunk_grid", {{"name", "regular"}, {"configuration", {{"chunk_shape", {4, 3}}}}}},
                {"chunk_key_encoding", {{"name", "default"}}},
                {"fill_value", 0},
                {"codecs", json::array({{{"name", "bytes"}, {"configuration", {{"endian", "little"}}}},
                                        {{"name", "crc32c"}}})},
                {"dimension_names", {"y", "x"}}};
    write_array(array(), doc, std::as_bytes(std::span(values)));
  }
  fs::path array() const { return dir / "a"; }
  std::string quoted(const fs::path& p) const { return fmt::format("'{}'", p.string()); }

  test::TempDir dir;
  std::vector<std::uint16_t> values;
};

TEST_F(Cli, UsageErrorsExitTwo) {
  EXPECT_EQ(cli("").exit_code, 2);
  EXPECT_EQ(cli("frobnicate").exit_code, 2);
  EXPECT_EQ(cli("read").exit_code, 2);
  EXPECT_EQ(cli("read " + quoted(array()) + " --device tpu").exit_code, 2);
  EXPECT_EQ(cli("read " + quoted(array()) + " --no-such-option").exit_code, 2);
  EXPECT_EQ(cli("read " + quoted(array()) + " --threads many").exit_code, 2);
  EXPECT_EQ(cli("--help").exit_code, 0);
  EXPECT_EQ(cli("read --help").exit_code, 0);
}

TEST_F(Cli, InfoText) {
  auto result = cli("info " + quoted(array()));
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_NE(result.output.find("[6,7]"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("uint16"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("crc32c"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("zarr v3"), std::string::npos) << result.output;
}

TEST_F(Cli, InfoJson) {
  fs::remove(array() / "c/1/2");  // one chunk missing
  auto result = cli("info --json " + quoted(array()));
  ASSERT_EQ(result.exit_code, 0) << result.output;
  json doc = json::parse(result.output);
  EXPECT_EQ(doc["zarr_format"], 3);
  EXPECT_EQ(doc["shape"], json({6, 7}));
  EXPECT_EQ(doc["chunk_shape"], json({4, 3}));
  EXPECT_EQ(doc["dtype"], "uint16");
  EXPECT_EQ(doc["chunks"], 6);
  EXPECT_EQ(doc["chunks_stored"], 5);
  EXPECT_EQ(doc["chunks_missing"], 1);
  EXPECT_EQ(doc["bytes_decoded"], 84);
  EXPECT_EQ(doc["dimension_names"], json({"y", "x"}));
  EXPECT_EQ(doc["codecs"], json({"bytes", "crc32c"}));
}

TEST_F(Cli, InfoSystem) {
  auto result = cli("info --system --json");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  json doc = json::parse(result.output);
  ASSERT_TRUE(doc["codecs"].is_array());
  for (const char* name : {"bytes", "crc32c", "sharding_indexed", "transpose"})
    EXPECT_NE(std::find(doc["codecs"].begin(), doc["codecs"].end(), name), doc["codecs"].end()) << name;
  EXPECT_EQ(cli("info").exit_code, 1);  // a PATH or --system is needed
}

TEST_F(Cli, ReadRegionToNpy) {
  auto output = dir / "out.npy";
  auto result = cli("read -q " + quoted(array()) + " --region '1:5,-3:' --threads 3 --output " + quoted(output));
  ASSERT_EQ(result.exit_code, 0) << result.output;
  NpyArray npy = read_npy(output);
  EXPECT_EQ(npy.shape, (std::vector<std::uint64_t>{4, 3}));
  EXPECT_EQ(npy.dtype, (DataType{ScalarKind::unsigned_int, 2}));
  auto data = npy.native_c_order();
  ASSERT_EQ(data.size(), 24u);
  for (std::size_t r = 0; r < 4; ++r)
    for (std::size_t c = 0; c < 3; ++c) {
      std::uint16_t got;
      std::memcpy(&got, data.data() + (r * 3 + c) * 2, 2);
      EXPECT_EQ(got, 100 * (r + 1) + (c + 4)) << r << "," << c;
    }
  // The status line goes to stderr and names the shape and dtype.
  EXPECT_NE(result.output.find("[4, 3] uint16"), std::string::npos) << result.output;
}

TEST_F(Cli, ReadBareIndexKeepsTheDimension) {
  auto output = dir / "row.npy";
  ASSERT_EQ(cli("read -q " + quoted(array()) + " --region 5 -o " + quoted(output)).exit_code, 0);
  NpyArray npy = read_npy(output);
  EXPECT_EQ(npy.shape, (std::vector<std::uint64_t>{1, 7}));
  auto data = npy.native_c_order();
  std::uint16_t last;
  std::memcpy(&last, data.data() + 12, 2);
  EXPECT_EQ(last, 506);
}

TEST_F(Cli, WholeArrayWithOneAndManyThreadsIsTheSame) {
  for (const char* threads : {"1", "16"}) {
    auto output = dir / fmt::format("t{}.npy", threads);
    ASSERT_EQ(cli(fmt::format("read -q {} --threads {} -o {}", quoted(array()), threads, quoted(output))).exit_code, 0);
    auto data = read_npy(output).native_c_order();
    ASSERT_EQ(data.size(), 84u);
    EXPECT_EQ(std::memcmp(data.data(), values.data(), 84), 0) << threads;
  }
}

TEST_F(Cli, ZeroDimensionalArray) {
  std::uint16_t value = 4242;
  json doc = {{"zarr_format", 2}, {"shape", json::array()}, {"chunks", json::array()}, {"dtype", "<u2"},
              {"fill_value", 0},  {"order", "C"},           {"compressor", nullptr},   {"filters", nullptr}};
  write_array(dir / "s", doc, std::as_bytes(std::span(&value, 1)));
  auto output = dir / "s.npy";
  ASSERT_EQ(cli("read -q " + quoted(dir / "s") + " -o " + quoted(output)).exit_code, 0);
  NpyArray npy = read_npy(output);
  EXPECT_TRUE(npy.shape.empty());
  std::uint16_t got;
  std::memcpy(&got, npy.native_c_order().data(), 2);
  EXPECT_EQ(got, 4242);
}

TEST_F(Cli, DataAndMetadataErrorsAreOneLineAndExitOne) {
  expect_error_line(cli("read -q " + quoted(dir / "nothing-here")), {"nothing-here"});
  expect_error_line(cli("info " + quoted(dir / "nothing-here")), {"nothing-here"});
  expect_error_line(cli("read -q " + quoted(array()) + " --region 0:1:1"), {"region", "steps"});
  expect_error_line(cli("read -q " + quoted(array()) + " --region 9"), {"region", "dimension 0"});
  // An output that cannot be written: the read itself succeeded (its status line may come first).
  auto unwritable = cli("read -q " + quoted(array()) + " -o " + quoted(dir / "no/such/folder/x.npy"));
  EXPECT_EQ(unwritable.exit_code, 1) << unwritable.output;
  ASSERT_FALSE(lines_of(unwritable.output).empty());
  EXPECT_EQ(lines_of(unwritable.output).back().rfind("error: ", 0), 0u) << unwritable.output;
  EXPECT_NE(lines_of(unwritable.output).back().find("x.npy"), std::string::npos) << unwritable.output;
  // A corrupt chunk: the chunk key and the codec that noticed.
  std::vector<std::uint8_t> garbage(10, 0x55);
  test::write_bytes(array() / "c/1/1", garbage);
  expect_error_line(cli("read -q " + quoted(array())), {"c/1/1", "crc32c"});
  // Environment settings are checked too.
  expect_error_line(test::run_command(fmt::format("ZARRDIRECT_THREADS=lots '{}' read -q {}", test::cli_path(),
                                                  quoted(array()))),
                    {"ZARRDIRECT_THREADS"});
}

#ifndef ZARRDIRECT_WITH_CUDA
TEST_F(Cli, DeviceReadsWithoutCudaAreAnError) {
  expect_error_line(cli("read -q " + quoted(array()) + " --device cuda"), {"CUDA"});
}
#endif

TEST_F(Cli, BrokenArrayMetadataIsReportedAsSuch) {
  // A zarr.json array missing its shape: the error is about the array's field, not about groups.
  json doc = json::parse(R"({"zarr_format": 3, "node_type": "array", "data_type": "uint8",
      "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}}, "fill_value": 0,
      "codecs": [{"name": "bytes"}]})");
  test::write_text(dir / "broken/zarr.json", doc.dump());
  expect_error_line(cli("read -q " + quoted(dir / "broken")), {"zarr.json", "shape", "missing"});
  expect_error_line(cli("info " + quoted(dir / "broken")), {"zarr.json", "shape", "missing"});
  // A node_type of the wrong JSON type is a metadata error naming the file, for info too.
  test::write_text(dir / "typed/zarr.json", R"({"zarr_format": 3, "node_type": 1})");
  expect_error_line(cli("info " + quoted(dir / "typed")), {"zarr.json", "node_type"});
  expect_error_line(cli("read -q " + quoted(dir / "typed")), {"zarr.json", "node_type"});
}

TEST_F(Cli, DemoWritesReadsAndVerifiesTheSample) {
  const fs::path sample = dir / "sample.zarr";
  auto first = cli("demo " + quoted(sample));
  EXPECT_EQ(first.exit_code, 0) << first.output;
  EXPECT_NE(first.output.find("wrote the sample"), std::string::npos) << first.output;
  EXPECT_NE(first.output.find("verified: all 8388608 values match"), std::string::npos) << first.output;
  EXPECT_NE(first.output.find(cuda_available() ? "GPU memory" : "host memory"), std::string::npos) << first.output;

  // A second run reuses it.
  auto second = cli("demo " + quoted(sample));
  EXPECT_EQ(second.exit_code, 0) << second.output;
  EXPECT_EQ(second.output.find("wrote the sample"), std::string::npos) << second.output;

  // A sample from an older generator (no version attribute, other values) is rewritten.
  json doc = json::parse(std::ifstream(sample / "zarr.json"));
  doc["attributes"].erase("zarrdirect_sample_version");
  test::write_text(sample / "zarr.json", doc.dump());
  auto older = cli("demo " + quoted(sample));
  EXPECT_EQ(older.exit_code, 0) << older.output;
  EXPECT_NE(older.output.find("wrote the sample"), std::string::npos) << older.output;

  // An array that is not the sample is never overwritten.
  expect_error_line(cli("demo " + quoted(array())), {"not zarrdirect's sample"});
  EXPECT_TRUE(fs::exists(array() / "zarr.json"));
}

// --- convert -----------------------------------------------------------------------------------

std::vector<std::uint16_t> read_u16(const fs::path& path, const Region& region = {}) {
  NDArray result = Array::open(path).read(region);
  auto* data = static_cast<const std::uint16_t*>(result.data());
  return {data, data + result.nbytes() / 2};
}

TEST_F(Cli, ConvertCopiesIntoAnyLayoutAndCodec) {
  for (std::string args : {"--zarr-format 2 --chunks 2,2 --codec blosc:lz4:5:shuffle",
                           "--chunks 2,7 --shards 4,7 --codec zstd:1+crc32c", "--codec raw", "--codec gzip --level 2",
                           "--zarr-format 2 --codec bz2:9"}) {
    fs::path out = dir / "converted";
    auto result = cli(fmt::format("convert {} {} {} --overwrite", quoted(array()), quoted(out), args));
    ASSERT_EQ(result.exit_code, 0) << args << ": " << result.output;
    EXPECT_NE(result.output.find("converted [6, 7] uint16"), std::string::npos) << result.output;
    EXPECT_EQ(read_u16(out), values) << args;
  }
  auto v2 = Array::open(dir / "converted");
  EXPECT_EQ(v2.metadata().zarr_format, 2);
  EXPECT_TRUE(fs::exists(dir / "converted/.zarray"));

  // A region: the new array has the region's shape and values.
  fs::path part = dir / "part";
  auto result = cli(fmt::format("convert {} {} --region 2:5,1:4 --codec raw", quoted(array()), quoted(part)));
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_EQ(Array::open(part).metadata().shape, (std::vector<std::uint64_t>{3, 3}));
  EXPECT_EQ(read_u16(part), read_u16(array(), {{2, 5}, {1, 4}}));
  EXPECT_EQ(Array::open(part).metadata().dimension_names.size(), 2u);  // carried over
}

TEST_F(Cli, ConvertRefusesBadInputAndTouchesNothing) {
  fs::path out = dir / "out";
  expect_error_line(cli(fmt::format("convert {} {} --codec snappy", quoted(array()), quoted(out))), {"codec spec", "snappy"});
  expect_error_line(cli(fmt::format("convert {} {} --chunks 2", quoted(array()), quoted(out))), {"--chunks", "2 dimensions"});
  expect_error_line(cli(fmt::format("convert {} {} --chunks 2,x", quoted(array()), quoted(out))), {"--chunks"});
  expect_error_line(cli(fmt::format("convert {} {} --shards 3,3 --chunks 2,2", quoted(array()), quoted(out))),
                    {"multiple"});
  expect_error_line(cli(fmt::format("convert {} {} --zarr-format 2 --shards 4,4", quoted(array()), quoted(out))),
                    {"zarr_format 3"});
  EXPECT_FALSE(fs::exists(out));
  // An existing array is not replaced without --overwrite.
  ASSERT_EQ(cli(fmt::format("convert {} {} -q", quoted(array()), quoted(out))).exit_code, 0);
  auto before = fs::last_write_time(out / "zarr.json");
  expect_error_line(cli(fmt::format("convert {} {} --codec raw", quoted(array()), quoted(out))), {"overwrite"});
  EXPECT_EQ(fs::last_write_time(out / "zarr.json"), before);
  EXPECT_EQ(cli(fmt::format("convert {}", quoted(array()))).exit_code, 2);
}

}  // namespace
}  // namespace zarrdirect

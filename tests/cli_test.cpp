// The zarrdirect command line: exit codes (0 ok, 1 data/metadata/IO error with one "error:" line,
// 2 usage), info text and JSON, read --region/--output against the values written.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <regex>
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

// Exit 2 with exactly one line, "error: ..." containing every fragment: a usage error found once
// the target was open (CLI11's own usage messages are not of this form).
void expect_usage_line(const test::CommandResult& result, std::initializer_list<std::string_view> fragments) {
  EXPECT_EQ(result.exit_code, 2) << result.output;
  auto lines = lines_of(result.output);
  ASSERT_EQ(lines.size(), 1u) << result.output;
  EXPECT_EQ(lines[0].rfind("error: ", 0), 0u) << result.output;
  for (auto fragment : fragments) EXPECT_NE(lines[0].find(fragment), std::string::npos) << result.output;
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<std::string> names_in(const fs::path& folder) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(folder)) names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
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
  EXPECT_NE(result.output.find("[6, 7]"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("uint16"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("crc32c"), std::string::npos) << result.output;
  EXPECT_NE(result.output.find("zarr v3"), std::string::npos) << result.output;
}

TEST_F(Cli, InfoJson) {
  fs::remove(array() / "c/1/2");  // one chunk missing
  auto result = cli("info --json " + quoted(array()));
  ASSERT_EQ(result.exit_code, 0) << result.output;
  json doc = json::parse(result.output);
  // The schema of zarrdirect::describe(), which Python's Array.info returns too.
  std::vector<std::string> keys;
  for (const auto& item : doc.items()) keys.push_back(item.key());
  EXPECT_EQ(keys, (std::vector<std::string>{"attributes", "bytes_stored", "chunks", "chunks_stored", "chunks_total",
                                            "codecs", "dimension_names", "dtype", "fill_value", "nbytes", "node_type",
                                            "order", "path", "shape", "shards", "zarr_format"}));
  EXPECT_EQ(doc["path"], array().string());
  EXPECT_EQ(doc["zarr_format"], 3);
  EXPECT_EQ(doc["node_type"], "array");
  EXPECT_EQ(doc["shape"], json({6, 7}));
  EXPECT_EQ(doc["chunks"], json({4, 3}));
  EXPECT_TRUE(doc["shards"].is_null());
  EXPECT_EQ(doc["order"], "C");
  EXPECT_EQ(doc["dtype"], "uint16");
  EXPECT_EQ(doc["chunks_total"], 6);
  EXPECT_EQ(doc["chunks_stored"], 5);
  EXPECT_EQ(doc["nbytes"], 84);
  EXPECT_EQ(doc["dimension_names"], json({"y", "x"}));
  EXPECT_EQ(doc["codecs"][1]["name"], "crc32c");
  EXPECT_EQ(doc["codecs"][0]["configuration"]["endian"], "little");
  std::uint64_t bytes = 0;
  for (const char* key : {"c/0/0", "c/0/1", "c/0/2", "c/1/0", "c/1/1"}) bytes += fs::file_size(array() / key);
  EXPECT_EQ(doc["bytes_stored"], bytes);
}

TEST_F(Cli, InfoSystem) {
  auto result = cli("info --system --json");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  json doc = json::parse(result.output);
  ASSERT_TRUE(doc["codecs"].is_array());
  for (const char* name : {"bytes", "crc32c", "sharding_indexed", "transpose"})
    EXPECT_NE(std::find(doc["codecs"].begin(), doc["codecs"].end(), name), doc["codecs"].end()) << name;
  expect_usage_line(cli("info"), {"PATH"});  // a PATH or --system is needed
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

TEST_F(Cli, ReadWithoutAGpuSaysHowToReadIntoHostMemory) {
  if (cuda_available()) GTEST_SKIP() << "this machine has a CUDA device";
  for (const char* command : {"read -q", "bench"}) {
    auto result = cli(fmt::format("{} {} --device cuda", command, quoted(array())));
    expect_error_line(result, {"no usable CUDA device", "--device cpu", "host memory"});
    EXPECT_EQ(result.output.find("Device::"), std::string::npos) << result.output;  // no C++ names
  }
}

TEST_F(Cli, DeviceNamesAreCheckedBeforeReading) {
  // Text that names no device is a usage error quoting it, on read and bench alike.
  for (const char* command : {"read -q", "bench"}) {
    for (const char* device : {"cuda:x", "cuda:-1", "gpu:1", "cuda:"}) {
      auto result = cli(fmt::format("{} {} --device '{}'", command, quoted(array()), device));
      expect_usage_line(result, {"--device", std::string("\"") + device + "\"", "cuda:N"});
    }
  }
  // A device this machine lacks: an error (exit 1) naming it, before anything is read.
  const int count = cuda_device_count();
  auto result = cli(fmt::format("read -q {} --device cuda:{} --output {}", quoted(array()), count,
                                quoted(dir / "never.npy")));
  if (count > 0) expect_error_line(result, {fmt::format("cuda:{}: this machine has {} CUDA device", count, count)});
  else expect_error_line(result, {fmt::format("--device cuda:{}", count), "no usable CUDA device", "--device cpu"});
  EXPECT_FALSE(fs::exists(dir / "never.npy"));
}

TEST_F(Cli, InfoSystemListsEveryDevice) {
  auto result = cli("info --system --json");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  json doc = json::parse(result.output);
  ASSERT_TRUE(doc["devices"].is_array()) << result.output;
  EXPECT_EQ(doc["devices"].size(), static_cast<std::size_t>(cuda_device_count()));
  auto text = cli("info --system");
  ASSERT_EQ(text.exit_code, 0) << text.output;
  if (cuda_device_count() == 0) {
    EXPECT_NE(text.output.find("devices:        none\n"), std::string::npos) << text.output;
  }
  for (int k = 0; k < cuda_device_count(); ++k)
    EXPECT_NE(text.output.find(fmt::format("cuda:{}: ", k)), std::string::npos) << text.output;
}

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

// Dimension names cross formats as xarray keeps them: v3 dimension_names <-> the v2
// _ARRAY_DIMENSIONS attribute (v3 -> v2 dropped them).
TEST_F(Cli, ConvertCarriesDimensionNamesBetweenFormats) {
  const auto names = Array::open(array()).metadata().dimension_names;
  ASSERT_EQ(names.size(), 2u);
  ASSERT_TRUE(names[0] && names[1]);
  fs::path v2 = dir / "names_v2";
  auto result = cli(fmt::format("convert {} {} --zarr-format 2 -q", quoted(array()), quoted(v2)));
  ASSERT_EQ(result.exit_code, 0) << result.output;
  const json attrs = json::parse(std::ifstream(v2 / ".zattrs"));
  EXPECT_EQ(attrs["_ARRAY_DIMENSIONS"], json({*names[0], *names[1]}));
  fs::path v3 = dir / "names_v3";
  result = cli(fmt::format("convert {} {} --zarr-format 3 -q", quoted(v2), quoted(v3)));
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_EQ(Array::open(v3).metadata().dimension_names, names);
}

// v3 fill values written as raw bits: float16 ones could not be converted at all ("cannot be
// carried over"), complex ones with hex parts were copied as hex and refused by a v2 target.
TEST_F(Cli, ConvertCarriesHexFillValuesIntoEitherFormat) {
  for (const auto& [data_type, fill] : std::vector<std::pair<std::string, json>>{
           {"float16", "0x3c00"}, {"float16", "0xfc00"}, {"float16", "0x0001"}, {"complex64", {"0x3f800000", "-Infinity"}},
           {"complex128", {"0x3ff0000000000000", 2.5}}, {"float32", "0x40490fdb"}}) {
    json doc = {{"zarr_format", 3},
                {"node_type", "array"},
                {"shape", {3}},
                {"data_type", data_type},
                {"chunk_grid", {{"name", "regular"}, {"configuration", {{"chunk_shape", {3}}}}}},
                {"chunk_key_encoding", {{"name", "default"}}},
                {"fill_value", fill},
                {"codecs", json::array({{{"name", "bytes"}, {"configuration", {{"endian", "little"}}}}})}};
    fs::path source = dir / "hexfill";
    fs::remove_all(source);
    test::write_text(source / "zarr.json", doc.dump());
    const auto expected = Array::open(source).metadata().fill_value;
    for (const char* format : {"2", "3"}) {
      fs::path out = dir / "hexfill_out";
      auto result = cli(fmt::format("convert {} {} --zarr-format {} --overwrite", quoted(source), quoted(out), format));
      ASSERT_EQ(result.exit_code, 0) << data_type << " " << fill.dump() << " -> v" << format << ": " << result.output;
      EXPECT_EQ(Array::open(out).metadata().fill_value, expected) << data_type << " " << fill.dump() << " -> v" << format;
    }
  }
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

// A 2-level OME-Zarr 0.5 image at `folder`: level "0" is 6x7, level "1" 3x4 (uint16), and
// `level_paths` names the datasets (the folders written are always "0" and "1").
void write_ome_image(const fs::path& folder, const std::vector<std::string>& level_paths = {"0", "1"}) {
  std::vector<std::uint16_t> big(42, 7), small(12, 9);
  auto level = [](std::uint64_t rows, std::uint64_t columns) {
    return json{{"zarr_format", 3},
                {"node_type", "array"},
                {"shape", {rows, columns}},
                {"data_type", "uint16"},
                {"chunk_grid", {{"name", "regular"}, {"configuration", {{"chunk_shape", {2, 2}}}}}},
                {"chunk_key_encoding", {{"name", "default"}}},
                {"fill_value", 0},
                {"codecs", json::array({{{"name", "bytes"}, {"configuration", {{"endian", "little"}}}}})}};
  };
  write_array(folder / "0", level(6, 7), std::as_bytes(std::span(big)));
  write_array(folder / "1", level(3, 4), std::as_bytes(std::span(small)));
  json datasets = json::array();
  for (std::size_t i = 0; i < level_paths.size(); ++i)
    datasets.push_back({{"path", level_paths[i]},
                        {"coordinateTransformations", json::array({{{"type", "scale"}, {"scale", {1 << i, 1 << i}}}})}});
  json multiscale = {{"axes", json::array({{{"name", "y"}, {"type", "space"}}, {{"name", "x"}, {"type", "space"}}})},
                     {"datasets", datasets}};
  test::write_text(folder / "zarr.json",
                   json{{"zarr_format", 3},
                        {"node_type", "group"},
                        {"attributes", {{"ome", {{"version", "0.5"}, {"multiscales", json::array({multiscale})}}}}}}
                       .dump());
}

// --- Item 10: the command line's own contract ---------------------------------------------

TEST_F(Cli, VersionIsTheProjectVersion) {
  auto result = cli("--version");
  EXPECT_EQ(result.exit_code, 0) << result.output;
  EXPECT_TRUE(std::regex_match(result.output, std::regex("zarrdirect [0-9]+\\.[0-9]+\\.[0-9]+\n"))) << result.output;
}

TEST_F(Cli, EveryUsageErrorExitsTwo) {
  const std::string a = quoted(array());
  const std::string s = quoted(dir / "s");
  // Caught while parsing the command line.
  for (const std::string& arguments :
       {"sample " + s + " --chunks 0,32,32", "sample " + s + " --chunks 8,8", "sample " + s + " --shape -1,2,3",
        "sample " + s + " --shape 4,4,x", "sample " + s + " --codec lzma", "read " + a + " --threads -1",
        "read " + a + " --threads 0", "read " + a + " --level -1", "read " + a + " --level one",
        "bench " + a + " --repeat 0", "bench " + a + " --threads 100000", "info " + a + " " + a}) {
    auto result = cli(arguments);
    EXPECT_EQ(result.exit_code, 2) << arguments << "\n" << result.output;
  }
  EXPECT_FALSE(fs::exists(dir / "s"));
  // Each says what is wrong on one line, whatever the argument held.
  expect_usage_line(cli("read " + a + " --no-such-option"), {"--no-such-option", "--help"});
  expect_usage_line(cli("read " + a + " '\x1b[2Jbad\nline'"), {"\\x1b[2Jbad\\nline"});
  expect_usage_line(cli("read"), {"path", "--help"});
  expect_usage_line(cli("read -q " + a + " --level -1"), {"--level", "-1"});  // not level 18446744073709551615
  // Found once the target is open: one "error:" line, exit 2.
  expect_usage_line(cli("info"), {"PATH", "--system"});
  expect_usage_line(cli("info --system " + a), {"PATH", "--system"});
  expect_usage_line(cli("read -q " + a + " --region 0:1:0"), {"--region", "step cannot be zero"});
  expect_usage_line(cli("read -q " + a + " --region 9"), {"--region", "out of bounds for axis 0 with size 6", "[6, 7]"});
  expect_usage_line(cli("read -q " + a + " --region 1,2,3"), {"--region", "too many indices"});
  expect_usage_line(cli("read -q " + a + " --region 'x:'"), {"--region", "not an integer"});
  expect_usage_line(cli("read -q " + a + " --region '...,...'"), {"--region", "single ellipsis"});
  expect_usage_line(cli("read -q " + a + " --region '1:2:3:4'"), {"--region", "more than two ':'"});
  expect_usage_line(cli("bench " + a + " --region 0:1:1"), {"--region", "steps"});
  expect_usage_line(cli("read -q " + a + " --level 1"), {"--level", "is an array"});
  expect_usage_line(cli("sample " + s + " --shape 100000,100000,100000"), {"--shape", "at most"});
  EXPECT_FALSE(fs::exists(dir / "s"));
}

TEST_F(Cli, OutputsOtherThanNpyAreRefusedBeforeReading) {
  expect_usage_line(cli("read -q " + quoted(array()) + " -o " + quoted(dir / "out.tif")), {"out.tif", ".npy"});
  expect_usage_line(cli("read -q " + quoted(array()) + " -o " + quoted(dir / "out")), {".npy"});
  EXPECT_EQ(names_in(dir.path()), std::vector<std::string>{"a"});
  auto upper = cli("read -q " + quoted(array()) + " -o " + quoted(dir / "OUT.NPY"));
  EXPECT_EQ(upper.exit_code, 0) << upper.output;
  EXPECT_EQ(read_npy(dir / "OUT.NPY").shape, (std::vector<std::uint64_t>{6, 7}));
}

TEST_F(Cli, RegionTakesSteps) {
  auto output = dir / "strided.npy";
  auto result = cli("read -q " + quoted(array()) + " --region '::-2,1::3' -o " + quoted(output));
  ASSERT_EQ(result.exit_code, 0) << result.output;
  NpyArray npy = read_npy(output);
  ASSERT_EQ(npy.shape, (std::vector<std::uint64_t>{3, 2}));
  auto data = npy.native_c_order();
  const std::uint16_t expected[] = {501, 504, 301, 304, 101, 104};
  for (std::size_t i = 0; i < 6; ++i) {
    std::uint16_t got;
    std::memcpy(&got, data.data() + i * 2, 2);
    EXPECT_EQ(got, expected[i]) << i;
  }
  // "..." with a step, and an index keeping its axis (extent 1).
  ASSERT_EQ(cli("read -q " + quoted(array()) + " --region '...,2,::-3' -o " + quoted(output)).exit_code, 0);
  npy = read_npy(output);
  ASSERT_EQ(npy.shape, (std::vector<std::uint64_t>{1, 3}));
  data = npy.native_c_order();
  std::uint16_t first;
  std::memcpy(&first, data.data(), 2);
  EXPECT_EQ(first, 206);
}

TEST_F(Cli, RegionTakesAnEllipsis) {
  auto output = dir / "column.npy";
  auto result = cli("read -q " + quoted(array()) + " --region '...,-1' -o " + quoted(output));
  ASSERT_EQ(result.exit_code, 0) << result.output;
  NpyArray npy = read_npy(output);
  EXPECT_EQ(npy.shape, (std::vector<std::uint64_t>{6, 1}));
  auto data = npy.native_c_order();
  for (std::size_t r = 0; r < 6; ++r) {
    std::uint16_t got;
    std::memcpy(&got, data.data() + r * 2, 2);
    EXPECT_EQ(got, 100 * r + 6);
  }
}

TEST_F(Cli, InfoTextShowsHumanSizesAndOneCodecALine) {
  std::vector<std::uint16_t> ramp(64 * 48);
  for (std::size_t i = 0; i < ramp.size(); ++i) ramp[i] = static_cast<std::uint16_t>(i);
  json doc = {{"zarr_format", 3},
              {"node_type", "array"},
              {"shape", {64, 48}},
              {"data_type", "uint16"},
              {"chunk_grid", {{"name", "regular"}, {"configuration", {{"chunk_shape", {32, 32}}}}}},
              {"chunk_key_encoding", {{"name", "default"}}},
              {"fill_value", 0},
              {"codecs", json::array({{{"name", "bytes"}, {"configuration", {{"endian", "little"}}}},
                                      {{"name", "gzip"}, {"configuration", {{"level", 5}}}}})}};
  write_array(dir / "g", doc, std::as_bytes(std::span(ramp)));
  auto result = cli("info " + quoted(dir / "g"));
  ASSERT_EQ(result.exit_code, 0) << result.output;
  auto lines = lines_of(result.output);
  auto line_with = [&](std::string_view text) {
    auto it = std::find_if(lines.begin(), lines.end(), [&](const std::string& l) { return l.find(text) != std::string::npos; });
    return it == lines.end() ? std::string() : *it;
  };
  EXPECT_EQ(line_with("size in memory:"), "size in memory: 6.0 KiB (6144 bytes)") << result.output;
  std::uint64_t stored = 0;
  for (const auto& entry : fs::recursive_directory_iterator(dir / "g/c"))
    if (entry.is_regular_file()) stored += entry.file_size();
  EXPECT_NE(line_with("bytes stored:").find(fmt::format("({} bytes)", stored)), std::string::npos) << result.output;
  EXPECT_EQ(line_with("chunk files:"), "chunk files:    4 of 4 stored (0 missing: read as the fill value)");
  // One codec a line, each with its configuration.
  const auto codecs = std::find(lines.begin(), lines.end(), "codecs:         bytes: endian=little");
  ASSERT_NE(codecs, lines.end()) << result.output;
  ASSERT_NE(codecs + 1, lines.end());
  EXPECT_EQ(*(codecs + 1), "                gzip: level=5") << result.output;
}

// --- Item 2: "array or group?" is decided through the library's checked reads ---------------

TEST_F(Cli, MetadataIsReadOnlyThroughTheCheckedStore) {
  // The CLI runs under timeout: before, a FIFO named zarr.json blocked it forever.
  auto run = [&](const std::string& arguments) {
    return test::run_command(fmt::format("timeout 20 '{}' {}", test::cli_path(), arguments));
  };
  fs::create_directories(dir / "fifo");
  ASSERT_EQ(::mkfifo((dir / "fifo/zarr.json").c_str(), 0600), 0);
  expect_error_line(run("info " + quoted(dir / "fifo")), {"zarr.json"});
  expect_error_line(run("read -q " + quoted(dir / "fifo")), {"zarr.json"});

  // A zarr.json that links out of the folder is refused before it is opened (here, a FIFO
  // outside that would block), and so is a linked group document.
  ASSERT_EQ(::mkfifo((dir / "outside.fifo").c_str(), 0600), 0);
  fs::create_directories(dir / "linked");
  fs::create_symlink(dir / "outside.fifo", dir / "linked/zarr.json");
  expect_error_line(run("info " + quoted(dir / "linked")), {"zarr.json", "outside"});
  expect_error_line(run("read -q " + quoted(dir / "linked")), {"zarr.json", "outside"});
  test::write_text(dir / "outside_group.json", R"({"zarr_format": 3, "node_type": "group"})");
  fs::create_directories(dir / "linked_group");
  fs::create_symlink(dir / "outside_group.json", dir / "linked_group/zarr.json");
  expect_error_line(run("info " + quoted(dir / "linked_group")), {"zarr.json", "outside"});

  // Too large to be metadata: refused by its size, unread (sparse, so this costs no disk).
  fs::create_directories(dir / "huge");
  {
    int fd = ::open((dir / "huge/zarr.json").c_str(), O_WRONLY | O_CREAT, 0600);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::ftruncate(fd, off_t{65} << 20), 0);
    ::close(fd);
  }
  expect_error_line(run("info " + quoted(dir / "huge")), {"zarr.json"});
  expect_error_line(run("read -q " + quoted(dir / "huge")), {"zarr.json"});
}

#if !defined(__SANITIZE_ADDRESS__)
TEST_F(Cli, DeeplyNestedMetadataIsRefusedWithinBoundedMemory) {
  // 60 MiB of '[' (under the size limit): before, the CLI parsed it whole, without a depth
  // limit, on its own (4.5 GB). Under a 1.5 GB address-space limit it must still say what is wrong.
  fs::create_directories(dir / "deep");
  test::write_text(dir / "deep/zarr.json", std::string(60u << 20, '['));
  for (const char* command : {"info", "read -q"}) {
    auto result = test::run_command(
        fmt::format("ulimit -v 1500000; timeout 60 '{}' {} {}", test::cli_path(), command, quoted(dir / "deep")));
    expect_error_line(result, {"zarr.json"});
    EXPECT_EQ(result.output.find("bad_alloc"), std::string::npos) << result.output;
  }
}
#endif

TEST_F(Cli, BrokenGroupMetadataIsReportedAsTheGroupsFault) {
  // A group (by its node_type) whose consolidated metadata is malformed: the group's error, not
  // "this is not an array".
  test::write_text(dir / "g/zarr.json", R"({"zarr_format": 3, "node_type": "group", "consolidated_metadata": 7})");
  expect_error_line(cli("info " + quoted(dir / "g")), {"zarr.json", "consolidated_metadata"});
}

// --- Item 4: output is complete or not there; failures are reported ---------------------

TEST_F(Cli, AFullDeviceIsAnError) {
  if (!fs::exists("/dev/full")) GTEST_SKIP() << "no /dev/full";
  auto result = cli("read -q " + quoted(array()) + " -o /dev/full");
  EXPECT_EQ(result.exit_code, 1) << result.output;
  auto lines = lines_of(result.output);
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines.back().rfind("error: ", 0), 0u) << result.output;
  EXPECT_NE(lines.back().find("/dev/full"), std::string::npos) << result.output;
  EXPECT_NE(lines.back().find("No space left on device"), std::string::npos) << result.output;
}

TEST_F(Cli, AnOutputCutShortLeavesTheOldFileUntouched) {
  // 128 KiB of output against a file-size limit of 8-16 KiB (ulimit -f counts 512- or 1024-byte
  // blocks, by shell): as a full disk does, the write fails part way.
  std::vector<std::uint16_t> values_256(256 * 256, 3);
  json doc = {{"zarr_format", 2}, {"shape", {256, 256}}, {"chunks", {64, 64}}, {"dtype", "<u2"},
              {"fill_value", 0},  {"order", "C"},        {"compressor", nullptr}, {"filters", nullptr}};
  write_array(dir / "big", doc, std::as_bytes(std::span(values_256)));
  fs::create_directories(dir / "out");
  test::write_text(dir / "out/old.npy", "previous output");
  auto result = test::run_command(fmt::format("ulimit -f 16; '{}' read -q {} -o {}", test::cli_path(),
                                              quoted(dir / "big"), quoted(dir / "out/old.npy")));
  EXPECT_EQ(result.exit_code, 1) << result.output;
  ASSERT_FALSE(lines_of(result.output).empty());
  const std::string last = lines_of(result.output).back();
  EXPECT_EQ(last.rfind("error: ", 0), 0u) << result.output;
  EXPECT_NE(last.find("old.npy"), std::string::npos) << result.output;
  EXPECT_NE(last.find("File too large"), std::string::npos) << result.output;
  EXPECT_EQ(read_file(dir / "out/old.npy"), "previous output");
  EXPECT_EQ(names_in(dir / "out"), std::vector<std::string>{"old.npy"});  // no temporary left
  // Without the limit the same command replaces it.
  ASSERT_EQ(cli("read -q " + quoted(dir / "big") + " -o " + quoted(dir / "out/old.npy")).exit_code, 0);
  EXPECT_EQ(read_npy(dir / "out/old.npy").shape, (std::vector<std::uint64_t>{256, 256}));
  EXPECT_EQ(names_in(dir / "out"), std::vector<std::string>{"old.npy"});
}

TEST_F(Cli, OutputsToPipesAndThroughLinks) {
  // A FIFO takes the .npy bytes as they are written (no temporary, whatever its name).
  ASSERT_EQ(::mkfifo((dir / "pipe").c_str(), 0600), 0);
  auto result = test::run_command(fmt::format("(cat {} > {} & '{}' read -q {} -o {}; status=$?; wait; exit $status)",
                                              quoted(dir / "pipe"), quoted(dir / "copy.npy"), test::cli_path(),
                                              quoted(array()), quoted(dir / "pipe")));
  ASSERT_EQ(result.exit_code, 0) << result.output;
  auto data = read_npy(dir / "copy.npy").native_c_order();
  ASSERT_EQ(data.size(), 84u);
  EXPECT_EQ(std::memcmp(data.data(), values.data(), 84), 0);
  // A link is followed: the file it names is replaced, the link stays.
  test::write_text(dir / "real.npy", "old");
  fs::create_symlink("real.npy", dir / "link.npy");
  ASSERT_EQ(cli("read -q " + quoted(array()) + " -o " + quoted(dir / "link.npy")).exit_code, 0);
  EXPECT_TRUE(fs::is_symlink(dir / "link.npy"));
  EXPECT_EQ(read_npy(dir / "real.npy").shape, (std::vector<std::uint64_t>{6, 7}));
}

// --- Item 5: what the CLI prints about the data is one escaped line ------------------------

TEST_F(Cli, HostileLevelPathsCannotForgeLinesOrEscapes) {
  const std::string hostile = "lev\nerror: forged\x1b[2J";
  write_ome_image(dir / "img", {hostile, "1"});
  for (const auto& [arguments, exit_code] :
       {std::pair{"read -q " + quoted(dir / "img") + " --level 0", 1}, std::pair{"read -q " + quoted(dir / "img"), 2}}) {
    auto result = cli(arguments);
    EXPECT_EQ(result.exit_code, exit_code) << result.output;
    auto lines = lines_of(result.output);
    ASSERT_EQ(lines.size(), 1u) << result.output;
    EXPECT_EQ(lines[0].rfind("error: ", 0), 0u) << result.output;
    EXPECT_EQ(result.output.find('\x1b'), std::string::npos) << result.output;
    EXPECT_NE(result.output.find("lev\\nerror: forged\\x1b[2J"), std::string::npos) << result.output;
  }
  // info shows the level path escaped too, and the other level.
  auto info = cli("info " + quoted(dir / "img"));
  EXPECT_EQ(info.output.find('\x1b'), std::string::npos) << info.output;
  EXPECT_EQ(info.output.find("\nerror: forged"), std::string::npos) << info.output;
  EXPECT_EQ(info.exit_code, 0) << info.output;
  EXPECT_NE(info.output.find("unreadable"), std::string::npos) << info.output;
  EXPECT_NE(info.output.find("level 1: 1"), std::string::npos) << info.output;
}

TEST_F(Cli, NamesThatAreNotUtf8AreEscapedAndJsonStaysValid) {
  const fs::path odd = dir / "caf\xe9";  // Latin-1, not UTF-8
  expect_error_line(cli("info " + quoted(odd)), {"caf\\xe9"});
  fs::rename(array(), odd);
  auto result = cli("info --json " + quoted(odd));
  ASSERT_EQ(result.exit_code, 0) << result.output;
  json doc = json::parse(result.output);  // valid JSON: the byte is replaced, not thrown at
  EXPECT_EQ(doc["shape"], json({6, 7}));
  auto text = cli("info " + quoted(odd));
  ASSERT_EQ(text.exit_code, 0) << text.output;
  EXPECT_NE(text.output.find("caf\\xe9"), std::string::npos) << text.output;
}

// --- Item 6: info counts what a read would read ------------------------------------------

TEST_F(Cli, InfoCountsOnlyChunksAReadWouldRead) {
  // A terabyte (sparse) outside the folder, linked in place of a chunk, and files that are no
  // chunk of the grid: none of them is stored data.
  {
    int fd = ::open((dir / "terabyte").c_str(), O_WRONLY | O_CREAT, 0600);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::ftruncate(fd, off_t{1} << 40), 0);
    ::close(fd);
  }
  fs::remove(array() / "c/1/2");
  fs::create_symlink(dir / "terabyte", array() / "c/1/2");
  test::write_text(array() / "notes.txt", std::string(1000, 'n'));
  test::write_text(array() / "c/7/7", std::string(1000, 'x'));
  auto result = cli("info --json " + quoted(array()));
  ASSERT_EQ(result.exit_code, 0) << result.output;
  json doc = json::parse(result.output);
  EXPECT_EQ(doc["chunks_total"], 6);
  EXPECT_EQ(doc["chunks_stored"], 5);
  std::uint64_t bytes = 0;
  for (const char* key : {"c/0/0", "c/0/1", "c/0/2", "c/1/0", "c/1/1"}) bytes += fs::file_size(array() / key);
  EXPECT_EQ(doc["bytes_stored"], bytes);
  auto text = cli("info " + quoted(array()));
  ASSERT_EQ(text.exit_code, 0) << text.output;
  EXPECT_NE(text.output.find("5 of 6 stored (0 missing: read as the fill value); 1 refused"), std::string::npos)
      << text.output;
}

// --- Item 8: sample never destroys data without --overwrite ------------------------------

TEST_F(Cli, SampleRefusesToWriteOverAnything) {
  // A v2 array: before, sample added a zarr.json beside its .zarray.
  std::vector<std::uint16_t> four(4, 1);
  json v2 = {{"zarr_format", 2}, {"shape", {4}}, {"chunks", {2}}, {"dtype", "<u2"},
             {"fill_value", 0},  {"order", "C"}, {"compressor", nullptr}, {"filters", nullptr}};
  write_array(dir / "v2", v2, std::as_bytes(std::span(four)));
  const auto v2_files = names_in(dir / "v2");
  expect_error_line(cli("sample " + quoted(dir / "v2") + " --shape 8,8,8 --chunks 4,4,4"), {"already holds", "--overwrite"});
  EXPECT_EQ(names_in(dir / "v2"), v2_files);
  // A v3 array, and a group.
  const std::string before = read_file(array() / "zarr.json");
  expect_error_line(cli("sample " + quoted(array())), {"already holds", "--overwrite"});
  EXPECT_EQ(read_file(array() / "zarr.json"), before);
  write_ome_image(dir / "img");
  expect_error_line(cli("sample " + quoted(dir / "img")), {"already holds", "--overwrite"});
  // A folder with other things in it, and a file: not even with --overwrite.
  test::write_text(dir / "docs/notes.txt", "keep me");
  for (const char* flag : {"", " --overwrite"}) {
    expect_error_line(cli("sample " + quoted(dir / "docs") + flag), {"not a Zarr array or group", "notes.txt"});
    expect_error_line(cli("sample " + quoted(dir / "docs/notes.txt") + flag), {"a file"});
  }
  EXPECT_EQ(read_file(dir / "docs/notes.txt"), "keep me");
  // A Zarr array that also holds something else is not removed either.
  test::write_text(array() / "README.md", "mine");
  expect_error_line(cli("sample " + quoted(array()) + " --overwrite"), {"README.md"});
  EXPECT_TRUE(fs::exists(array() / "c/0/0"));
  // An empty folder, or nothing at all, is fine.
  fs::create_directories(dir / "empty");
  EXPECT_EQ(cli("sample " + quoted(dir / "empty") + " --shape 4,4,4 --chunks 2,2,2").exit_code, 0);
  EXPECT_EQ(cli("sample " + quoted(dir / "new") + " --shape 4,4,4 --chunks 2,2,2").exit_code, 0);
}

TEST_F(Cli, SampleOverwriteRemovesTheOldArrayCompletely) {
  const std::string s = quoted(dir / "s");
  ASSERT_EQ(cli("sample " + s + " --shape 16,16,16 --chunks 4,4,4").exit_code, 0);
  ASSERT_TRUE(fs::exists(dir / "s/c/3/3/3"));
  auto result = cli("sample " + s + " --shape 8,8,8 --chunks 4,4,4 --overwrite");
  ASSERT_EQ(result.exit_code, 0) << result.output;
  // Only the new grid's chunks are left.
  std::vector<std::string> files;
  for (const auto& entry : fs::recursive_directory_iterator(dir / "s"))
    if (entry.is_regular_file()) files.push_back(fs::relative(entry.path(), dir / "s").string());
  std::sort(files.begin(), files.end());
  EXPECT_EQ(files, (std::vector<std::string>{"c/0/0/0", "c/0/0/1", "c/0/1/0", "c/0/1/1", "c/1/0/0", "c/1/0/1",
                                             "c/1/1/0", "c/1/1/1", "zarr.json"}));
  EXPECT_EQ(Array::open(dir / "s").metadata().shape, (std::vector<std::uint64_t>{8, 8, 8}));
  // A v2 array replaced: no .zarray remains to contradict the new zarr.json.
  std::vector<std::uint16_t> four(4, 1);
  json v2 = {{"zarr_format", 2}, {"shape", {4}}, {"chunks", {2}}, {"dtype", "<u2"},
             {"fill_value", 0},  {"order", "C"}, {"compressor", nullptr}, {"filters", nullptr}};
  write_array(dir / "v2", v2, std::as_bytes(std::span(four)));
  ASSERT_EQ(cli("sample " + quoted(dir / "v2") + " --shape 4,4,4 --chunks 2,2,2 --overwrite").exit_code, 0);
  EXPECT_FALSE(fs::exists(dir / "v2/.zarray"));
  EXPECT_FALSE(fs::exists(dir / "v2/0"));
}

TEST_F(Cli, DemoNeverWritesOverAnotherArray) {
  std::vector<std::uint16_t> four(4, 1);
  json v2 = {{"zarr_format", 2}, {"shape", {4}}, {"chunks", {2}}, {"dtype", "<u2"},
             {"fill_value", 0},  {"order", "C"}, {"compressor", nullptr}, {"filters", nullptr}};
  write_array(dir / "v2", v2, std::as_bytes(std::span(four)));
  expect_error_line(cli("demo " + quoted(dir / "v2")), {"not zarrdirect's sample"});
  EXPECT_FALSE(fs::exists(dir / "v2/zarr.json"));
  test::write_text(dir / "docs/notes.txt", "keep me");
  expect_error_line(cli("demo " + quoted(dir / "docs")), {"not zarrdirect's sample"});
}

// --- Item 9: an OME-Zarr image is read one level at a time, the level named ----------------

TEST_F(Cli, MultiscaleGroupsNeedALevel) {
  write_ome_image(dir / "img");
  expect_usage_line(cli("read -q " + quoted(dir / "img")),
                    {"is an OME-Zarr multiscale group with 2 levels; choose one with --level", "0 \"0\" [6, 7]",
                     "1 \"1\" [3, 4]"});
  expect_usage_line(cli("bench " + quoted(dir / "img")), {"choose one with --level"});
  expect_usage_line(cli("read -q " + quoted(dir / "img") + " --level 2"), {"--level 2", "2 levels"});
  auto output = dir / "l1.npy";
  auto result = cli("read -q " + quoted(dir / "img") + " --level 1 -o " + quoted(output));
  ASSERT_EQ(result.exit_code, 0) << result.output;
  EXPECT_EQ(read_npy(output).shape, (std::vector<std::uint64_t>{3, 4}));
  // info shows the levels and how to read one.
  auto info = cli("info " + quoted(dir / "img"));
  ASSERT_EQ(info.exit_code, 0) << info.output;
  EXPECT_NE(info.output.find("level 1: 1"), std::string::npos) << info.output;
  EXPECT_NE(info.output.find("--level N"), std::string::npos) << info.output;
  // A plain group is not an array either; it says what it holds.
  test::write_text(dir / "plain/zarr.json", R"({"zarr_format": 3, "node_type": "group"})");
  write_ome_image(dir / "plain/img");
  expect_error_line(cli("read -q " + quoted(dir / "plain")), {"is a Zarr group, not an array", "img"});
  // An image with broken multiscales metadata says what is broken, not "not an array".
  write_ome_image(dir / "broken");
  json group = json::parse(read_file(dir / "broken/zarr.json"));
  group["attributes"]["ome"]["multiscales"][0]["datasets"][1]["coordinateTransformations"][0]["scale"] = {"a", 1};
  test::write_text(dir / "broken/zarr.json", group.dump());
  for (const std::string& arguments : {std::string(" --level 1"), std::string()})
    expect_error_line(cli("read -q " + quoted(dir / "broken") + arguments),
                      {"zarr.json", "multiscales[0].datasets[1].coordinateTransformations[0].scale"});
  // info shows the group, and says the image is unreadable and why (it was shown as a plain group).
  auto broken_info = cli("info " + quoted(dir / "broken"));
  ASSERT_EQ(broken_info.exit_code, 0) << broken_info.output;
  EXPECT_NE(broken_info.output.find("OME-Zarr:       unreadable: "), std::string::npos) << broken_info.output;
  EXPECT_NE(broken_info.output.find("coordinateTransformations[0].scale"), std::string::npos) << broken_info.output;
  auto broken_json = cli("info --json " + quoted(dir / "broken"));
  ASSERT_EQ(broken_json.exit_code, 0) << broken_json.output;
  EXPECT_NE(json::parse(broken_json.output).value("multiscale_error", ""), "") << broken_json.output;
  EXPECT_EQ(json::parse(cli("info --json " + quoted(dir / "plain")).output).count("multiscale_error"), 0u);
}

}  // namespace
}  // namespace zarrdirect

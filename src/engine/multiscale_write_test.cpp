#include "zarrdirect/multiscale_write.hpp"

#include <cstring>
#include <fstream>
#include <random>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "engine/downsample.hpp"
#include "test_support.hpp"
#include "zarrdirect/group.hpp"

namespace zarrdirect {
namespace {

using json = nlohmann::json;

json read_json(const std::filesystem::path& path) {
  std::ifstream in(path);
  return json::parse(in);
}

std::vector<std::uint16_t> ramp(std::uint64_t count, unsigned seed) {
  std::mt19937 random(seed);
  std::vector<std::uint16_t> values(count);
  for (auto& v : values) v = static_cast<std::uint16_t>(random());
  return values;
}

std::uint64_t product(const std::vector<std::uint64_t>& shape) {
  std::uint64_t n = 1;
  for (auto e : shape) n *= e;
  return n;
}

const DataType kU16{ScalarKind::unsigned_int, 2};

TEST(WriteMultiscale, Ngff04MetadataOnZarrV2) {
  test::TempDir dir;
  const std::vector<std::uint64_t> shape = {2, 9, 33, 20};
  auto values = ramp(product(shape), 1);
  MultiscaleWriteOptions options;
  options.levels = 3;
  options.downsample_dims = 3;
  options.axes = {"c", "z", "y", "x"};
  options.units = {"", "micrometer", "micrometer", "micrometer"};
  options.scale = {1, 2.0, 0.5, 0.5};
  options.translation = {0, 10, 0, 0};
  options.chunks = {1, 4, 8, 8};
  options.name = "cells";
  auto stats = write_multiscale(dir / "img.zarr", Source{values.data(), {}, Device::cpu, nullptr, shape, kU16}, options);
  ASSERT_EQ(stats.levels.size(), 3u);
  EXPECT_EQ(stats.levels[2].shape, (std::vector<std::uint64_t>{2, 2, 8, 5}));

  const json attrs = read_json(dir / "img.zarr" / ".zattrs");
  ASSERT_TRUE(std::filesystem::exists(dir / "img.zarr" / ".zgroup"));
  const json& ms = attrs.at("multiscales").at(0);
  EXPECT_EQ(ms.at("version"), "0.4");
  EXPECT_EQ(ms.at("name"), "cells");
  EXPECT_EQ(ms.at("axes"), json::parse(R"([{"name":"c","type":"channel"},
      {"name":"z","type":"space","unit":"micrometer"},{"name":"y","type":"space","unit":"micrometer"},
      {"name":"x","type":"space","unit":"micrometer"}])"));
  ASSERT_EQ(ms.at("datasets").size(), 3u);
  // Mean: each level's pixel centre is its block's centre, translation += scale_above / 2.
  const json expected_datasets = json::parse(R"([
    {"path":"0","coordinateTransformations":[{"type":"scale","scale":[1.0,2.0,0.5,0.5]},
                                             {"type":"translation","translation":[0.0,10.0,0.0,0.0]}]},
    {"path":"1","coordinateTransformations":[{"type":"scale","scale":[1.0,4.0,1.0,1.0]},
                                             {"type":"translation","translation":[0.0,11.0,0.25,0.25]}]},
    {"path":"2","coordinateTransformations":[{"type":"scale","scale":[1.0,8.0,2.0,2.0]},
                                             {"type":"translation","translation":[0.0,13.0,0.75,0.75]}]}])");
  EXPECT_EQ(ms.at("datasets"), expected_datasets);
  EXPECT_EQ(ms.at("type"), "mean");
  const json zarray = read_json(dir / "img.zarr" / "1" / ".zarray");
  EXPECT_EQ(zarray.at("zarr_format"), 2);
  EXPECT_EQ(zarray.at("dimension_separator"), "/");
  EXPECT_EQ(zarray.at("shape"), json::array({2, 4, 16, 10}));

  // zarrdirect's own reader places every level where the metadata says.
  auto image = Multiscale::open(dir / "img.zarr");
  EXPECT_EQ(image.version(), "0.4");
  ASSERT_EQ(image.levels().size(), 3u);
  EXPECT_EQ(image.levels()[2].scale, (std::vector<double>{1, 8, 2, 2}));
  EXPECT_EQ(image.levels()[1].translation, (std::vector<double>{0, 11, 0.25, 0.25}));
  EXPECT_EQ(image.axes()[1].unit, "micrometer");

  // Every level is the one above, downsampled.
  std::vector<std::uint16_t> above = values;
  std::vector<std::uint64_t> above_shape = shape;
  for (std::size_t k = 1; k < 3; ++k) {
    auto level_shape = downsampled_shape(above_shape, 3);
    std::vector<std::uint16_t> expected(product(level_shape));
    downsample_host(above.data(), expected.data(), downsample_geometry(above_shape, 3), kU16, DownsampleMethod::mean, 2);
    auto level = image.open_level(k).read();
    ASSERT_EQ(level.shape(), level_shape);
    EXPECT_EQ(std::memcmp(level.data(), expected.data(), level.nbytes()), 0) << "level " << k;
    above = expected;
    above_shape = level_shape;
  }
}

TEST(WriteMultiscale, Ngff05MetadataOnZarrV3WithDimensionNames) {
  test::TempDir dir;
  const std::vector<std::uint64_t> shape = {16, 24};
  auto values = ramp(product(shape), 2);
  MultiscaleWriteOptions options;
  options.levels = 2;
  options.ngff = "0.5";
  options.method = DownsampleMethod::nearest;
  options.chunks = {8, 8};
  options.shards = {16, 16};
  write_multiscale(dir / "img.zarr", Source{values.data(), {}, Device::cpu, nullptr, shape, kU16}, options);
  const json group = read_json(dir / "img.zarr" / "zarr.json");
  EXPECT_EQ(group.at("node_type"), "group");
  const json& ome = group.at("attributes").at("ome");
  EXPECT_EQ(ome.at("version"), "0.5");
  const json& ms = ome.at("multiscales").at(0);
  EXPECT_FALSE(ms.contains("version"));
  EXPECT_EQ(ms.at("axes"), json::parse(R"([{"name":"y","type":"space"},{"name":"x","type":"space"}])"));
  // Nearest keeps each block's last pixel (2i+1): the level moves by a whole pixel.
  EXPECT_EQ(ms.at("datasets").at(1), json::parse(R"({"path":"1","coordinateTransformations":[
      {"type":"scale","scale":[2.0,2.0]},{"type":"translation","translation":[1.0,1.0]}]})"));
  const json array = read_json(dir / "img.zarr" / "1" / "zarr.json");
  EXPECT_EQ(array.at("dimension_names"), json::array({"y", "x"}));
  EXPECT_EQ(array.at("codecs").at(0).at("name"), "sharding_indexed");
  auto image = Multiscale::open(dir / "img.zarr");
  EXPECT_EQ(image.version(), "0.5");
  EXPECT_EQ(image.levels()[1].scale, (std::vector<double>{2, 2}));
  auto level1 = image.open_level(1).read();
  const auto* got = static_cast<const std::uint16_t*>(level1.data());
  for (std::uint64_t y = 0; y < 8; ++y)
    for (std::uint64_t x = 0; x < 12; ++x) ASSERT_EQ(got[y * 12 + x], values[(2 * y + 1) * 24 + 2 * x + 1]);
}

// Slab by slab from storage equals the whole in memory, with chunks of deeper levels that slabs
// do not fill (rows wait for the next slab), leading axes (strided slab rows), odd extents, and
// the pyramid's buffers bounded by the slab.
TEST(WriteMultiscale, SlabsEqualTheWholeAndStayWithinTheSlabBudget) {
  test::TempDir dir;
  for (unsigned halved : {2u, 3u}) {
    SCOPED_TRACE(halved);
    const std::vector<std::uint64_t> shape = halved == 3 ? std::vector<std::uint64_t>{2, 75, 30, 21}
                                                         : std::vector<std::uint64_t>{3, 2, 83, 37};
    auto values = ramp(product(shape), 3 + halved);
    MultiscaleWriteOptions options;
    options.levels = 4;
    options.downsample_dims = halved;
    options.axes = halved == 3 ? std::vector<std::string>{"c", "z", "y", "x"} : std::vector<std::string>{"t", "c", "y", "x"};
    options.chunks = halved == 3 ? std::vector<std::uint64_t>{1, 8, 16, 16} : std::vector<std::uint64_t>{1, 1, 8, 16};
    const std::string tag = std::to_string(halved);
    write_multiscale(dir / ("whole" + tag), Source{values.data(), {}, Device::cpu, nullptr, shape, kU16}, options);
    Array source = Array::open(dir / ("whole" + tag) / "0");

    std::uint64_t row_bytes = 2;
    for (std::size_t d = 0; d < shape.size(); ++d)
      if (d != shape.size() - halved) row_bytes *= shape[d];
    options.slab_bytes = 10 * row_bytes;  // rounded down to lcm(8, 2^3) = 8 rows
    auto stats = write_multiscale(dir / ("slabs" + tag), source, options);
    EXPECT_EQ(stats.slab_rows, 8u);
    EXPECT_EQ(stats.slabs, (shape[shape.size() - halved] + 7) / 8);
    // Two slabs (one read while the other is written), the downsampled parts (1/4 + 1/16 + ... or
    // 1/8 + ...) and a waiting chunk row per deeper level (8 rows of a quarter, ... of the plane):
    // under 4 slabs, and more than the two slab buffers.
    EXPECT_LE(stats.peak_buffer_bytes, 4 * 8 * row_bytes);
    EXPECT_GT(stats.peak_buffer_bytes, 2 * 8 * row_bytes);
    EXPECT_EQ(stats.chunks_merged, 0u);  // whole chunks only: no chunk written by two slabs
    // The time split is reported: every slab was read and written.
    EXPECT_GT(stats.read_seconds, 0.0);
    EXPECT_GT(stats.pyramid_seconds, 0.0);
    EXPECT_GE(stats.read_wait_seconds, 0.0);
    for (int k = 0; k < 4; ++k) {
      auto a = Array::open(dir / ("whole" + tag) / std::to_string(k)).read();
      auto b = Array::open(dir / ("slabs" + tag) / std::to_string(k)).read();
      ASSERT_EQ(a.shape(), b.shape());
      EXPECT_EQ(std::memcmp(a.data(), b.data(), a.nbytes()), 0) << "level " << k;
    }
    EXPECT_EQ(read_json(dir / ("whole" + tag) / ".zattrs"), read_json(dir / ("slabs" + tag) / ".zattrs"));
  }
}

TEST(WriteMultiscale, RefusesOptionsThatDoNotFit) {
  test::TempDir dir;
  std::vector<std::uint16_t> values(4 * 6 * 8);
  Source source{values.data(), {}, Device::cpu, nullptr, {4, 6, 8}, kU16};
  auto refuses = [&](auto edit, const std::string& words) {
    MultiscaleWriteOptions options;
    options.levels = 2;
    edit(options);
    try {
      write_multiscale(dir / "x.zarr", source, options);
      ADD_FAILURE() << "accepted; expected an error with " << words;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::invalid_argument) << e.what();
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
    EXPECT_FALSE(std::filesystem::exists(dir / "x.zarr"));
  };
  refuses([](auto& o) { o.axes = {"y", "x"}; }, "axes");
  refuses([](auto& o) { o.axes = {"y", "y", "x"}; }, "twice");
  refuses([](auto& o) { o.axes = {"c", "t", "x"}; }, "axes");
  refuses([](auto& o) { o.axes = {"y", "x", "c"}; }, "axes");
  refuses([](auto& o) { o.levels = 5; }, "levels");
  refuses([](auto& o) { o.shards = {4, 6, 8}; }, "shards");
  refuses([](auto& o) { o.ngff = "0.3"; }, "ngff");
  refuses([](auto& o) { o.scale = {1, 0, 1}; }, "scale");
  refuses([](auto& o) { o.units = {"micrometer"}; }, "units");
  refuses([](auto& o) { o.downsample_dims = 4; }, "downsample");
  std::vector<std::uint64_t> complex(2 * 4 * 4);
  MultiscaleWriteOptions options;
  options.method = DownsampleMethod::max;
  EXPECT_THROW(write_multiscale(dir / "c.zarr",
                                Source{complex.data(), {}, Device::cpu, nullptr, {4, 4}, DataType{ScalarKind::complex, 8}},
                                options),
               Error);
}

TEST(WriteMultiscale, ExistingPathNeedsOverwrite) {
  test::TempDir dir;
  std::vector<std::uint8_t> values(16 * 16, 7);
  Source source{values.data(), {}, Device::cpu, nullptr, {16, 16}, DataType{ScalarKind::unsigned_int, 1}};
  MultiscaleWriteOptions options;
  write_multiscale(dir / "x.zarr", source, options);
  EXPECT_THROW(write_multiscale(dir / "x.zarr", source, options), Error);
  options.overwrite = true;
  options.levels = 2;
  write_multiscale(dir / "x.zarr", source, options);
  EXPECT_EQ(Multiscale::open(dir / "x.zarr").levels().size(), 2u);
  EXPECT_FALSE(std::filesystem::exists(dir / "x.zarr" / "3"));
}

}  // namespace
}  // namespace zarrdirect

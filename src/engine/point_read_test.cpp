// Point reads (Array::read_points_into): equal to gathering from a whole read for random points
// (sharded and not, v2 and v3, edge and missing chunks, repeats, negative indices), reading only
// the chunks that hold a point, each once.
#include "engine/point_read.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <random>
#include <set>

#include <fmt/format.h>

#include "engine/array_writer.hpp"
#include "test_support.hpp"
#include "zarrdirect/array.hpp"

namespace zarrdirect {
namespace {

using nlohmann::json;
using Coordinates = std::vector<std::vector<std::int64_t>>;

const json kBytes = json::array({{{"name", "bytes"}, {"configuration", {{"endian", "little"}}}}});
const json kZstd = json::array({{{"name", "bytes"}, {"configuration", {{"endian", "little"}}}},
                                {{"name", "zstd"}, {"configuration", {{"level", 1}, {"checksum", false}}}}});

json v3(std::vector<std::uint64_t> shape, std::vector<std::uint64_t> chunks, json codecs) {
  return {{"zarr_format", 3},
          {"node_type", "array"},
          {"shape", shape},
          {"data_type", "uint16"},
          {"chunk_grid", {{"name", "regular"}, {"configuration", {{"chunk_shape", chunks}}}}},
          {"chunk_key_encoding", {{"name", "default"}}},
          {"fill_value", 7},
          {"codecs", codecs}};
}

json sharded(std::vector<std::uint64_t> inner) {
  return json::array({{{"name", "sharding_indexed"},
                       {"configuration", {{"chunk_shape", inner}, {"codecs", kZstd}, {"index_codecs", kBytes}}}}});
}

json v2(std::vector<std::uint64_t> shape, std::vector<std::uint64_t> chunks) {
  return {{"zarr_format", 2}, {"shape", shape},  {"chunks", chunks},
          {"dtype", "<u2"},   {"fill_value", 7}, {"order", "C"},
          {"compressor", {{"id", "zstd"}, {"level", 1}}}, {"filters", nullptr}};
}

struct Case {
  std::string name;
  json doc;
  bool skip_fill = false;
};

std::vector<Case> cases() {
  return {{"v3 zstd, edge chunks", v3({37, 29, 18}, {8, 8, 8}, kZstd)},
          {"v3 raw", v3({20, 17}, {6, 5}, kBytes)},
          {"v2 zstd", v2({33, 21}, {8, 6})},
          {"v3 sharded", v3({37, 29, 18}, {16, 16, 8}, sharded({4, 8, 4}))},
          {"v3 with missing chunks", v3({40, 40}, {8, 8}, kZstd), true}};
}

Array make_array(const test::TempDir& dir, const Case& c) {
  auto shape = c.doc["shape"].get<std::vector<std::uint64_t>>();
  std::uint64_t n = 2;
  for (auto e : shape) n *= e;
  std::vector<std::byte> data(n);
  std::mt19937 rng(3);
  for (auto& b : data) b = static_cast<std::byte>(rng());
  if (c.skip_fill) {  // the first half the fill value 7 (little-endian uint16): chunks not stored
    for (std::size_t i = 0; i < data.size() / 2; i += 2) {
      data[i] = std::byte{7};
      data[i + 1] = std::byte{0};
    }
  }
  write_array(dir / "a", c.doc, data, WriteOptions{c.skip_fill});
  return Array::open(dir / "a");
}

// What the points are, from one read of the whole array.
std::vector<std::uint16_t> expected_points(const Array& array, const Coordinates& coords) {
  NDArray whole = array.read();
  const auto& shape = array.metadata().shape;
  const auto* data = static_cast<const std::uint16_t*>(whole.data());
  std::vector<std::uint16_t> out;
  for (std::size_t i = 0; i < coords.front().size(); ++i) {
    std::uint64_t linear = 0;
    for (std::size_t axis = 0; axis < shape.size(); ++axis) {
      auto index = coords[axis][i];
      if (index < 0) index += static_cast<std::int64_t>(shape[axis]);
      linear = linear * shape[axis] + static_cast<std::uint64_t>(index);
    }
    out.push_back(data[linear]);
  }
  return out;
}

Coordinates random_points(const std::vector<std::uint64_t>& shape, std::size_t count, std::mt19937& rng) {
  Coordinates coords(shape.size());
  for (std::size_t axis = 0; axis < shape.size(); ++axis) {
    const auto extent = static_cast<std::int64_t>(shape[axis]);
    for (std::size_t i = 0; i < count; ++i) {
      auto index = static_cast<std::int64_t>(rng() % shape[axis]);
      if (rng() % 4 == 0) index -= extent;  // some negative
      coords[axis].push_back(index);
    }
  }
  return coords;
}

Destination host(void* data) {
  Destination destination;
  destination.data = data;
  return destination;
}

std::vector<std::uint16_t> read_points(const Array& array, const Coordinates& coords, ReadStats* stats = nullptr) {
  std::vector<std::uint16_t> out(coords.front().size(), 0xBEEF);
  ReadStats got = array.read_points_into(coords, host(out.data()));
  if (stats) *stats = got;
  return out;
}

TEST(ReadPoints, EqualsGatherFromWholeRead) {
  for (const auto& c : cases()) {
    SCOPED_TRACE(c.name);
    test::TempDir dir;
    Array array = make_array(dir, c);
    std::mt19937 rng(17);
    Coordinates coords = random_points(array.metadata().shape, 300, rng);
    for (auto& axis : coords) axis.push_back(axis.front());  // a repeat
    EXPECT_EQ(read_points(array, coords), expected_points(array, coords));
  }
}

TEST(ReadPoints, ReadsEachChunkHoldingAPointOnce) {
  for (const auto& c : cases()) {
    SCOPED_TRACE(c.name);
    test::TempDir dir;
    Array array = make_array(dir, c);
    const auto& shape = array.metadata().shape;
    std::vector<std::uint64_t> cell = array.metadata().chunk_shape;
    if (c.doc.contains("codecs") && c.doc["codecs"][0]["name"] == "sharding_indexed")
      cell = c.doc["codecs"][0]["configuration"]["chunk_shape"].get<std::vector<std::uint64_t>>();
    std::mt19937 rng(9);
    Coordinates coords = random_points(shape, 12, rng);
    std::set<std::vector<std::uint64_t>> cells;
    for (std::size_t i = 0; i < coords.front().size(); ++i) {
      std::vector<std::uint64_t> at;
      for (std::size_t axis = 0; axis < shape.size(); ++axis) {
        auto index = coords[axis][i];
        if (index < 0) index += static_cast<std::int64_t>(shape[axis]);
        at.push_back(static_cast<std::uint64_t>(index) / cell[axis]);
      }
      cells.insert(at);
    }
    ReadStats stats;
    read_points(array, coords, &stats);
    EXPECT_EQ(stats.chunks_total, cells.size());
    EXPECT_EQ(stats.chunks_decoded + stats.chunks_missing, cells.size());
    EXPECT_EQ(stats.bytes_out, coords.front().size() * 2);
  }
}

TEST(ReadPoints, SmallBatchesGiveTheSameResult) {
  test::TempDir dir;
  Case c = cases()[0];
  Array array = make_array(dir, c);
  std::mt19937 rng(23);
  Coordinates coords = random_points(array.metadata().shape, 200, rng);
  auto expected = expected_points(array, coords);
  // The engine's own call with a batch of one box at a time.
  auto impl = Array::Impl::create(dir / "a", array.metadata());
  PointCoordinates points = resolve_points(coords, array.metadata().shape);
  std::vector<std::uint16_t> out(expected.size());
  ReadStats stats = read_points_to_host(*impl, points, reinterpret_cast<std::byte*>(out.data()), Settings{}, 1);
  EXPECT_EQ(out, expected);
  EXPECT_EQ(stats.chunks_total, group_points(points, array.metadata().chunk_shape).size());
}

TEST(ReadPoints, GroupsByCellWithBoundingBoxes) {
  PointCoordinates points{{0, 9, 1, 8, 3}, {5, 0, 2, 7, 6}};
  std::vector<std::uint64_t> cell{4, 4};
  auto groups = group_points(points, cell);
  // Points (0,5) and (3,6) in cell (0,1), (1,2) in (0,0), (9,0) in (2,0), (8,7) in (2,1).
  ASSERT_EQ(groups.size(), 4u);
  EXPECT_EQ(groups[0].points, (std::vector<std::size_t>{2}));
  EXPECT_EQ(groups[0].box, (Region{{1, 2}, {2, 3}}));
  EXPECT_EQ(groups[1].points, (std::vector<std::size_t>{0, 4}));
  EXPECT_EQ(groups[1].box, (Region{{0, 4}, {5, 7}}));
  EXPECT_EQ(groups[2].points, (std::vector<std::size_t>{1}));
  EXPECT_EQ(groups[3].points, (std::vector<std::size_t>{3}));
}

TEST(ReadPoints, EmptyAndBadCoordinates) {
  test::TempDir dir;
  Array array = make_array(dir, cases()[1]);  // 20 x 17
  std::uint16_t sink = 0;
  ReadStats stats = array.read_points_into({{}, {}}, host(&sink));
  EXPECT_EQ(stats.chunks_total, 0u);
  auto message_of = [&](const Coordinates& coords) {
    try {
      array.read_points_into(coords, host(&sink));
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::invalid_argument);
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message_of({{0}, {17}}).find("index 17 (point 0) is out of bounds for axis 1 with size 17"),
            std::string::npos);
  EXPECT_NE(message_of({{0, -21}, {0, 0}}).find("index -21 (point 1) is out of bounds for axis 0 with size 20"),
            std::string::npos);
  EXPECT_NE(message_of({{0, 1}, {0}}).find("axis 1 lists 1"), std::string::npos);
  EXPECT_NE(message_of({{0}}).find("for 1 axes given for an array of 2"), std::string::npos);
}

// Indexes at int64's extremes, and extents past INT64_MAX (which have no int64 value: compared as
// such, every index was out of bounds, with a negative "size" in the message).
TEST(ReadPoints, ExtremeIndexesAndExtentsResolve) {
  constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  const std::vector<std::uint64_t> huge{~std::uint64_t{0}, std::uint64_t{1} << 63};
  auto points = resolve_points({{5, -1, kMin, kMax}, {kMin, -1, 0, kMax}}, huge);
  EXPECT_EQ(points[0], (std::vector<std::uint64_t>{5, ~std::uint64_t{0} - 1, (std::uint64_t{1} << 63) - 1,
                                                   static_cast<std::uint64_t>(kMax)}));
  EXPECT_EQ(points[1], (std::vector<std::uint64_t>{0, (std::uint64_t{1} << 63) - 1, 0, static_cast<std::uint64_t>(kMax)}));
  const std::vector<std::uint64_t> small{3};
  for (std::int64_t bad : {kMin, kMin + 1, std::int64_t{-4}, std::int64_t{3}, kMax}) {
    try {
      resolve_points({{bad}}, small);
      ADD_FAILURE() << bad << " accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(fmt::format("index {} (point 0) is out of bounds for axis 0 with size 3", bad)),
                std::string::npos)
          << e.what();
    }
  }
}

// More points than the memory limit can group is an error before any grouping allocation.
TEST(ReadPoints, PointsPastTheMemoryLimitAreRefused) {
  test::TempDir dir;
  Array array = make_array(dir, cases()[1]);  // 20 x 17
  Coordinates many(2, std::vector<std::int64_t>(100000, 3));
  std::vector<std::uint16_t> out(100000);
  Settings limited;
  limited.memory_limit_bytes = std::size_t{1} << 20;
  try {
    array.read_points_into(many, host(out.data()), limited);
    ADD_FAILURE() << "read";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::io);
    EXPECT_NE(std::string(e.what()).find("100000 points need about"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("memory_limit_bytes"), std::string::npos) << e.what();
  }
  // Within the limit the same points read.
  limited.memory_limit_bytes = std::size_t{64} << 20;
  std::fill(out.begin(), out.end(), std::uint16_t{0xdead});
  array.read_points_into(many, host(out.data()), limited);
  NDArray one = array.read({{3, 4}, {3, 4}});
  const auto expected = *static_cast<const std::uint16_t*>(one.data());
  EXPECT_EQ(out[0], expected);
  EXPECT_EQ(out[99999], expected);
}

}  // namespace
}  // namespace zarrdirect

// Selection reads (steps, index lists, masks, indices) through the public API, against the same
// selection taken from a whole read; ReadStats.chunks_total shows which chunks were visited.
#include "engine/selection_read.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include <fmt/format.h>

#include "engine/array_writer.hpp"
#include "test_support.hpp"
#include "zarrdirect/array.hpp"

namespace zarrdirect {
namespace {

using nlohmann::json;

const json kBytesLE = json::array({{{"name", "bytes"}, {"configuration", {{"endian", "little"}}}}});

json v3_doc(std::vector<std::uint64_t> shape, std::vector<std::uint64_t> chunks, const char* dtype, json codecs,
            json fill = 0) {
  return {{"zarr_format", 3},
          {"node_type", "array"},
          {"shape", shape},
          {"data_type", dtype},
          {"chunk_grid", {{"name", "regular"}, {"configuration", {{"chunk_shape", chunks}}}}},
          {"chunk_key_encoding", {{"name", "default"}}},
          {"fill_value", fill},
          {"codecs", codecs}};
}

json sharded(std::vector<std::uint64_t> inner, const char* location = "end") {
  return json::array({{{"name", "sharding_indexed"},
                       {"configuration",
                        {{"chunk_shape", inner}, {"codecs", kBytesLE}, {"index_location", location}}}}});
}

std::vector<std::byte> pattern(std::uint64_t elements, std::size_t element_size, std::uint32_t seed = 3) {
  std::vector<std::byte> data(elements * element_size);
  std::mt19937 rng(seed);
  for (auto& b : data) b = static_cast<std::byte>(rng());
  return data;
}

// The reference: the selection gathered from the whole array by the plain definition.
std::vector<std::byte> gather(const std::vector<std::byte>& data, const std::vector<std::uint64_t>& shape,
                              const Selection& selection, std::size_t element) {
  const std::size_t rank = shape.size();
  std::vector<std::vector<std::uint64_t>> picked;
  std::uint64_t count = 1;
  for (std::size_t d = 0; d < rank; ++d) {
    picked.push_back(selection[d].resolve(shape[d], d));
    count *= picked.back().size();
  }
  std::vector<std::byte> out;
  for (std::uint64_t n = 0; n < count; ++n) {
    std::uint64_t rest = n, offset = 0;
    std::vector<std::uint64_t> at(rank);
    for (std::size_t d = rank; d-- > 0;) {
      at[d] = rest % picked[d].size();
      rest /= picked[d].size();
    }
    for (std::size_t d = 0; d < rank; ++d) offset = offset * shape[d] + picked[d][at[d]];
    out.insert(out.end(), data.begin() + static_cast<std::ptrdiff_t>(offset * element),
               data.begin() + static_cast<std::ptrdiff_t>((offset + 1) * element));
  }
  return out;
}

std::vector<std::byte> bytes_of(const NDArray& array) {
  const auto* p = static_cast<const std::byte*>(array.data());
  return std::vector<std::byte>(p, p + array.nbytes());
}

AxisSelection random_axis(std::mt19937& rng, std::uint64_t extent) {
  const auto n = static_cast<std::int64_t>(extent);
  auto pick = [&](std::int64_t lo, std::int64_t hi) {
    return lo + static_cast<std::int64_t>(rng() % static_cast<std::uint32_t>(hi - lo + 1));
  };
  switch (rng() % 6) {
    case 0: return AxisSelection::all();
    case 1: {
      std::int64_t step = pick(1, 7) * (rng() % 2 ? 1 : -1);
      return AxisSelection::slice_open(rng() % 3 != 0, pick(-n - 2, n + 2), rng() % 3 != 0, pick(-n - 2, n + 2), step);
    }
    case 2: return AxisSelection::index(pick(-n, n - 1));
    case 3: {
      std::vector<std::int64_t> list(static_cast<std::size_t>(pick(0, 6)));
      for (auto& i : list) i = pick(-n, n - 1);
      return AxisSelection::list(list);
    }
    case 4: {
      std::vector<bool> mask(extent);
      for (std::size_t i = 0; i < mask.size(); ++i) mask[i] = rng() % 3 == 0;
      return AxisSelection::mask(mask);
    }
    default: return AxisSelection::slice(pick(0, n), pick(0, n), 1);
  }
}

void check_selections(const json& doc, std::size_t element, int cases, std::uint32_t seed, bool skip_fill = false) {
  test::TempDir dir;
  const auto shape = doc["shape"].get<std::vector<std::uint64_t>>();
  std::uint64_t elements = 1;
  for (auto e : shape) elements *= e;
  auto data = pattern(elements, element, seed);
  if (skip_fill)  // a third of the elements zero (the fill value): whole chunks go missing
    for (std::size_t i = 0; i < data.size() / 3; ++i) data[i] = std::byte{0};
  write_array(dir / "a", doc, data, {.skip_fill_chunks = skip_fill});
  Array array = Array::open(dir / "a");
  std::mt19937 rng(seed);
  for (int c = 0; c < cases; ++c) {
    Selection selection;
    for (auto extent : shape) selection.push_back(random_axis(rng, extent));
    SCOPED_TRACE(to_string(selection));
    auto expected = gather(data, shape, selection, element);
    for (unsigned threads : {1u, 4u}) {
      Settings settings;
      settings.threads = threads;
      NDArray result = array.read_selection(selection, Device::cpu, settings);
      ASSERT_EQ(result.shape(), selection_shape(selection, shape));
      ASSERT_EQ(bytes_of(result), expected) << threads << " threads";
    }
  }
}

TEST(SelectionRead, UnshardedEdgeChunks) {
  check_selections(v3_doc({13, 17, 5}, {4, 5, 3}, "uint16", kBytesLE), 2, 150, 1);
}

TEST(SelectionRead, ElementSizes) {
  check_selections(v3_doc({11, 9}, {4, 4}, "uint8", kBytesLE), 1, 60, 2);
  check_selections(v3_doc({11, 9}, {4, 4}, "float32", kBytesLE), 4, 60, 3);
  check_selections(v3_doc({11, 9}, {4, 4}, "complex128", kBytesLE), 16, 60, 4);
}

TEST(SelectionRead, V2FortranOrderAndMissingChunks) {
  json doc = {{"zarr_format", 2}, {"shape", {10, 9, 4}}, {"chunks", {3, 4, 3}}, {"dtype", "<u4"},
              {"fill_value", 0},  {"order", "F"},        {"compressor", nullptr}, {"filters", nullptr}};
  check_selections(doc, 4, 100, 5, true);
}

TEST(SelectionRead, ShardedIndexAtStartAndEnd) {
  check_selections(v3_doc({21, 20}, {8, 6}, "uint16", sharded({4, 3}, "end")), 2, 120, 6);
  check_selections(v3_doc({21, 20}, {8, 6}, "uint16", sharded({4, 3}, "start")), 2, 60, 7, true);
}

TEST(SelectionRead, ZeroDimensionalAndEmpty) {
  test::TempDir dir;
  json doc = v3_doc({}, {}, "int32", kBytesLE, 7);
  std::int32_t value = 42;
  write_array(dir / "a", doc, std::as_bytes(std::span(&value, 1)), {});
  Array scalar = Array::open(dir / "a");
  EXPECT_EQ(bytes_of(scalar.read_selection({})), std::vector<std::byte>(std::as_bytes(std::span(&value, 1)).begin(),
                                                                         std::as_bytes(std::span(&value, 1)).end()));
  json doc2 = v3_doc({10}, {3}, "int32", kBytesLE);
  std::vector<std::int32_t> values(10, 1);
  write_array(dir / "b", doc2, std::as_bytes(std::span(values)), {});
  NDArray none = Array::open(dir / "b").read_selection({AxisSelection::list({})});
  EXPECT_EQ(none.shape(), std::vector<std::uint64_t>{0});
  EXPECT_EQ(none.stats().chunks_total, 0u);
}

// Only the chunks holding a selected element are visited: a step larger than a chunk skips them.
TEST(SelectionRead, VisitsOnlyChunksWithASelectedElement) {
  test::TempDir dir;
  const std::vector<std::uint64_t> shape{100, 60};
  std::vector<std::uint16_t> values(6000);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<std::uint16_t>(i);
  write_array(dir / "a", v3_doc(shape, {5, 6}, "uint16", kBytesLE), std::as_bytes(std::span(values)), {});
  write_array(dir / "s", v3_doc(shape, {20, 12}, "uint16", sharded({5, 6})), std::as_bytes(std::span(values)), {});
  for (const char* name : {"a", "s"}) {
    SCOPED_TRACE(name);
    Array array = Array::open(dir / name);
    // Rows 0, 30, 60, 90 (chunks 0, 6, 12, 18 of 20), columns 59, 47, ..., 11 (chunks 9, 7, ..., 1 of 10).
    NDArray result = array.read_selection({AxisSelection::slice(0, 100, 30), AxisSelection::slice_open(false, 0, true, 5, -12)});
    ASSERT_EQ(result.shape(), (std::vector<std::uint64_t>{4, 5}));
    EXPECT_EQ(result.stats().chunks_total, 4u * 5u);
    const auto* got = static_cast<const std::uint16_t*>(result.data());
    EXPECT_EQ(got[0], 59);
    EXPECT_EQ(got[1 * 5 + 4], 30 * 60 + 11);
    // An index list: two chunks on each axis however far apart.
    NDArray listed = array.read_selection({AxisSelection::list({99, 0, 99}), AxisSelection::list({-1, 0})});
    EXPECT_EQ(listed.stats().chunks_total, 4u);
    const auto* l = static_cast<const std::uint16_t*>(listed.data());
    EXPECT_EQ((std::vector<std::uint16_t>(l, l + 6)), (std::vector<std::uint16_t>{5999, 5940, 59, 0, 5999, 5940}));
  }
}

TEST(SelectionRead, IntoStridedDestinationWithDroppedAxis) {
  test::TempDir dir;
  std::vector<std::uint16_t> values(6 * 7 * 8);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<std::uint16_t>(i);
  write_array(dir / "a", v3_doc({6, 7, 8}, {4, 3, 5}, "uint16", kBytesLE), std::as_bytes(std::span(values)), {});
  Array array = Array::open(dir / "a");
  // [::-2, 3, [1, 7]] into a Fortran-ordered 3x2 buffer.
  std::vector<std::uint16_t> out(6, 0xffff);
  Destination destination{out.data(), {2, 6}, Device::cpu, nullptr};
  Selection selection{AxisSelection::slice_open(false, 0, false, 0, -2), AxisSelection::index(3),
                      AxisSelection::list({1, 7})};
  ReadStats stats = array.read_selection_into(selection, destination);
  EXPECT_EQ(stats.bytes_out, 12u);
  auto at = [](std::size_t i, std::size_t j, std::size_t k) { return static_cast<std::uint16_t>((i * 7 + j) * 8 + k); };
  EXPECT_EQ(out, (std::vector<std::uint16_t>{at(5, 3, 1), at(3, 3, 1), at(1, 3, 1), at(5, 3, 7), at(3, 3, 7),
                                             at(1, 3, 7)}));
  Destination wrong{out.data(), {2}, Device::cpu, nullptr};
  EXPECT_THROW(array.read_selection_into(selection, wrong), Error);
}

TEST(SelectionRead, BadSelectionsAreErrors) {
  test::TempDir dir;
  std::vector<std::uint16_t> values(20);
  write_array(dir / "a", v3_doc({4, 5}, {2, 2}, "uint16", kBytesLE), std::as_bytes(std::span(values)), {});
  Array array = Array::open(dir / "a");
  auto message = [&](const Selection& s) {
    try {
      array.read_selection(s);
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::invalid_argument);
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message({AxisSelection::list({4}), AxisSelection::all()}).find("index 4 is out of bounds for axis 0 with size 4"),
            std::string::npos);
  EXPECT_NE(message({AxisSelection::all(), AxisSelection::index(-6)}).find("index -6 is out of bounds for axis 1"),
            std::string::npos);
  EXPECT_NE(message({AxisSelection::mask({true, false}), AxisSelection::all()}).find("size of axis is 4"),
            std::string::npos);
  EXPECT_NE(message({AxisSelection::slice(0, 4, 0), AxisSelection::all()}).find("step cannot be zero"), std::string::npos);
  EXPECT_NE(message({AxisSelection::all()}).find("has 1 axes, the array has 2"), std::string::npos);
}

}  // namespace
}  // namespace zarrdirect

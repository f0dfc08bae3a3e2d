// The read engine through the public API: arrays written by the array writer read back equal to
// the writer's input, whole and in regions that cut chunk and shard boundaries.
#include "engine/reader.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <limits>
#include <thread>
#include <cstring>
#include <random>

#include <fmt/format.h>

#include "engine/array_writer.hpp"
#include "test_support.hpp"
#include "zarrdirect/array.hpp"

namespace zarrdirect {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

// Distinct values for every element of a uint16 array (wrapping is fine at these sizes).
std::vector<std::byte> pattern(std::uint64_t elements, std::size_t element_size, std::uint32_t seed = 1) {
  std::vector<std::byte> data(elements * element_size);
  std::mt19937 rng(seed);
  for (auto& b : data) b = static_cast<std::byte>(rng());
  return data;
}

// The C-order slice `region` of a C-order array of `shape`.
std::vector<std::byte> slice(const std::vector<std::byte>& data, const std::vector<std::uint64_t>& shape,
                             const Region& region, std::size_t element) {
  std::vector<std::byte> out;
  const std::size_t rank = shape.size();
  std::uint64_t count = 1;
  for (const auto& r : region) count *= r.size();
  std::vector<std::uint64_t> index(rank);
  for (std::uint64_t n = 0; n < count; ++n) {
    std::uint64_t rest = n, offset = 0, stride = 1;
    for (std::size_t d = rank; d-- > 0;) {
      index[d] = region[d].start + rest % region[d].size();
      rest /= region[d].size();
    }
    for (std::size_t d = rank; d-- > 0;) {
      offset += index[d] * stride;
      stride *= shape[d];
    }
    out.insert(out.end(), data.begin() + static_cast<std::ptrdiff_t>(offset * element),
               data.begin() + static_cast<std::ptrdiff_t>((offset + 1) * element));
  }
  return out;
}

std::vector<std::byte> bytes_of(const NDArray& array) {
  const auto* p = static_cast<const std::byte*>(array.data());
  return std::vector<std::byte>(p, p + array.nbytes());
}

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

json v2_doc(std::vector<std::uint64_t> shape, std::vector<std::uint64_t> chunks, const char* dtype, const char* order,
            json fill = 0, const char* separator = ".") {
  return {{"zarr_format", 2}, {"shape", shape},       {"chunks", chunks},          {"dtype", dtype},
          {"fill_value", fill}, {"order", order},      {"compressor", nullptr},     {"filters", nullptr},
          {"dimension_separator", separator}};
}

const json kBytesLE = json::array({{{"name", "bytes"}, {"configuration", {{"endian", "little"}}}}});

// Random regions of `shape`, always including the whole array, an empty one and single elements.
std::vector<Region> regions_of(const std::vector<std::uint64_t>& shape, int count, std::uint32_t seed) {
  std::vector<Region> regions{full_region(shape)};
  std::mt19937 rng(seed);
  for (int i = 0; i < count; ++i) {
    Region region;
    for (auto extent : shape) {
      std::uint64_t a = extent ? rng() % (extent + 1) : 0, b = extent ? rng() % (extent + 1) : 0;
      if (i % 5 == 0 && extent) b = a + (a < extent ? 1 : 0);  // a single index
      region.push_back({std::min(a, b), std::max(a, b)});
    }
    regions.push_back(region);
  }
  Region empty = full_region(shape);
  if (!empty.empty()) empty[0].stop = empty[0].start;
  regions.push_back(empty);
  return regions;
}

struct Fixture {
  std::string name;
  json doc;
  std::size_t element;
  WriteOptions options;
};

// Writes the array, then reads every region with 1 and with 7 threads and compares to the input.
void check_round_trip(const Fixture& f, int region_count = 40) {
  SCOPED_TRACE(f.name);
  test::TempDir dir;
  std::vector<std::uint64_t> shape = f.doc["shape"].get<std::vector<std::uint64_t>>();
  std::uint64_t elements = 1;
  for (auto e : shape) elements *= e;
  auto data = pattern(elements, f.element);
  write_array(dir / "a", f.doc, data, f.options);
  Array array = Array::open(dir / "a");
  EXPECT_EQ(array.metadata().shape, shape);
  for (const auto& region : regions_of(shape, region_count, 7)) {
    SCOPED_TRACE(to_string(region));
    auto expected = slice(data, shape, region, f.element);
    for (unsigned threads : {1u, 7u}) {
      Settings settings;
      settings.threads = threads;
      NDArray result = array.read(region, Device::cpu, settings);
      ASSERT_EQ(result.shape(), region_shape(region));
      ASSERT_EQ(bytes_of(result), expected) << threads << " threads";
      EXPECT_EQ(result.stats().bytes_out, expected.size());
      EXPECT_EQ(result.stats().io_path, "host");
    }
  }
}

TEST(Reader, V3EdgeChunksAndRegions) {
  check_round_trip({"v3 u2", v3_doc({13, 17, 5}, {4, 5, 3}, "uint16", kBytesLE), 2, {}});
}

TEST(Reader, V3BigEndianWithCrc32c) {
  json codecs = json::array({{{"name", "bytes"}, {"configuration", {{"endian", "big"}}}}, {{"name", "crc32c"}}});
  check_round_trip({"v3 i4 big crc32c", v3_doc({9, 11}, {4, 4}, "int32", codecs), 4, {}});
}

TEST(Reader, V3Transpose) {
  json codecs = json::array({{{"name", "transpose"}, {"configuration", {{"order", {2, 0, 1}}}}},
                             {{"name", "bytes"}, {"configuration", {{"endian", "little"}}}}});
  check_round_trip({"v3 f8 transpose", v3_doc({7, 6, 5}, {3, 4, 2}, "float64", codecs), 8, {}});
}

TEST(Reader, V3DotSeparatorAndOneDimension) {
  json doc = v3_doc({100}, {7}, "uint8", json::array({{{"name", "bytes"}}}));
  doc["chunk_key_encoding"] = {{"name", "default"}, {"configuration", {{"separator", "."}}}};
  check_round_trip({"v3 u1 dot", doc, 1, {}});
}

TEST(Reader, V2OrderFAndSlashSeparator) {
  check_round_trip({"v2 F", v2_doc({10, 9, 4}, {3, 4, 3}, ">u2", "F"), 2, {}});
  check_round_trip({"v2 C slash", v2_doc({10, 9}, {3, 4}, "<c8", "C", json::array({0, 0}), "/"), 8, {}});
}

TEST(Reader, ShardedIndexAtEndAndStart) {
  for (const char* location : {"end", "start"}) {
    json sharding = {{"name", "sharding_indexed"},
                     {"configuration",
                      {{"chunk_shape", {4, 3}},
                       {"codecs", kBytesLE},
                       {"index_codecs", json::array({{{"name", "bytes"}, {"configuration", {{"endian", "little"}}}},
                                                     {{"name", "crc32c"}}})},
                       {"index_location", location}}}};
    check_round_trip({fmt::format("sharded {}", location), v3_doc({21, 20}, {8, 6}, "uint16", json::array({sharding})), 2, {}});
  }
}

TEST(Reader, ShardedWithCompressionInsideIsReadWhole) {
  // crc32c after sharding: the chain is not sharding alone, so each shard decodes whole.
  json sharding = {{"name", "sharding_indexed"}, {"configuration", {{"chunk_shape", {2, 2}}, {"codecs", kBytesLE}}}};
  json codecs = json::array({sharding, {{"name", "crc32c"}}});
  check_round_trip({"sharded + crc32c", v3_doc({9, 7}, {4, 4}, "int16", codecs), 2, {}}, 15);
}

TEST(Reader, NestedSharding) {
  json inner = {{"name", "sharding_indexed"}, {"configuration", {{"chunk_shape", {2, 2}}, {"codecs", kBytesLE}}}};
  json outer = {{"name", "sharding_indexed"},
                {"configuration", {{"chunk_shape", {4, 4}}, {"codecs", json::array({inner})}}}};
  check_round_trip({"nested sharding", v3_doc({17, 10}, {8, 8}, "uint32", json::array({outer})), 4, {}}, 15);
}

TEST(Reader, MissingChunksReadAsTheFillValue) {
  test::TempDir dir;
  std::vector<std::uint64_t> shape{10, 10};
  json doc = v3_doc(shape, {3, 3}, "int16", kBytesLE, -5);
  std::vector<std::int16_t> values(100, -5);
  values[0] = 1;       // chunk (0, 0)
  values[99] = 2;      // chunk (3, 3), an edge chunk
  values[5 * 10 + 5] = 3;  // chunk (1, 1)
  write_array(dir / "a", doc, std::as_bytes(std::span(values)), {.skip_fill_chunks = true});
  EXPECT_TRUE(fs::exists(dir / "a/c/0/0"));
  EXPECT_FALSE(fs::exists(dir / "a/c/0/1"));
  Array array = Array::open(dir / "a");
  NDArray whole = array.read();
  std::vector<std::int16_t> got(100);
  std::memcpy(got.data(), whole.data(), 200);
  EXPECT_EQ(got, values);
  EXPECT_EQ(whole.stats().chunks_total, 16u);
  EXPECT_EQ(whole.stats().chunks_missing, 13u);
  // Nothing stored at all: every chunk is missing.
  test::TempDir empty;
  std::vector<std::int16_t> all_fill(100, -5);
  write_array(empty / "a", doc, std::as_bytes(std::span(all_fill)), {.skip_fill_chunks = true});
  NDArray filled = Array::open(empty / "a").read(parse_region("2:9,1:2", shape));
  std::vector<std::int16_t> part(7);
  std::memcpy(part.data(), filled.data(), 14);
  EXPECT_EQ(part, std::vector<std::int16_t>(7, -5));
  EXPECT_EQ(filled.stats().bytes_read, 0u);
}

TEST(Reader, MissingShardsAndFloatFill) {
  test::TempDir dir;
  std::vector<std::uint64_t> shape{8, 8};
  json sharding = {{"name", "sharding_indexed"}, {"configuration", {{"chunk_shape", {2, 2}}, {"codecs", kBytesLE}}}};
  json doc = v3_doc(shape, {4, 4}, "float32", json::array({sharding}), "NaN");
  std::vector<float> values(64, std::numeric_limits<float>::quiet_NaN());
  for (int i = 0; i < 4; ++i) values[i * 8 + i] = static_cast<float>(i);  // only shard (0, 0)
  write_array(dir / "a", doc, std::as_bytes(std::span(values)), {.skip_fill_chunks = true});
  EXPECT_FALSE(fs::exists(dir / "a/c/1/1"));
  NDArray whole = Array::open(dir / "a").read();
  std::vector<float> got(64);
  std::memcpy(got.data(), whole.data(), 256);
  for (int i = 0; i < 64; ++i) {
    if (std::isnan(values[i])) EXPECT_TRUE(std::isnan(got[i])) << i;
    else EXPECT_EQ(got[i], values[i]) << i;
  }
}

TEST(Reader, ZeroDimensionalArrays) {
  test::TempDir dir;
  std::int16_t value = -1234;
  write_array(dir / "v3", v3_doc({}, {}, "int16", kBytesLE), std::as_bytes(std::span(&value, 1)));
  EXPECT_TRUE(fs::exists(dir / "v3/c"));
  write_array(dir / "v2", v2_doc({}, {}, ">i2", "C"), std::as_bytes(std::span(&value, 1)));
  EXPECT_TRUE(fs::exists(dir / "v2/0"));
  for (const char* name : {"v3", "v2"}) {
    NDArray result = Array::open(dir / name).read();
    EXPECT_TRUE(result.shape().empty());
    ASSERT_EQ(result.nbytes(), 2u);
    std::int16_t got;
    std::memcpy(&got, result.data(), 2);
    EXPECT_EQ(got, -1234) << name;
    EXPECT_EQ(result.stats().chunks_total, 1u);
  }
  // A missing 0-d chunk is the fill value.
  fs::remove(dir / "v3/c");
  NDArray missing = Array::open(dir / "v3").read();
  std::int16_t got;
  std::memcpy(&got, missing.data(), 2);
  EXPECT_EQ(got, 0);
}

TEST(Reader, EmptyArraysAndEmptyRegions) {
  test::TempDir dir;
  write_array(dir / "a", v3_doc({0, 5}, {2, 2}, "uint8", json::array({"bytes"})), {});
  Array array = Array::open(dir / "a");
  NDArray result = array.read();
  EXPECT_EQ(result.shape(), (std::vector<std::uint64_t>{0, 5}));
  EXPECT_EQ(result.nbytes(), 0u);
  EXPECT_EQ(result.stats().chunks_total, 0u);
  write_array(dir / "b", v3_doc({4, 5}, {2, 2}, "uint8", json::array({"bytes"})), pattern(20, 1));
  NDArray none = Array::open(dir / "b").read({{1, 1}, {0, 5}});
  EXPECT_EQ(none.nbytes(), 0u);
  EXPECT_EQ(none.stats().chunks_total, 0u);
  // read_into an empty region needs no destination memory.
  EXPECT_NO_THROW(Array::open(dir / "b").read_into({{1, 1}, {0, 5}}, Destination{}));
}

TEST(Reader, ManyThreadsAndOneThreadAgree) {
  test::TempDir dir;
  std::vector<std::uint64_t> shape{64, 48};
  auto data = pattern(64 * 48, 4, 99);
  json codecs = json::array({{{"name", "bytes"}, {"configuration", {{"endian", "little"}}}}, {{"name", "crc32c"}}});
  write_array(dir / "a", v3_doc(shape, {5, 7}, "uint32", codecs), data);
  Array array = Array::open(dir / "a");
  Region region = parse_region("3:61,1:47", shape);
  Settings one;
  one.threads = 1;
  NDArray reference = array.read(region, Device::cpu, one);
  EXPECT_EQ(reference.stats().threads, 1u);
  EXPECT_EQ(bytes_of(reference), slice(data, shape, region, 4));
  for (unsigned threads : {2u, 3u, 16u, 64u}) {
    Settings many;
    many.threads = threads;
    NDArray result = array.read(region, Device::cpu, many);
    EXPECT_EQ(bytes_of(result), bytes_of(reference)) << threads;
    EXPECT_EQ(result.stats().chunks_total, reference.stats().chunks_total);
    EXPECT_EQ(result.stats().bytes_read, reference.stats().bytes_read);
    EXPECT_LE(result.stats().threads, threads);
  }
  // One Array read from several threads at once.
  std::vector<std::thread> readers;
  std::atomic<int> equal{0};
  for (int t = 0; t < 4; ++t)
    readers.emplace_back([&] {
      Settings s;
      s.threads = 3;
      if (bytes_of(array.read(region, Device::cpu, s)) == bytes_of(reference)) ++equal;
    });
  for (auto& thread : readers) thread.join();
  EXPECT_EQ(equal.load(), 4);
}

TEST(Reader, ProgressReportsAndCancels) {
  test::TempDir dir;
  std::vector<std::uint64_t> shape{40, 40};
  write_array(dir / "a", v3_doc(shape, {4, 4}, "uint8", json::array({"bytes"})), pattern(1600, 1));
  Array array = Array::open(dir / "a");
  Settings settings;
  settings.threads = 4;
  std::atomic<std::size_t> last_done{0}, total_seen{0}, calls{0};
  settings.progress = [&](std::size_t done, std::size_t total) {
    ++calls;
    last_done = std::max<std::size_t>(last_done, done);
    total_seen = total;
    return true;
  };
  array.read({}, Device::cpu, settings);
  EXPECT_GT(calls.load(), 0u);
  EXPECT_EQ(total_seen.load(), 100u);
  EXPECT_EQ(last_done.load(), 100u);

  std::atomic<std::size_t> cancel_calls{0};
  settings.progress = [&](std::size_t, std::size_t) {
    ++cancel_calls;
    return false;
  };
  try {
    array.read({}, Device::cpu, settings);
    ADD_FAILURE() << "not cancelled";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::cancelled);
  }
  EXPECT_LT(cancel_calls.load(), 100u);  // stopped early
}

TEST(Reader, ProgressCancelsShardedReads) {
  test::TempDir dir;
  std::vector<std::uint64_t> shape{32, 32};
  json sharding = {{"name", "sharding_indexed"}, {"configuration", {{"chunk_shape", {2, 2}}, {"codecs", kBytesLE}}}};
  write_array(dir / "a", v3_doc(shape, {8, 8}, "uint16", json::array({sharding})), pattern(1024, 2));
  Settings settings;
  settings.threads = 2;
  settings.progress = [](std::size_t, std::size_t) { return false; };
  try {
    Array::open(dir / "a").read({}, Device::cpu, settings);
    ADD_FAILURE() << "not cancelled";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::cancelled);
  }
}

TEST(Reader, ReadIntoStridedDestination) {
  test::TempDir dir;
  std::vector<std::uint64_t> shape{6, 7};
  auto data = pattern(42, 2, 5);
  write_array(dir / "a", v3_doc(shape, {4, 3}, "uint16", kBytesLE), data);
  Array array = Array::open(dir / "a");
  // Region 1:6, 2:7 (5x5) into a column-major 5x5 destination with one padding element per column.
  Region region = parse_region("1:6,2:7", shape);
  std::vector<std::uint16_t> dest(6 * 5, 0xabcd);
  Destination destination{dest.data(), {2, 12}, Device::cpu, nullptr};
  ReadStats stats = array.read_into(region, destination);
  EXPECT_EQ(stats.bytes_out, 50u);
  auto expected = slice(data, shape, region, 2);
  for (std::size_t r = 0; r < 5; ++r)
    for (std::size_t c = 0; c < 5; ++c) {
      std::uint16_t want;
      std::memcpy(&want, expected.data() + (r * 5 + c) * 2, 2);
      EXPECT_EQ(dest[c * 6 + r], want) << r << "," << c;
    }
  for (std::size_t c = 0; c < 5; ++c) EXPECT_EQ(dest[c * 6 + 5], 0xabcd);
  EXPECT_THROW(array.read_into(region, Destination{dest.data(), {2}, Device::cpu, nullptr}), Error);
  try {
    array.read_into(region, Destination{});
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::invalid_argument);
  }
}

TEST(Reader, RegionsOutOfBoundsAreInvalidArguments) {
  test::TempDir dir;
  write_array(dir / "a", v3_doc({4, 4}, {2, 2}, "uint8", json::array({"bytes"})), pattern(16, 1));
  Array array = Array::open(dir / "a");
  for (Region region : {Region{{0, 5}, {0, 4}}, Region{{3, 2}, {0, 4}}, Region{{0, 1}}}) {
    try {
      array.read(region);
      ADD_FAILURE() << to_string(region);
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::invalid_argument);
    }
  }
}

#ifndef ZARRDIRECT_WITH_CUDA
TEST(Reader, DeviceReadsWithoutCudaAreUnsupported) {
  test::TempDir dir;
  write_array(dir / "a", v3_doc({4}, {2}, "uint8", json::array({"bytes"})), pattern(4, 1));
  EXPECT_FALSE(cuda_available());
  try {
    Array::open(dir / "a").read({}, Device::cuda);
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::unsupported);
  }
}
#endif

TEST(Reader, ODirectReadsTheSame) {
  test::TempDir dir;
  std::vector<std::uint64_t> shape{64, 64};
  auto data = pattern(64 * 64, 2, 3);
  write_array(dir / "a", v3_doc(shape, {32, 64}, "uint16", kBytesLE), data);
  Settings settings;
  settings.o_direct = true;
  NDArray result = Array::open(dir / "a").read({}, Device::cpu, settings);
  EXPECT_EQ(bytes_of(result), data);
}

}  // namespace
}  // namespace zarrdirect

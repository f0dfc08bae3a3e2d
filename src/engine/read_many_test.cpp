// Array::read_many / read_batch / read_many_into: equal to one read per region for random
// regions (sharded and not, v2 and v3, edge chunks, missing chunks), each chunk decoded once.
#include "engine/read_many.hpp"

#include <gtest/gtest.h>

#include <random>
#include <set>
#include <thread>

#include "engine/array_writer.hpp"
#include "test_support.hpp"
#include "zarrdirect/array.hpp"

namespace zarrdirect {
namespace {

using nlohmann::json;

std::vector<std::byte> random_bytes(std::uint64_t n, std::uint32_t seed) {
  std::vector<std::byte> data(n);
  std::mt19937 rng(seed);
  for (auto& b : data) b = static_cast<std::byte>(rng());
  return data;
}

std::vector<std::byte> bytes_of(const NDArray& array) {
  const auto* p = static_cast<const std::byte*>(array.data());
  return {p, p + array.nbytes()};
}

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

const json kZstd = json::array({{{"name", "bytes"}, {"configuration", {{"endian", "little"}}}},
                                {{"name", "zstd"}, {"configuration", {{"level", 1}, {"checksum", false}}}}});

json sharded(std::vector<std::uint64_t> inner, bool checksum) {
  json index = json::array({{{"name", "bytes"}, {"configuration", {{"endian", "little"}}}}});
  if (checksum) index.push_back({{"name", "crc32c"}});
  return json::array({{{"name", "sharding_indexed"},
                       {"configuration", {{"chunk_shape", inner}, {"codecs", kZstd}, {"index_codecs", index}}}}});
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
          {"v3 raw", v3({20, 17}, {6, 5}, json::array({{{"name", "bytes"}, {"configuration", {{"endian", "little"}}}}}))},
          {"v2 zstd", v2({33, 21}, {8, 6})},
          {"v3 sharded", v3({37, 29, 18}, {16, 16, 8}, sharded({4, 8, 4}, false))},
          {"v3 sharded, checksummed index", v3({30, 21}, {12, 14}, sharded({4, 7}, true))},
          {"v3 with missing chunks", v3({40, 40}, {8, 8}, kZstd), true},
          // 512 KiB zstd chunks (four of zstd's blocks): regions near a chunk's start decode only
          // the part they need (CodecChain::decode_prefix), near its end all of it.
          {"v3 zstd, large chunks", v3({700, 600}, {512, 512}, kZstd)},
          {"v3 sharded, large inner chunks", v3({1100, 600}, {1024, 512}, sharded({512, 512}, false))}};
}

Region random_region(const std::vector<std::uint64_t>& shape, std::mt19937& rng) {
  Region region;
  for (auto extent : shape) {
    std::uint64_t a = rng() % extent, b = rng() % (extent + 1);
    if (a == b) b = a + 1;
    region.push_back({std::min(a, b), std::max(a, b)});
  }
  return region;
}

// The array written from random data (a third of the data zero-filled in blocks for the
// missing-chunk case, whose fill chunks are not stored).
Array make_array(const test::TempDir& dir, const Case& c) {
  auto shape = c.doc["shape"].get<std::vector<std::uint64_t>>();
  std::uint64_t n = 2;
  for (auto e : shape) n *= e;
  auto data = random_bytes(n, 3);
  if (c.skip_fill) {
    for (std::size_t i = 0; i < data.size() / 2; i += 2) {  // fill value 7, little-endian uint16
      data[i] = std::byte{7};
      data[i + 1] = std::byte{0};
    }
  }
  write_array(dir / "a", c.doc, data, WriteOptions{c.skip_fill});
  return Array::open(dir / "a");
}

TEST(ReadMany, EqualsOneReadPerRegion) {
  for (const auto& c : cases()) {
    SCOPED_TRACE(c.name);
    test::TempDir dir;
    Array array = make_array(dir, c);
    std::mt19937 rng(11);
    std::vector<Region> regions;
    for (int i = 0; i < 30; ++i) regions.push_back(random_region(array.metadata().shape, rng));
    regions.push_back(regions.front());      // a repeat
    regions.push_back(full_region(array.metadata().shape));
    for (unsigned threads : {1u, 5u}) {
      Settings settings;
      settings.threads = threads;
      auto many = array.read_many(regions, Device::cpu, settings);
      ASSERT_EQ(many.size(), regions.size());
      for (std::size_t i = 0; i < regions.size(); ++i) {
        NDArray one = array.read(regions[i], Device::cpu, settings);
        ASSERT_EQ(many[i].shape(), one.shape()) << i;
        ASSERT_EQ(bytes_of(many[i]), bytes_of(one)) << "region " << i << " " << to_string(regions[i]);
      }
    }
  }
}

TEST(ReadMany, ResultsShareOneAllocationAndOutliveEachOther) {
  test::TempDir dir;
  Array array = make_array(dir, cases()[1]);
  std::vector<Region> regions{{{0, 3}, {0, 5}}, {{4, 20}, {1, 2}}, {{19, 20}, {16, 17}}};
  auto expected = bytes_of(array.read(regions[2]));
  NDArray last;
  {
    auto many = array.read_many(regions);
    for (const auto& result : many) EXPECT_EQ(reinterpret_cast<std::uintptr_t>(result.data()) % 256, 0u);
    last = many[2];
  }
  EXPECT_EQ(bytes_of(last), expected);  // the others are gone; this part keeps the memory alive
  EXPECT_THROW(Buffer::part(last.buffer(), 1, last.nbytes()), Error);
}

TEST(ReadMany, DecodesEachChunkOnce) {
  for (const auto& c : cases()) {
    SCOPED_TRACE(c.name);
    test::TempDir dir;
    Array array = make_array(dir, c);
    std::mt19937 rng(5);
    std::vector<Region> regions;
    for (int i = 0; i < 25; ++i) regions.push_back(random_region(array.metadata().shape, rng));
    regions.push_back(regions[3]);
    auto many = array.read_many(regions);
    const ReadStats& stats = many.front().stats();
    // Distinct stored chunks: what one read of each region decodes, counted without repeats.
    // A region's own read counts them too; their union is at least the largest.
    std::size_t largest = 0, sum = 0;
    for (const auto& region : regions) {
      NDArray one = array.read(region);
      largest = std::max(largest, one.stats().chunks_total - one.stats().chunks_missing);
      sum += one.stats().chunks_total - one.stats().chunks_missing;
    }
    EXPECT_EQ(stats.chunks_decoded, stats.chunks_total - stats.chunks_missing);
    EXPECT_GE(stats.chunks_decoded, largest);
    EXPECT_LT(stats.chunks_decoded, sum);  // overlapping regions share chunks
    EXPECT_EQ(stats.cache_hits, 0u);
  }
}

TEST(ReadMany, DistinctChunkCountIsExact) {
  // 2x2 chunks of 8x8; four regions each inside one chunk, two in the same chunk, one straddling.
  test::TempDir dir;
  Case c{"small", v3({16, 16}, {8, 8}, kZstd)};
  Array array = make_array(dir, c);
  std::vector<Region> regions{{{0, 2}, {0, 2}}, {{3, 5}, {1, 4}}, {{9, 10}, {9, 16}}, {{6, 10}, {0, 1}}};
  auto many = array.read_many(regions);
  EXPECT_EQ(many[0].stats().chunks_decoded, 3u);  // chunks (0,0), (1,1), (1,0)
  EXPECT_EQ(many[0].stats().chunks_total, 3u);
}

TEST(ReadMany, BatchStacksEqualShapes) {
  test::TempDir dir;
  Array array = make_array(dir, cases()[0]);
  std::vector<Region> regions{{{0, 4}, {1, 6}, {2, 5}}, {{30, 34}, {20, 25}, {15, 18}}, {{0, 4}, {1, 6}, {2, 5}}};
  NDArray batch = array.read_batch(regions);
  ASSERT_EQ(batch.shape(), (std::vector<std::uint64_t>{3, 4, 5, 3}));
  auto all = bytes_of(batch);
  const std::size_t each = all.size() / 3;
  for (std::size_t i = 0; i < regions.size(); ++i) {
    auto one = bytes_of(array.read(regions[i]));
    EXPECT_EQ(std::vector<std::byte>(all.begin() + static_cast<std::ptrdiff_t>(i * each),
                                     all.begin() + static_cast<std::ptrdiff_t>((i + 1) * each)),
              one);
  }
  regions.push_back({{0, 1}, {0, 1}, {0, 1}});
  EXPECT_THROW(array.read_batch(regions), Error);
}

TEST(ReadMany, IntoStridedDestinationsAndEdges) {
  test::TempDir dir;
  Array array = make_array(dir, cases()[2]);  // v2, 33 x 21
  // A column-major destination for one region, an empty region, a region at the far corner.
  Region a{{5, 17}, {3, 20}}, empty{{4, 4}, {0, 21}}, corner{{32, 33}, {20, 21}};
  std::vector<std::uint16_t> column_major(12 * 17), none, last(1);
  std::vector<Destination> destinations{{column_major.data(), {2, 24}, Device::cpu, nullptr},
                                        {none.data(), {}, Device::cpu, nullptr},
                                        {last.data(), {}, Device::cpu, nullptr}};
  array.read_many_into({a, empty, corner}, destinations);
  auto expected = array.read(a);
  const auto* e = static_cast<const std::uint16_t*>(expected.data());
  for (std::size_t i = 0; i < 12; ++i)
    for (std::size_t j = 0; j < 17; ++j) ASSERT_EQ(column_major[j * 12 + i], e[i * 17 + j]);
  EXPECT_EQ(last[0], *static_cast<const std::uint16_t*>(array.read(corner).data()));
}

TEST(ReadMany, RefusesBadInputNamingTheRegion) {
  test::TempDir dir;
  Array array = make_array(dir, cases()[1]);
  try {
    array.read_many({{{0, 1}, {0, 1}}, {{0, 21}, {0, 1}}});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("region 1"), std::string::npos) << e.what();
  }
  std::uint16_t one = 0;
  EXPECT_THROW(array.read_many_into({{{0, 1}, {0, 1}}}, {}), Error);
  EXPECT_THROW(array.read_many_into({{{0, 1}, {0, 1}}}, {{nullptr, {}, Device::cpu, nullptr}}), Error);
  EXPECT_NO_THROW(array.read_many_into({{{0, 1}, {0, 1}}}, {{&one, {}, Device::cpu, nullptr}}));
  EXPECT_TRUE(array.read_many({}).empty());
}

TEST(ReadMany, CorruptChunkNamesIt) {
  test::TempDir dir;
  Array array = make_array(dir, cases()[0]);
  test::write_text(dir / "a" / "c" / "1" / "0" / "0", "not zstd");
  try {
    array.read_many({{{0, 2}, {0, 2}, {0, 2}}, {{9, 10}, {0, 2}, {0, 2}}});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("c/1/0/0"), std::string::npos) << e.what();
  }
}

TEST(ReadMany, CancelledThroughProgress) {
  test::TempDir dir;
  Array array = make_array(dir, cases()[0]);
  Settings settings;
  settings.threads = 1;
  settings.progress = [](std::size_t done, std::size_t) { return done < 2; };
  try {
    array.read_many({full_region(array.metadata().shape)}, Device::cpu, settings);
    FAIL() << "not cancelled";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::cancelled);
  }
}

TEST(ReadMany, ManyThreadsOneHandle) {
  test::TempDir dir;
  Array array = make_array(dir, cases()[3]);
  const NDArray whole = array.read();
  std::atomic<int> mismatches{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 6; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937 rng(static_cast<std::uint32_t>(100 + t));
      for (int round = 0; round < 5; ++round) {
        std::vector<Region> regions;
        for (int i = 0; i < 6; ++i) regions.push_back(random_region(array.metadata().shape, rng));
        auto many = array.read_many(regions);
        for (std::size_t i = 0; i < regions.size(); ++i)
          if (bytes_of(many[i]) != bytes_of(array.read(regions[i]))) ++mismatches;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(mismatches.load(), 0);
}

}  // namespace
}  // namespace zarrdirect

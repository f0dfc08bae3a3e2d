// The decoded-chunk cache: hits, misses, LRU eviction, invalidation by the handle's own writes
// and by files changed behind its back, and use under concurrent reads and writes.
#include "engine/chunk_cache.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <random>
#include <thread>

#include "test_support.hpp"
#include "zarrdirect/array.hpp"

namespace zarrdirect {
namespace {

using nlohmann::json;

json v3_doc(std::vector<std::uint64_t> shape, std::vector<std::uint64_t> chunks, bool sharded = false) {
  json zstd = json::array({{{"name", "bytes"}, {"configuration", {{"endian", "little"}}}},
                           {{"name", "zstd"}, {"configuration", {{"level", 1}, {"checksum", false}}}}});
  json codecs = zstd;
  std::vector<std::uint64_t> grid = chunks;
  if (sharded) {
    for (auto& g : grid) g *= 2;
    codecs = json::array({{{"name", "sharding_indexed"},
                           {"configuration",
                            {{"chunk_shape", chunks},
                             {"codecs", zstd},
                             {"index_codecs", json::array({{{"name", "bytes"}, {"configuration", {{"endian", "little"}}}}})}}}}});
  }
  return {{"zarr_format", 3},
          {"node_type", "array"},
          {"shape", shape},
          {"data_type", "uint16"},
          {"chunk_grid", {{"name", "regular"}, {"configuration", {{"chunk_shape", grid}}}}},
          {"chunk_key_encoding", {{"name", "default"}}},
          {"fill_value", 0},
          {"codecs", codecs}};
}

std::vector<std::uint16_t> values(std::size_t n, std::uint16_t start) {
  std::vector<std::uint16_t> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<std::uint16_t>(start + i);
  return v;
}

void write_all(const Array& array, const std::vector<std::uint16_t>& data) {
  array.write({}, Source{data.data(), {}, Device::cpu, nullptr, {}, {}});
}

std::vector<std::uint16_t> read_all(const Array& array, const Region& region = {}) {
  NDArray result = array.read(region);
  const auto* p = static_cast<const std::uint16_t*>(result.data());
  return {p, p + result.nbytes() / 2};
}

TEST(ChunkCache, LruEvictionByBytes) {
  ChunkCache cache;
  FileSignature sig{1, 2, 3, 4};
  cache.insert("a", 0, sig, std::make_shared<DecodedChunk>(100));  // off: ignored
  EXPECT_EQ(cache.stats().entries, 0u);
  cache.set_capacity(250);
  cache.insert("a", 0, sig, std::make_shared<DecodedChunk>(100));
  cache.insert("b", 0, sig, std::make_shared<DecodedChunk>(100));
  EXPECT_TRUE(cache.find("a", 0, sig));  // a is now the most recent
  cache.insert("c", 0, sig, std::make_shared<DecodedChunk>(100));
  EXPECT_TRUE(cache.find("a", 0, sig));
  EXPECT_FALSE(cache.find("b", 0, sig));  // the least recently used went
  EXPECT_TRUE(cache.find("c", 0, sig));
  cache.insert("big", 0, sig, std::make_shared<DecodedChunk>(300));  // larger than the whole cache
  EXPECT_FALSE(cache.find("big", 0, sig));
  CacheStats stats = cache.stats();
  EXPECT_EQ(stats.entries, 2u);
  EXPECT_EQ(stats.bytes, 200u);
  EXPECT_EQ(stats.evictions, 1u);
  EXPECT_EQ(stats.hits, 3u);
  EXPECT_EQ(stats.misses, 2u);
  FileSignature changed = sig;
  changed.mtime_ns += 1;
  EXPECT_FALSE(cache.find("a", 0, changed));
  EXPECT_EQ(cache.stats().invalidations, 1u);
  cache.insert("s", 0, sig, std::make_shared<DecodedChunk>(10));
  cache.insert("s", 5, sig, std::make_shared<DecodedChunk>(10));
  cache.invalidate("s");
  EXPECT_FALSE(cache.find("s", 5, sig));
  cache.set_capacity(0);
  EXPECT_EQ(cache.stats().bytes, 0u);
}

TEST(ChunkCache, ReadsHitAfterTheFirst) {
  for (bool sharded : {false, true}) {
    SCOPED_TRACE(sharded ? "sharded" : "unsharded");
    test::TempDir dir;
    Array array = Array::create(dir / "a", v3_doc({32, 32}, {8, 8}, sharded));
    write_all(array, values(32 * 32, 1));
    array.set_cache_bytes(1 << 20);
    Region region{{2, 20}, {3, 11}};  // 3 x 2 chunks
    auto first = read_all(array, region);
    NDArray again = array.read(region);
    EXPECT_EQ(again.stats().cache_hits, 6u);
    EXPECT_EQ(again.stats().chunks_decoded, 0u);
    const auto* p = static_cast<const std::uint16_t*>(again.data());
    EXPECT_EQ(std::vector<std::uint16_t>(p, p + first.size()), first);
    CacheStats stats = array.cache_stats();
    EXPECT_EQ(stats.entries, 6u);
    EXPECT_EQ(stats.hits, 6u);
    EXPECT_EQ(stats.misses, 6u);
    // read_many through the same handle shares it.
    auto many = array.read_many({region, {{24, 32}, {24, 32}}});
    EXPECT_EQ(many[0].stats().cache_hits, 6u);
    EXPECT_EQ(many[0].stats().chunks_decoded, 1u);
  }
}

TEST(ChunkCache, SmallCapacityEvictsAndStaysCorrect) {
  test::TempDir dir;
  Array array = Array::create(dir / "a", v3_doc({64, 64}, {8, 8}));
  auto data = values(64 * 64, 3);
  write_all(array, data);
  array.set_cache_bytes(4 * 8 * 8 * 2);  // four chunks
  for (int round = 0; round < 3; ++round) EXPECT_EQ(read_all(array), data);
  CacheStats stats = array.cache_stats();
  EXPECT_LE(stats.bytes, 4u * 128u);
  EXPECT_GT(stats.evictions, 0u);
}

TEST(ChunkCache, InvalidatedByWritesThroughTheHandle) {
  for (bool sharded : {false, true}) {
    SCOPED_TRACE(sharded ? "sharded" : "unsharded");
    test::TempDir dir;
    Array array = Array::create(dir / "a", v3_doc({16, 16}, {4, 4}, sharded));
    write_all(array, values(256, 0));
    array.set_cache_bytes(1 << 20);
    EXPECT_EQ(read_all(array), values(256, 0));
    // A partial write of one chunk, then the whole array.
    std::vector<std::uint16_t> patch(4, 999);
    array.write({{1, 2}, {4, 8}}, Source{patch.data(), {}, Device::cpu, nullptr, {}, {}});
    auto expected = values(256, 0);
    for (int j = 4; j < 8; ++j) expected[16 + static_cast<std::size_t>(j)] = 999;
    EXPECT_EQ(read_all(array), expected);
    write_all(array, values(256, 50));
    EXPECT_EQ(read_all(array), values(256, 50));
    EXPECT_GT(array.cache_stats().invalidations, 0u);
  }
}

TEST(ChunkCache, InvalidatedByAnExternalChange) {
  test::TempDir dir;
  Array writer = Array::create(dir / "a", v3_doc({16, 16}, {8, 8}));
  write_all(writer, values(256, 0));
  Array reader = Array::open(dir / "a");  // another handle: its cache does not see the writes
  reader.set_cache_bytes(1 << 20);
  EXPECT_EQ(read_all(reader), values(256, 0));
  write_all(writer, values(256, 7));
  EXPECT_EQ(read_all(reader), values(256, 7));
  EXPECT_EQ(reader.cache_stats().invalidations, 4u);
  // Rewritten in place (same inode, same size): the modification time tells.
  const auto chunk = dir / "a" / "c" / "0" / "0";
  Array other = Array::create(dir / "b", v3_doc({16, 16}, {8, 8}));
  write_all(other, values(256, 9));
  std::ifstream in(dir / "b" / "c" / "0" / "0", std::ios::binary);
  std::string replacement((std::istreambuf_iterator<char>(in)), {});
  std::string before = [&] { std::ifstream f(chunk, std::ios::binary); return std::string((std::istreambuf_iterator<char>(f)), {}); }();
  ASSERT_EQ(replacement.size(), before.size());  // same-size zstd frames of 64 values
  struct stat old_stat {};
  ASSERT_EQ(::stat(chunk.c_str(), &old_stat), 0);
  int fd = ::open(chunk.c_str(), O_WRONLY);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::pwrite(fd, replacement.data(), replacement.size(), 0), static_cast<ssize_t>(replacement.size()));
  ::close(fd);
  struct timespec times[2] = {old_stat.st_atim, old_stat.st_mtim};
  times[1].tv_nsec = (times[1].tv_nsec + 1) % 1000000000;  // a different time, whatever the clock's tick
  ASSERT_EQ(::utimensat(AT_FDCWD, chunk.c_str(), times, 0), 0);
  auto now = read_all(reader, {{0, 8}, {0, 8}});
  EXPECT_EQ(now.front(), 9u);
}

TEST(ChunkCache, EnabledBySettingsAndEnvironment) {
  test::TempDir dir;
  Array array = Array::create(dir / "a", v3_doc({16, 16}, {8, 8}));
  write_all(array, values(256, 0));
  Settings settings;
  settings.cache_bytes = 1 << 20;
  array.read({}, Device::cpu, settings);
  EXPECT_EQ(array.cache_stats().capacity_bytes, std::size_t{1} << 20);
  EXPECT_EQ(array.read().stats().cache_hits, 4u);  // on for the handle from now on
  ::setenv("ZARRDIRECT_CACHE_MB", "3", 1);
  EXPECT_EQ(Settings::from_environment().cache_bytes, std::size_t{3} << 20);
  ::setenv("ZARRDIRECT_CACHE_MB", "x", 1);
  EXPECT_THROW(Settings::from_environment(), Error);
  ::unsetenv("ZARRDIRECT_CACHE_MB");
}

TEST(ChunkCache, ConcurrentReadsAndWrites) {
  test::TempDir dir;
  Array array = Array::create(dir / "a", v3_doc({32, 32}, {8, 8}, true));
  write_all(array, std::vector<std::uint16_t>(32 * 32, 0));
  array.set_cache_bytes(6 * 8 * 8 * 2);  // smaller than the array: evictions under contention
  // Each writer owns a band of 16 rows and writes it whole with the value `generation` (1..20).
  std::atomic<bool> stop{false};
  std::atomic<int> bad{0};
  std::vector<std::thread> threads;
  for (int band = 0; band < 2; ++band) {
    threads.emplace_back([&, band] {
      for (std::uint16_t generation = 1; generation <= 20; ++generation) {
        std::vector<std::uint16_t> rows(16 * 32, static_cast<std::uint16_t>(generation));
        array.write({{static_cast<std::uint64_t>(band * 16), static_cast<std::uint64_t>(band * 16 + 16)}, {0, 32}},
                    Source{rows.data(), {}, Device::cpu, nullptr, {}, {}});
      }
    });
  }
  for (int r = 0; r < 3; ++r) {
    threads.emplace_back([&, r] {
      std::mt19937 rng(static_cast<std::uint32_t>(r));
      while (!stop) {
        std::vector<Region> regions;
        for (int i = 0; i < 4; ++i) {
          std::uint64_t a = rng() % 32, b = rng() % 32;
          regions.push_back({{std::min(a, b), std::max(a, b) + 1}, {0, 32}});
        }
        // Inner chunks (8 x 8) are written whole: each 8-wide run of a row holds one generation.
        std::vector<NDArray> results;
        try {
          results = array.read_many(regions);
        } catch (const Error& e) {
          ADD_FAILURE() << e.what();
          ++bad;
          return;
        }
        for (const auto& result : results) {
          const auto* p = static_cast<const std::uint16_t*>(result.data());
          for (std::size_t i = 0; i < result.nbytes() / 2; ++i)
            if (p[i] > 20 || p[i] != p[i - i % 8]) ++bad;
        }
      }
    });
  }
  threads[0].join();
  threads[1].join();
  stop = true;
  for (std::size_t t = 2; t < threads.size(); ++t) threads[t].join();
  EXPECT_EQ(bad.load(), 0);
  // After the writers are done every read sees the last generation, cached or not.
  auto last = read_all(array);
  for (auto v : last) ASSERT_EQ(v, 20u);
  last = read_all(array);
  for (auto v : last) ASSERT_EQ(v, 20u);
}

}  // namespace
}  // namespace zarrdirect

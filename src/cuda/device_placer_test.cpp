// read_many into device memory through the upload-once placer (device_placer.hpp).
//
// Without a GPU: the batch reader's device path run through the host placer (placer_reference.hpp:
// the same BatchTable, applied by the kernel's host reference) must give exactly what per-region
// host reads give, for overlapping patches, patches cut by the array's edge, missing chunks and
// inner chunks, sharded arrays and strided destinations, while staging only the part of each
// chunk the patches need and each chunk once; and the device cache's policy (hits, misses,
// evictions, invalidation by a changed file and by writes through the handle) must hold.
// With a GPU (skipped without one): Array::read_many_into into CUDA memory against the same
// host reads, the host-gather path (Settings::device_batch = false) too, read_many_into_async on
// a caller's stream, and the device cache.
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <set>

#include "cuda/batch_test_arrays.hpp"
#include "cuda/placer_reference.hpp"
#include "cuda/read_many_test_support.hpp"
#include "engine/array_state.hpp"
#include "engine/read_many.hpp"
#include "metadata/metadata_file.hpp"
#include "test_support.hpp"
#include "zarrdirect/system.hpp"

namespace zarrdirect {
namespace {

using namespace test::many;

// A host placer with room for about three chunks per batch.
std::size_t small_batch(const Array::Impl& impl) { return 3 * ((chunk_bytes_of(impl) + 4095) / 4096 * 4096) + 65536; }

TEST(DevicePlacerReference, ReadManyThroughTheTableMatchesPerRegionReads) {
  test::TempDir dir;
  for (const auto& c : test::batch_cases(dir.path())) {
    auto impl = Array::Impl::create(c.path, read_array_metadata(c.path));
    const std::size_t element = c.array.metadata().dtype.size;
    const auto regions = patches(c.array.metadata().shape);
    for (std::size_t kind = 0; kind < 3; ++kind) {
      SCOPED_TRACE(c.name + " destination kind " + std::to_string(kind));
      const auto expected = expected_reads(c.array, regions, kind);
      Buffers got = host_buffers(regions, element, kind);
      test::HostPlacer placer(got.layouts, small_batch(*impl));
      Settings settings;
      settings.threads = 3;
      const ReadStats stats = run_read_many(*impl, regions, got.layouts, settings, &placer);
      for (std::size_t i = 0; i < regions.size(); ++i) EXPECT_TRUE(got.bytes[i] == expected[i]) << "region " << i;
      EXPECT_EQ(stats.io_path, "staged");
      EXPECT_GT(placer.batches, 1u);
      // Each chunk decoded at most once and staged at most once per region that reads it (once
      // when its span goes up whole, once per box when the boxes are packed), missing ones never.
      std::size_t pairs = 0;  // (chunk, region) pairs: the most boxes there are
      const auto cell_shape = impl->sharding ? impl->sharding->inner_chunk_shape() : c.array.metadata().chunk_shape;
      for (const Region& region : regions) {
        std::size_t cells = 1;
        for (std::size_t d = 0; d < region.size(); ++d) {
          const std::uint64_t cell = cell_shape[d];
          cells *= (region[d].stop - 1) / cell - region[d].start / cell + 1;
        }
        pairs += cells;
      }
      EXPECT_LE(stats.chunks_decoded, stats.chunks_total - stats.chunks_missing);
      EXPECT_LE(placer.stages, pairs);
      EXPECT_LE(placer.staged_bytes, (stats.chunks_total - stats.chunks_missing) * chunk_bytes_of(*impl));
      if (c.name.find("missing") != std::string::npos) {
        EXPECT_GT(stats.chunks_missing, 0u);
        EXPECT_GT(placer.fills, 0u);
      }
    }
  }
}

TEST(DevicePlacerReference, OnlyThePartOfAChunkThePatchesNeedIsStaged) {
  test::TempDir dir;
  const auto cases = test::batch_cases(dir.path());
  const auto& c = cases.front();  // raw32: 32^3 uint16 chunks, uncompressed
  ASSERT_EQ(c.name, "raw32");
  auto impl = Array::Impl::create(c.path, read_array_metadata(c.path));
  // One patch inside one chunk: rows 3..6 of dim 0 of chunk (0, 0, 0).
  const std::vector<Region> regions = {{{3, 7}, {2, 10}, {5, 9}}};
  const auto expected = expected_reads(c.array, regions, 0);
  Buffers got = host_buffers(regions, 2, 0);
  test::HostPlacer placer(got.layouts, small_batch(*impl));
  run_read_many(*impl, regions, got.layouts, Settings{}, &placer);
  EXPECT_TRUE(got.bytes[0] == expected[0]);
  EXPECT_EQ(placer.stages, 1u);
  // Its span, from element (3, 2, 5) to (6, 9, 8) in C order, is 25 times its own 256 bytes: the
  // box is packed on the host and only its bytes go up.
  EXPECT_EQ(placer.staged_bytes, 4u * 8u * 4u * 2u);

  // Whole rows of dims 1 and 2: the span is the box, staged as it lies in the chunk.
  const std::vector<Region> rows = {{{3, 7}, {0, 32}, {0, 32}}};
  const auto expected_rows = expected_reads(c.array, rows, 0);
  Buffers got_rows = host_buffers(rows, 2, 0);
  test::HostPlacer row_placer(got_rows.layouts, small_batch(*impl));
  run_read_many(*impl, rows, got_rows.layouts, Settings{}, &row_placer);
  EXPECT_TRUE(got_rows.bytes[0] == expected_rows[0]);
  EXPECT_EQ(row_placer.stages, 1u);
  EXPECT_EQ(row_placer.staged_bytes, 4u * 32u * 32u * 2u);
}

// The device cache's policy through the host placer (its entries are host copies marked device 0).
TEST(DevicePlacerReference, DeviceCacheHitsMissesEvictsAndInvalidates) {
  test::TempDir dir;
  for (const auto& c : test::batch_cases(dir.path())) {
    if (c.name != "raw32_missing" && c.name != "sharded_missing") continue;
    SCOPED_TRACE(c.name);
    auto impl = Array::Impl::create(c.path, read_array_metadata(c.path));
    impl->device_cache->set_capacity(std::size_t{64} << 20);
    const std::size_t element = c.array.metadata().dtype.size;
    auto regions = patches(c.array.metadata().shape);
    regions.pop_back();  // not the whole array: some chunks stay out of the cache
    auto read = [&](std::size_t& resident, std::size_t& stages) {
      Buffers got = host_buffers(regions, element, 0);
      test::HostPlacer placer(got.layouts, small_batch(*impl));
      const ReadStats stats = run_read_many(*impl, regions, got.layouts, Settings{}, &placer);
      const auto expected = expected_reads(c.array, regions, 0);
      for (std::size_t i = 0; i < regions.size(); ++i) EXPECT_TRUE(got.bytes[i] == expected[i]) << "region " << i;
      resident = placer.resident_places;
      stages = placer.stages;
      return stats;
    };
    std::size_t resident = 0;
    std::size_t stages = 0;
    const ReadStats cold = read(resident, stages);
    const std::size_t present = cold.chunks_total - cold.chunks_missing;
    EXPECT_EQ(cold.cache_hits, 0u);
    EXPECT_EQ(resident, 0u);
    EXPECT_EQ(impl->device_cache->stats().entries, present);  // whole chunks, inserted at finish
    EXPECT_EQ(impl->device_cache->stats().bytes, present * chunk_bytes_of(*impl));

    const ReadStats warm = read(resident, stages);
    EXPECT_EQ(warm.cache_hits, present);
    EXPECT_EQ(resident, present);
    EXPECT_EQ(stages, 0u);  // nothing uploaded
    EXPECT_EQ(warm.chunks_decoded, 0u);

    // Room for two chunks: evictions, and still the right bytes.
    impl->device_cache->set_capacity(2 * chunk_bytes_of(*impl));
    EXPECT_LE(impl->device_cache->stats().entries, 2u);
    read(resident, stages);
    EXPECT_GT(impl->device_cache->stats().evictions, 0u);
    EXPECT_LE(impl->device_cache->stats().entries, 2u);

    // A stored chunk rewritten behind the handle's back (another handle): its entry is stale.
    impl->device_cache->set_capacity(std::size_t{64} << 20);
    read(resident, stages);
    const std::uint64_t before = impl->device_cache->stats().invalidations;
    Array other = Array::open(c.path);
    const Region first = regions[3];  // 17^3 across stored chunks (regions[1] lies in the missing one)
    std::vector<std::uint16_t> values(17 * 17 * 17, 4242);
    Source source;
    source.data = values.data();
    other.write(first, source);
    const ReadStats after = read(resident, stages);  // expected_reads sees the new values too
    EXPECT_GT(impl->device_cache->stats().invalidations, before);
    EXPECT_LT(after.cache_hits, present);

    // A write through the handle drops the chunks it touches (CacheInvalidation).
    const std::size_t entries = impl->device_cache->stats().entries;
    { CacheInvalidation drop(*impl, first); }
    EXPECT_LT(impl->device_cache->stats().entries, entries);
  }
}

// ---- On the GPU --------------------------------------------------------------------------------

TEST(DevicePlacer, ReadManyIntoTheGpuMatchesPerRegionReads) {
  REQUIRE_GPU();
  test::TempDir dir;
  for (const auto& c : test::batch_cases(dir.path())) {
    const auto regions = patches(c.array.metadata().shape);
    for (std::size_t kind = 0; kind < 3; ++kind) {
      const auto expected = expected_reads(c.array, regions, kind);
      for (int variant = 0; variant < 3; ++variant) {
        SCOPED_TRACE(c.name + " destination kind " + std::to_string(kind) + " variant " + std::to_string(variant));
        Settings settings;
        settings.threads = 4;
        if (variant == 1) settings.staging_bytes = 1;      // batches of about one chunk: many launches
        if (variant == 2) settings.device_batch = false;   // the host-gather path
        if (variant == 2 && kind != 0) continue;           // it takes contiguous and strided alike; C is enough
        const auto got = gpu_read_many(c.array, regions, kind, settings, nullptr);
        for (std::size_t i = 0; i < regions.size(); ++i) EXPECT_TRUE(got[i] == expected[i]) << "region " << i;
      }
    }
  }
}

TEST(DevicePlacer, ReadManyIntoAsyncOnTheCallersStream) {
  REQUIRE_GPU();
  test::TempDir dir;
  cudaStream_t stream = nullptr;
  check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  for (const auto& c : test::batch_cases(dir.path())) {
    const auto regions = patches(c.array.metadata().shape);
    for (std::size_t kind = 0; kind < 3; ++kind) {
      SCOPED_TRACE(c.name + " destination kind " + std::to_string(kind));
      const auto expected = expected_reads(c.array, regions, kind);
      Settings settings;
      settings.threads = 4;
      ReadStats stats;
      const auto got = gpu_read_many(c.array, regions, kind, settings, &stats, true, stream);
      for (std::size_t i = 0; i < regions.size(); ++i) EXPECT_TRUE(got[i] == expected[i]) << "region " << i;
      EXPECT_GT(stats.bytes_out, 0u);
    }
  }
  check(cudaStreamDestroy(stream), "cudaStreamDestroy");
}

TEST(DevicePlacer, DeviceCacheServesRepeatedPatchesFromGpuMemory) {
  REQUIRE_GPU();
  test::TempDir dir;
  for (const auto& c : test::batch_cases(dir.path())) {
    if (c.name != "raw32_missing" && c.name != "sharded_missing" && c.name != "f64_big") continue;
    SCOPED_TRACE(c.name);
    Array array = Array::open(c.path);
    array.set_device_cache_bytes(std::size_t{256} << 20);
    auto regions = patches(array.metadata().shape);
    regions.pop_back();
    const auto expected = expected_reads(c.array, regions, 0);
    ReadStats cold;
    auto got = gpu_read_many(array, regions, 0, Settings{}, &cold);
    for (std::size_t i = 0; i < regions.size(); ++i) EXPECT_TRUE(got[i] == expected[i]) << "cold region " << i;
    const std::size_t present = cold.chunks_total - cold.chunks_missing;
    EXPECT_EQ(array.device_cache_stats().entries, present);
    ReadStats warm;
    got = gpu_read_many(array, regions, 2, Settings{}, &warm);  // padded destinations from the cache
    const auto expected_padded = expected_reads(c.array, regions, 2);
    for (std::size_t i = 0; i < regions.size(); ++i) EXPECT_TRUE(got[i] == expected_padded[i]) << "warm region " << i;
    EXPECT_EQ(warm.cache_hits, present);
    EXPECT_EQ(warm.chunks_decoded, 0u);
    // Nothing but shard indexes is read: a missing inner chunk is known only from its index.
    if (c.name.find("sharded") == std::string::npos) EXPECT_EQ(warm.bytes_read, 0u);
    else EXPECT_LE(warm.bytes_read, 16u * 64u + 4u) << "more than one shard index";
    // A single-region read into CUDA memory uses the device cache too: every present chunk of
    // each region is a hit (some regions lie in missing chunks only).
    std::size_t single_hits = 0;
    for (std::size_t i = 0; i < regions.size(); ++i) {
      NDArray one = array.read(regions[i], Device::cuda);
      const ReadStats& s = one.stats();
      EXPECT_EQ(s.cache_hits, s.chunks_total - s.chunks_missing) << "region " << i;
      EXPECT_EQ(s.chunks_decoded, 0u) << "region " << i;
      single_hits += s.cache_hits;
    }
    EXPECT_GT(single_hits, 0u);

    // Eviction down to two chunks, then a write through the handle: the new values come back.
    const std::size_t chunk = array.device_cache_stats().bytes / present;
    array.set_device_cache_bytes(2 * chunk);
    EXPECT_LE(array.device_cache_stats().entries, 2u);
    got = gpu_read_many(array, regions, 0, Settings{}, nullptr);
    for (std::size_t i = 0; i < regions.size(); ++i) EXPECT_TRUE(got[i] == expected[i]) << "evicting region " << i;
    EXPECT_GT(array.device_cache_stats().evictions, 0u);
    if (array.metadata().dtype.size == 2) {
      array.set_device_cache_bytes(std::size_t{256} << 20);
      gpu_read_many(array, regions, 0, Settings{}, nullptr);
      std::vector<std::uint16_t> values(20 * 20 * 20, 4242);
      Source source;
      source.data = values.data();
      array.write(regions[1], source);
      const auto rewritten = expected_reads(c.array, regions, 0);
      got = gpu_read_many(array, regions, 0, Settings{}, nullptr);
      for (std::size_t i = 0; i < regions.size(); ++i) EXPECT_TRUE(got[i] == rewritten[i]) << "rewritten region " << i;
    }
    array.set_device_cache_bytes(0);
    EXPECT_EQ(array.device_cache_stats().entries, 0u);
  }
}

}  // namespace
}  // namespace zarrdirect

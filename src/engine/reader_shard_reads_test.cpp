// How the reader fetches the inner chunks of shards from a local file, counted at the file-I/O
// layer: uncompressed neighbours are read with a few large preads (not one per chunk or per
// handful of chunks), and placed straight from those bytes without the sink's staging; the
// result is the same as what was written, also for compressed inner chunks and regions that cut
// shards.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <random>

#include <nlohmann/json.hpp>

#include "engine/array_state.hpp"
#include "engine/host_sink.hpp"
#include "engine/reader.hpp"
#include "store/file_io.hpp"
#include "test_support.hpp"
#include "zarrdirect/array.hpp"

namespace zarrdirect {
namespace {

using nlohmann::json;

// The system calls, with the preads and their bytes counted.
class CountingFileIo final : public FileIo {
 public:
  int open_beneath(int dir_fd, const char* path, int flags) override {
    return system_file_io().open_beneath(dir_fd, path, flags);
  }
  ssize_t pread(int fd, void* buffer, std::size_t count, off_t offset) override {
    ++preads;
    return system_file_io().pread(fd, buffer, count, offset);
  }
  int fstat(int fd, struct stat* info) override { return system_file_io().fstat(fd, info); }
  int close(int fd) override { return system_file_io().close(fd); }
  std::atomic<std::uint64_t> preads{0};
};

// A host sink that counts the staging it hands out.
class CountingSink final : public ChunkSink {
 public:
  CountingSink(const DestinationLayout& layout, std::span<const std::byte> fill) : host_(layout, fill) {}
  std::string_view name() const override { return host_.name(); }
  void start(unsigned workers, std::size_t max_chunk_bytes) override { host_.start(workers, max_chunk_bytes); }
  std::span<std::byte> staging(unsigned worker, std::size_t nbytes) override {
    ++stagings;
    return host_.staging(worker, nbytes);
  }
  void place(unsigned worker, std::span<const std::byte> chunk, const ChunkBox& box) override {
    ++placed;
    host_.place(worker, chunk, box);
  }
  bool places_from_any_memory() const override { return host_.places_from_any_memory(); }
  void fill(unsigned worker, const ChunkBox& box) override { host_.fill(worker, box); }
  void finish() override { host_.finish(); }
  std::atomic<std::uint64_t> stagings{0};
  std::atomic<std::uint64_t> placed{0};

 private:
  HostSink host_;
};

json bytes_codec();

json sharded_doc(const json& inner_codecs) {
  return {{"zarr_format", 3},
          {"node_type", "array"},
          {"shape", {128, 128, 64}},
          {"data_type", "uint16"},
          {"chunk_grid", {{"name", "regular"}, {"configuration", {{"chunk_shape", {64, 64, 64}}}}}},
          {"chunk_key_encoding", {{"name", "default"}}},
          {"fill_value", 0},
          {"codecs", json::array({{{"name", "sharding_indexed"},
                                   {"configuration",
                                    {{"chunk_shape", {8, 8, 8}},
                                     {"codecs", inner_codecs},
                                     {"index_codecs", json::array({bytes_codec()})}}}}})}};
}

json bytes_codec() { return {{"name", "bytes"}, {"configuration", {{"endian", "little"}}}}; }
json raw_codecs() { return json::array({bytes_codec()}); }
json zstd_codecs() { return json::array({bytes_codec(), {{"name", "zstd"}, {"configuration", {{"level", 1}}}}}); }

struct Written {
  std::vector<std::uint16_t> data;
  std::filesystem::path path;
};

Written write(const std::filesystem::path& path, const json& codecs) {
  Array array = Array::create(path, sharded_doc(codecs));
  Written out{std::vector<std::uint16_t>(128 * 128 * 64), path};
  std::mt19937 rng(7);
  for (auto& v : out.data) v = static_cast<std::uint16_t>(rng() % 1000 + 1);
  Source source;
  source.data = out.data.data();
  array.write({}, source);
  return out;
}

struct Counted {
  std::vector<std::uint16_t> result;
  std::uint64_t preads = 0;
  std::uint64_t stagings = 0;
  std::uint64_t placed = 0;
  ReadStats stats;
};

Counted read_counted(const std::filesystem::path& path, const Region& region) {
  CountingFileIo io;
  auto store = std::make_unique<FileStore>(path, io);
  auto metadata = read_array_metadata(path);
  auto impl = Array::Impl::create(path, std::move(store), std::move(metadata));
  Counted out;
  std::vector<std::uint64_t> shape;
  std::uint64_t count = 1;
  for (const auto& r : region) {
    shape.push_back(r.size());
    count *= r.size();
  }
  out.result.assign(count, 0);
  const auto layout = DestinationLayout::contiguous(reinterpret_cast<std::byte*>(out.result.data()), shape, 2);
  CountingSink sink(layout, impl->metadata.fill_value);
  Settings settings;
  settings.threads = 4;
  io.preads = 0;
  out.stats = run_read(*impl, region, sink, settings);
  out.preads = io.preads;
  out.stagings = sink.stagings;
  out.placed = sink.placed;
  return out;
}

std::vector<std::uint16_t> expected_slice(const std::vector<std::uint16_t>& data, const Region& region) {
  std::vector<std::uint16_t> out;
  for (std::uint64_t i = region[0].start; i < region[0].stop; ++i)
    for (std::uint64_t j = region[1].start; j < region[1].stop; ++j)
      for (std::uint64_t k = region[2].start; k < region[2].stop; ++k) out.push_back(data[(i * 128 + j) * 64 + k]);
  return out;
}

TEST(ReaderShardReads, RawInnerChunksComeInFewLargeReadsWithoutStaging) {
  test::TempDir dir;
  const Written written = write(dir / "raw", raw_codecs());
  const std::vector<std::uint64_t> shape{128, 128, 64};
  const Region whole = full_region(shape);
  const Counted got = read_counted(written.path, whole);
  EXPECT_EQ(got.result, written.data);
  // 4 shards of 512 inner chunks (1 KiB each, stored in order): one pread for each shard's index
  // entries, and the 2048 inner chunks in tasks of 2048 / (4 workers * 4) = 128 neighbours, one
  // pread each (a task that spans two shards: two). Eight per task before (one every 8 chunks).
  EXPECT_EQ(got.stats.chunks_total, 2048u);
  EXPECT_LE(got.preads, 4u + 16u + 4u) << "preads for 2048 inner chunks";
  EXPECT_EQ(got.stagings, 0u) << "raw inner chunks are placed from the bytes read, not copied to staging";
  EXPECT_EQ(got.placed, 2048u);
}

TEST(ReaderShardReads, RegionsCuttingShardsReadTheSameValues) {
  test::TempDir dir;
  const Written written = write(dir / "raw", raw_codecs());
  const Region cut{{5, 123}, {60, 70}, {3, 64}};
  const Counted got = read_counted(written.path, cut);
  EXPECT_EQ(got.result, expected_slice(written.data, cut));
  EXPECT_EQ(got.stagings, 0u);
}

TEST(ReaderShardReads, CompressedInnerChunksAreDecodedIntoStaging) {
  test::TempDir dir;
  const Written written = write(dir / "zstd", zstd_codecs());
  const std::vector<std::uint64_t> shape{128, 128, 64};
  const Region whole = full_region(shape);
  const Counted got = read_counted(written.path, whole);
  EXPECT_EQ(got.result, written.data);
  EXPECT_EQ(got.stagings, 2048u);  // each decoded into the sink's staging, then placed
  EXPECT_EQ(got.placed, 2048u);
}

}  // namespace
}  // namespace zarrdirect

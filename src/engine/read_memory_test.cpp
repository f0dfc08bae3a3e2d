// Memory of a read (issue 11, item 3): bounded by the region, the chunks in flight and
// Settings::memory_limit_bytes; running out is an Error naming the chunk, never std::bad_alloc.
#include <gtest/gtest.h>

#include <fstream>
#include <new>
#include <random>
#include <string>
#include <vector>

#include "engine/array_state.hpp"
#include "engine/array_writer.hpp"
#include "engine/chunk_sink.hpp"
#include "engine/host_sink.hpp"
#include "engine/reader.hpp"
#include "test_support.hpp"
#include "zarrdirect/array.hpp"

namespace zarrdirect {
namespace {

using nlohmann::json;

const json kBytes = {{"name", "bytes"}, {"configuration", {{"endian", "little"}}}};

json v3_doc(std::vector<std::uint64_t> shape, std::vector<std::uint64_t> chunks, const char* dtype, json codecs) {
  return {{"zarr_format", 3},
          {"node_type", "array"},
          {"shape", shape},
          {"data_type", dtype},
          {"chunk_grid", {{"name", "regular"}, {"configuration", {{"chunk_shape", chunks}}}}},
          {"chunk_key_encoding", {{"name", "default"}}},
          {"fill_value", 0},
          {"codecs", codecs}};
}

json sharding(std::vector<std::uint64_t> inner, bool checksum) {
  json index = checksum ? json::array({kBytes, {{"name", "crc32c"}}}) : json::array({kBytes});
  return {{"name", "sharding_indexed"},
          {"configuration", {{"chunk_shape", inner}, {"codecs", json::array({kBytes})}, {"index_codecs", index}}}};
}

std::vector<std::byte> random_bytes(std::size_t n, std::uint32_t seed) {
  std::vector<std::byte> data(n);
  std::mt19937 rng(seed);
  for (auto& b : data) b = static_cast<std::byte>(rng() % 7);  // compressible
  return data;
}

std::string error_of(const std::function<void()>& read) {
  try {
    read();
  } catch (const Error& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "not a zarrdirect::Error: " << e.what();
    return {};
  }
  ADD_FAILURE() << "no error";
  return {};
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(ReadMemory, AChunkLargerThanTheLimitIsAnErrorNamingIt) {
  test::TempDir dir;
  json gzip = {{"name", "gzip"}, {"configuration", {{"level", 1}}}};
  write_array(dir / "a", v3_doc({8192}, {4096}, "uint8", json::array({kBytes, gzip})), random_bytes(8192, 1));
  Array array = Array::open(dir / "a");
  Settings settings;
  settings.memory_limit_bytes = 4096;  // the decoded chunk alone, no room for its stored bytes
  std::string message = error_of([&] { array.read({{4096, 4097}}, Device::cpu, settings); });
  EXPECT_TRUE(contains(message, "c/1")) << message;
  EXPECT_TRUE(contains(message, "memory")) << message;
  EXPECT_TRUE(contains(message, "ZARRDIRECT_MEMORY_LIMIT_MB")) << message;
  settings.memory_limit_bytes = 64 << 10;
  EXPECT_EQ(array.read({{4096, 4097}}, Device::cpu, settings).shape(), std::vector<std::uint64_t>{1});
}

TEST(ReadMemory, FewerThreadsWhenChunksAreLarge) {
  test::TempDir dir;
  json gzip = {{"name", "gzip"}, {"configuration", {{"level", 1}}}};
  auto data = random_bytes(16 * 65536, 2);
  write_array(dir / "a", v3_doc({16 * 65536}, {65536}, "uint8", json::array({kBytes, gzip})), data);
  Array array = Array::open(dir / "a");
  Settings settings;
  settings.threads = 8;
  // Each worker holds a decoded chunk and its stored bytes: 128 KiB; 300 KiB allows two.
  settings.memory_limit_bytes = 300 << 10;
  NDArray result = array.read({}, Device::cpu, settings);
  EXPECT_EQ(result.stats().threads, 2u);
  EXPECT_EQ(std::memcmp(result.data(), data.data(), data.size()), 0);
}

// A shard of 2^24 one-byte inner chunks whose index (256 MiB) is a sparse file apart from the
// entry of element 5, which points at one stored byte.
std::filesystem::path huge_shard_array(const test::TempDir& dir, bool checksum) {
  constexpr std::uint64_t kInner = std::uint64_t{1} << 24;
  auto path = dir / "huge";
  std::filesystem::create_directories(path / "c");
  test::write_text(path / "zarr.json", v3_doc({kInner}, {kInner}, "uint8", json::array({sharding({1}, checksum)})).dump());
  std::ofstream shard(path / "c" / "0", std::ios::binary);
  shard.put(static_cast<char>(42));  // inner chunk 5's byte at offset 0; the index follows
  const std::uint64_t entry5[2] = {0, 1};
  shard.seekp(static_cast<std::streamoff>(1 + 16 * 5));
  shard.write(reinterpret_cast<const char*>(entry5), 16);
  shard.seekp(static_cast<std::streamoff>(1 + 16 * kInner + (checksum ? 4 : 0) - 1));
  shard.put(0);
  return path;
}

TEST(ReadMemory, ShardIndexWithoutChecksumIsReadEntryByEntry) {
  test::TempDir dir;
  Array array = Array::open(huge_shard_array(dir, false));
  Settings settings;
  settings.memory_limit_bytes = 1 << 20;  // far less than the 256 MiB index
  NDArray one = array.read({{5, 6}}, Device::cpu, settings);
  EXPECT_EQ(*static_cast<const std::uint8_t*>(one.data()), 42);
  EXPECT_LE(one.stats().bytes_read, 16u + 1u);  // one entry and one inner chunk
}

TEST(ReadMemory, ShardIndexWithChecksumLargerThanTheLimitIsAnErrorNamingTheShard) {
  test::TempDir dir;
  Array array = Array::open(huge_shard_array(dir, true));
  Settings settings;
  settings.memory_limit_bytes = 1 << 20;
  std::string message = error_of([&] { array.read({{5, 6}}, Device::cpu, settings); });
  EXPECT_TRUE(contains(message, "c/0")) << message;
  EXPECT_TRUE(contains(message, "268435460 bytes")) << message;  // the index's size
  EXPECT_TRUE(contains(message, "memory")) << message;
}

// Sharded reads plan in waves: a region needing more inner chunks than a wave holds, with a
// shard split between waves, reads back equal, with and without an index checksum.
TEST(ReadMemory, ShardedReadsAcrossPlanningWaves) {
  for (bool checksum : {true, false}) {
    SCOPED_TRACE(checksum);
    test::TempDir dir;
    const std::vector<std::uint64_t> shape{300, 1000};
    auto data = random_bytes(300 * 1000, 3);
    write_array(dir / "a", v3_doc(shape, {300, 600}, "uint8", json::array({sharding({1, 2}, checksum)})), data);
    Array array = Array::open(dir / "a");
    Region region{{1, 299}, {3, 997}};
    Settings settings;
    settings.threads = 3;
    NDArray result = array.read(region, Device::cpu, settings);
    const auto* out = static_cast<const std::byte*>(result.data());
    std::size_t mismatches = 0;
    for (std::uint64_t r = 1; r < 299; ++r)
      for (std::uint64_t c = 3; c < 997; ++c) mismatches += out[(r - 1) * 994 + (c - 3)] != data[r * 1000 + c];
    EXPECT_EQ(mismatches, 0u);
    EXPECT_EQ(result.stats().chunks_total, 298u * 498u);  // inner columns 1..498
  }
}

// A sink whose staging allocation fails, as a real one may when memory runs out.
class StarvedSink final : public ChunkSink {
 public:
  std::string_view name() const override { return "starved"; }
  void start(unsigned, std::size_t) override {}
  std::span<std::byte> staging(unsigned, std::size_t) override { throw std::bad_alloc(); }
  void place(unsigned, std::span<const std::byte>, const ChunkBox&) override {}
  void fill(unsigned, const ChunkBox&) override {}
  void finish() override {}
};

TEST(ReadMemory, FailedAllocationsAreErrorsNamingTheChunk) {
  test::TempDir dir;
  json gzip = {{"name", "gzip"}, {"configuration", {{"level", 1}}}};
  write_array(dir / "plain", v3_doc({64}, {16}, "uint8", json::array({kBytes, gzip})), random_bytes(64, 4));
  write_array(dir / "sharded", v3_doc({64}, {32}, "uint8", json::array({sharding({8}, true)})), random_bytes(64, 5));
  for (const char* name : {"plain", "sharded"}) {
    SCOPED_TRACE(name);
    auto impl = Array::Impl::create(dir / name, read_array_metadata(dir / name));
    StarvedSink sink;
    Settings settings;
    settings.threads = 2;
    std::string message = error_of([&] { run_read(*impl, Region{{40, 41}}, sink, settings); });
    EXPECT_TRUE(contains(message, "out of memory")) << message;
    EXPECT_TRUE(contains(message, std::string(name) == "plain" ? "chunk c/2" : "shard c/1")) << message;
  }
}

}  // namespace
}  // namespace zarrdirect

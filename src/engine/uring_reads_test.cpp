// The reader with io_uring: which reads take it, and that they give what the thread pool gives
// (whole arrays, regions cutting chunks, missing chunks, a damaged chunk's error); and the
// fallback to threads when io_uring is refused, forced here as a container refuses it.
#include "engine/uring_reads.hpp"

#include <gtest/gtest.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <optional>
#include <random>

#include "test_support.hpp"
#include "zarrdirect/array.hpp"
#include "zarrdirect/system.hpp"

namespace zarrdirect {
namespace {

namespace fs = std::filesystem;

TEST(UringReads, PlanKeepsThreadsUnlessAskedAndApplicable) {
  EXPECT_EQ(plan_uring_reads(IoEngine::threads, true, 65536, 4096, 16, 1u << 30).files_per_task, 0u);
  EXPECT_EQ(plan_uring_reads(IoEngine::threads, true, 65536, 4096, 16, 1u << 30).engine, "threads");
  EXPECT_EQ(plan_uring_reads(IoEngine::uring, false, 65536, 4096, 16, 1u << 30).files_per_task, 0u);
  const UringPlan automatic = plan_uring_reads(IoEngine::automatic, true, 65536, 4096, 16, 1u << 30);
  EXPECT_EQ(automatic.files_per_task > 0, kAutoUsesUring && uring_support().usable);
}

TEST(UringReads, PlanSizesTasksByFilesBytesAndMemory) {
  if (!uring_support().usable) GTEST_SKIP() << uring_support().reason;
  // 8 KiB chunks: 64 files (512 KiB) per task when there are plenty; 64 KiB ones: 8.
  EXPECT_EQ(plan_uring_reads(IoEngine::uring, true, 8192, 1u << 20, 16, 1u << 30).files_per_task, 64u);
  EXPECT_EQ(plan_uring_reads(IoEngine::uring, true, 65536, 1u << 20, 16, 1u << 30).files_per_task, 8u);
  // A worker share of 128 KiB: 2; chunks larger than a task: 1.
  EXPECT_EQ(plan_uring_reads(IoEngine::uring, true, 65536, 1u << 20, 16, 128u << 10).files_per_task, 2u);
  EXPECT_EQ(plan_uring_reads(IoEngine::uring, true, 4u << 20, 1u << 20, 16, 1u << 30).files_per_task, 1u);
  // Few chunks: spread over the workers, at least one per task.
  EXPECT_EQ(plan_uring_reads(IoEngine::uring, true, 65536, 128, 16, 1u << 30).files_per_task, 2u);
  EXPECT_EQ(plan_uring_reads(IoEngine::uring, true, 65536, 3, 16, 1u << 30).files_per_task, 1u);
  EXPECT_EQ(plan_uring_reads(IoEngine::uring, true, 65536, 3, 16, 1u << 30).engine, "io_uring");
}

// A 3-d uint16 array of raw 8^3 chunks, some of them missing.
struct Written {
  test::TempDir dir;
  std::optional<Array> array;
  std::vector<std::uint16_t> data;
};

std::unique_ptr<Written> write_array(const std::string& codec_name = "") {
  auto out = std::make_unique<Written>();
  nlohmann::json codecs = nlohmann::json::array({{{"name", "bytes"}, {"configuration", {{"endian", "little"}}}}});
  if (!codec_name.empty()) codecs.push_back({{"name", codec_name}, {"configuration", {{"level", 1}}}});
  out->array = Array::create(out->dir / "a", {{"zarr_format", 3},
                                              {"node_type", "array"},
                                              {"shape", {40, 36, 33}},
                                              {"data_type", "uint16"},
                                              {"chunk_grid", {{"name", "regular"}, {"configuration", {{"chunk_shape", {8, 8, 8}}}}}},
                                              {"chunk_key_encoding", {{"name", "default"}}},
                                              {"fill_value", 7},
                                              {"codecs", codecs}});
  out->data.resize(40 * 36 * 33);
  std::mt19937 rng(3);
  for (auto& v : out->data) v = static_cast<std::uint16_t>(rng() % 5000 + 10);
  Source source;
  source.data = out->data.data();
  out->array->write({}, source);
  fs::remove(out->dir / "a" / "c" / "1" / "2" / "3");
  fs::remove_all(out->dir / "a" / "c" / "4");
  return out;
}

std::vector<std::uint16_t> read(const Array& array, const Region& region, IoEngine engine, ReadStats* stats = nullptr) {
  Settings settings;
  settings.threads = 3;
  settings.io_engine = engine;
  NDArray result = array.read(region, Device::cpu, settings);
  if (stats) *stats = result.stats();
  const auto* p = static_cast<const std::uint16_t*>(result.data());
  return std::vector<std::uint16_t>(p, p + result.nbytes() / 2);
}

TEST(UringReads, UringReadsWhatThreadsRead) {
  if (!uring_support().usable) GTEST_SKIP() << uring_support().reason;
  auto written = write_array();
  const std::vector<std::uint64_t> shape{40, 36, 33};
  for (const Region& region : {full_region(shape), Region{{3, 39}, {0, 36}, {5, 6}}, Region{{8, 16}, {8, 16}, {8, 16}}}) {
    ReadStats threads_stats, uring_stats;
    const auto threads = read(*written->array, region, IoEngine::threads, &threads_stats);
    const auto uring = read(*written->array, region, IoEngine::uring, &uring_stats);
    EXPECT_EQ(uring, threads);
    EXPECT_EQ(threads_stats.io_engine, "threads");
    EXPECT_EQ(uring_stats.io_engine, "io_uring");
    EXPECT_EQ(uring_stats.chunks_total, threads_stats.chunks_total);
    EXPECT_EQ(uring_stats.chunks_missing, threads_stats.chunks_missing);
    EXPECT_EQ(uring_stats.bytes_read, threads_stats.bytes_read);
  }
  // The missing chunks are there, filled.
  ReadStats stats;
  const auto whole = read(*written->array, {}, IoEngine::uring, &stats);
  EXPECT_GT(stats.chunks_missing, 20u);
  EXPECT_EQ(whole[0], written->data[0]);
}

TEST(UringReads, CompressedChunksKeepTheThreads) {
  auto written = write_array("zstd");
  ReadStats stats;
  const auto got = read(*written->array, {}, IoEngine::uring, &stats);
  EXPECT_EQ(got, read(*written->array, {}, IoEngine::threads));
  EXPECT_EQ(stats.io_engine.rfind("threads", 0), 0u) << stats.io_engine;
}

TEST(UringReads, ADamagedChunkFailsAsWithThreads) {
  if (!uring_support().usable) GTEST_SKIP() << uring_support().reason;
  auto written = write_array();
  std::ofstream(written->dir / "a" / "c" / "2" / "2" / "2", std::ios::binary | std::ios::app) << "extra";
  std::string threads_message, uring_message;
  try {
    read(*written->array, {}, IoEngine::threads);
  } catch (const Error& e) {
    threads_message = e.what();
  }
  try {
    read(*written->array, {}, IoEngine::uring);
  } catch (const Error& e) {
    uring_message = e.what();
    EXPECT_EQ(e.kind(), ErrorKind::corrupt_data);
  }
  EXPECT_FALSE(uring_message.empty());
  EXPECT_EQ(uring_message, threads_message);
}

// io_uring refused (as io_uring_queue_init fails with EPERM under a container's seccomp
// profile): a read asking for it runs on threads, says so, and reads the same values.
TEST(UringReads, ARefusedRingFallsBackToThreadsSilently) {
  auto written = write_array();
  const auto threads = read(*written->array, {}, IoEngine::threads);
  refuse_uring_for_testing(EPERM);
  ReadStats stats;
  std::vector<std::uint16_t> got;
  EXPECT_NO_THROW(got = read(*written->array, {}, IoEngine::uring, &stats));
  ReadStats automatic;
  read(*written->array, {}, IoEngine::automatic, &automatic);
  const nlohmann::json system = describe_system();
  refuse_uring_for_testing(0);
  EXPECT_EQ(got, threads);
  EXPECT_EQ(stats.io_engine.rfind("threads (io_uring unavailable: ", 0), 0u) << stats.io_engine;
  EXPECT_EQ(automatic.io_engine, "threads");
  EXPECT_EQ(system["io_uring"].get<std::string>().rfind("unusable: ", 0), 0u) << system.dump();
}

}  // namespace
}  // namespace zarrdirect

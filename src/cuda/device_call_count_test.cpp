// ReadStats::cuda_calls measured on real device reads: batched placement of many small chunks
// makes far fewer CUDA calls than there are chunks; placing chunk by chunk
// (ZARRDIRECT_DEVICE_BATCH=0) makes about three per chunk (copy, scatter launch, event), plus a
// wait for a staging slot once the ring is full. Skips without a usable GPU.
#include <gtest/gtest.h>

#include <cstdlib>
#include <vector>

#include "cuda/batch_test_arrays.hpp"
#include "test_support.hpp"
#include "zarrdirect/array.hpp"
#include "zarrdirect/system.hpp"

namespace zarrdirect {
namespace {

#define REQUIRE_GPU() \
  if (!cuda_available()) GTEST_SKIP() << describe_system()["io_path_reason"].get<std::string>()

// 4096 uncompressed 8^3 uint16 chunks (1 KiB each): the case batching exists for.
Array small_chunks(const std::filesystem::path& path) {
  return test::write_batch_array<std::uint16_t>(
      path, test::batch_doc({128, 128, 128}, {8, 8, 8}, "uint16", 0, nlohmann::json::array({test::batch_bytes_codec()})),
      0, 0);
}

Settings device_settings(bool batch) {
  Settings settings;
  settings.threads = 4;
  settings.device_batch = batch;
  return settings;
}

TEST(DeviceCallCount, BatchedReadOfSmallChunksMakesFarFewerCallsThanChunks) {
  REQUIRE_GPU();
  test::TempDir dir;
  const Array array = small_chunks(dir / "a");
  const ReadStats stats = array.read({}, Device::cuda, device_settings(true)).stats();
  ASSERT_EQ(stats.chunks_total, 4096u);
  const CudaCallStats& calls = stats.cuda_calls;
  EXPECT_GT(calls.copies, 0u);  // at least one batch went up
  EXPECT_EQ(calls.copies, calls.kernel_launches) << "one upload and one launch per batch";
  EXPECT_LT(calls.total(), stats.chunks_total / 10) << "copies " << calls.copies << ", launches "
                                                     << calls.kernel_launches << ", records " << calls.event_records
                                                     << ", syncs " << calls.synchronizations;
}

TEST(DeviceCallCount, ChunkByChunkMakesAboutThreeCallsPerChunk) {
  REQUIRE_GPU();
  test::TempDir dir;
  const Array array = small_chunks(dir / "a");
  const ReadStats stats = array.read({}, Device::cuda, device_settings(false)).stats();
  const std::uint64_t chunks = stats.chunks_total;
  ASSERT_EQ(chunks, 4096u);
  const CudaCallStats& calls = stats.cuda_calls;
  // An 8^3 box is not contiguous in a 128^3 result: each chunk is uploaded to scratch and
  // scattered, and its slot's event recorded (one more record orders the read after the caller).
  EXPECT_EQ(calls.copies, chunks);
  EXPECT_EQ(calls.kernel_launches, chunks);
  EXPECT_EQ(calls.event_records, chunks + 1);
  EXPECT_EQ(calls.memsets, 0u);
  EXPECT_GE(calls.total(), 3 * chunks);
  EXPECT_LE(calls.total(), 4 * chunks + 64);  // a slot wait per chunk at most, and per-read calls
}

// The same through the environment, as the benchmark sets it.
TEST(DeviceCallCount, EnvironmentTurnsBatchingOff) {
  REQUIRE_GPU();
  test::TempDir dir;
  const Array array = small_chunks(dir / "a");
  ::setenv("ZARRDIRECT_DEVICE_BATCH", "0", 1);
  Settings settings = Settings::from_environment();
  ::unsetenv("ZARRDIRECT_DEVICE_BATCH");
  settings.threads = 4;
  const ReadStats stats = array.read({}, Device::cuda, settings).stats();
  EXPECT_GE(stats.cuda_calls.total(), 3 * stats.chunks_total);
}

// Host reads make no CUDA calls.
TEST(DeviceCallCount, HostReadsCountNone) {
  test::TempDir dir;
  const Array array = small_chunks(dir / "a");
  const ReadStats stats = array.read({}, Device::cpu, device_settings(true)).stats();
  EXPECT_EQ(stats.cuda_calls.total(), 0u);
  EXPECT_EQ(stats.chunks_total, 4096u);
}

}  // namespace
}  // namespace zarrdirect

// WorkerScratchLease: a thread's buffers survive from one lease to the next (same memory, no new
// allocation), nested leases get their own, and buffers over the cap are released.
#include "engine/worker_scratch.hpp"

#include <gtest/gtest.h>

#include <optional>
#include <random>
#include <thread>

#include "engine/array_writer.hpp"
#include "test_support.hpp"
#include "zarrdirect/array.hpp"

namespace zarrdirect {
namespace {

// Restores the process-wide cap when a test ends.
class CapGuard {
 public:
  CapGuard() : saved_(worker_scratch_cap()) {}
  ~CapGuard() { set_worker_scratch_cap(saved_); }

 private:
  std::size_t saved_;
};

TEST(WorkerScratch, BuffersSurviveFromLeaseToLease) {
  CapGuard guard;
  set_worker_scratch_cap(std::size_t{8} << 20);
  std::thread([] {
    const std::byte* stored = nullptr;
    const std::byte* codec_a = nullptr;
    {
      WorkerScratchLease lease;
      lease.get().stored.resize(1 << 20);
      lease.get().codec.a.resize(1 << 19);
      stored = lease.get().stored.data();
      codec_a = lease.get().codec.a.data();
    }
    EXPECT_GE(worker_scratch_kept_bytes(), std::size_t{(1 << 20) + (1 << 19)});
    WorkerScratchLease again;
    EXPECT_EQ(worker_scratch_kept_bytes(), 0u);  // lent out
    EXPECT_EQ(again.get().stored.data(), stored);
    EXPECT_EQ(again.get().codec.a.data(), codec_a);
    again.get().stored.resize(1000);  // smaller: the same memory, capacity kept
    EXPECT_EQ(again.get().stored.data(), stored);
  }).join();
}

TEST(WorkerScratch, EachThreadKeepsItsOwn) {
  CapGuard guard;
  set_worker_scratch_cap(std::size_t{8} << 20);
  std::thread([] {
    { WorkerScratchLease lease; lease.get().stored.resize(4096); }
    std::size_t other_thread_keeps = 1;
    std::thread([&] { other_thread_keeps = worker_scratch_kept_bytes(); }).join();
    EXPECT_EQ(other_thread_keeps, 0u);
    EXPECT_GE(worker_scratch_kept_bytes(), 4096u);
  }).join();
}

TEST(WorkerScratch, OverTheCapIsReleased) {
  CapGuard guard;
  set_worker_scratch_cap(std::size_t{1} << 20);
  std::thread([] {
    {
      WorkerScratchLease lease;
      lease.get().stored.resize((1 << 20) + 1);
    }
    EXPECT_EQ(worker_scratch_kept_bytes(), 0u);
    {
      WorkerScratchLease lease;
      lease.get().stored.resize(1 << 19);
    }
    EXPECT_GE(worker_scratch_kept_bytes(), std::size_t{1} << 19);
    set_worker_scratch_cap(0);
    { WorkerScratchLease lease; }
    EXPECT_EQ(worker_scratch_kept_bytes(), 0u);
  }).join();
}

TEST(WorkerScratch, NestedLeasesGetTheirOwnAndTheThreadKeepsTheLarger) {
  CapGuard guard;
  set_worker_scratch_cap(std::size_t{8} << 20);
  std::thread([] {
    { WorkerScratchLease warm; warm.get().stored.resize(8192); }
    std::optional<WorkerScratchLease> outer;
    outer.emplace();
    const std::byte* outer_memory = outer->get().stored.data();
    {
      WorkerScratchLease inner;
      EXPECT_EQ(inner.get().capacity(), 0u);  // the thread's own is lent to the outer lease
      EXPECT_NE(&inner.get(), &outer->get());
      inner.get().stored.resize(100);
    }
    EXPECT_GE(worker_scratch_kept_bytes(), 100u);  // the inner one went back first
    EXPECT_LT(worker_scratch_kept_bytes(), 8192u);
    outer.reset();                                 // the outer, larger, replaces it
    EXPECT_GE(worker_scratch_kept_bytes(), 8192u);
    WorkerScratchLease again;
    EXPECT_EQ(again.get().stored.data(), outer_memory);
  }).join();
}

TEST(WorkerScratch, AnExitedThreadsSetGoesToTheNextThread) {
  CapGuard guard;
  set_worker_scratch_cap(std::size_t{8} << 20);
  const std::byte* left = nullptr;
  std::thread([&] {
    WorkerScratchLease lease;
    lease.get().stored.resize(std::size_t{3} << 20);
    left = lease.get().stored.data();
  }).join();
  const std::byte* taken = nullptr;
  std::thread([&] {
    WorkerScratchLease lease;  // the thread's first lease: the set the last thread left
    taken = lease.get().stored.data();
    EXPECT_GE(lease.get().stored.capacity(), std::size_t{3} << 20);
  }).join();
  EXPECT_EQ(taken, left);
}

// The readers lend their workers' buffers from the threads: after a read of a compressed array
// (one worker: the calling thread), the thread keeps a buffer that held a chunk's stored bytes,
// and the next read decodes with that same memory.
TEST(WorkerScratch, ReadsKeepTheirBuffersForTheNextRead) {
  CapGuard guard;
  set_worker_scratch_cap(std::size_t{64} << 20);
  test::TempDir dir;
  const nlohmann::json doc = {
      {"zarr_format", 3}, {"node_type", "array"}, {"shape", {64, 64}}, {"data_type", "uint16"},
      {"chunk_grid", {{"name", "regular"}, {"configuration", {{"chunk_shape", {32, 32}}}}}},
      {"chunk_key_encoding", {{"name", "default"}}}, {"fill_value", 0},
      {"codecs", {{{"name", "bytes"}, {"configuration", {{"endian", "little"}}}},
                  {{"name", "zstd"}, {"configuration", {{"level", 1}, {"checksum", false}}}}}}};
  std::vector<std::byte> data(64 * 64 * 2);
  std::mt19937 rng(4);
  for (auto& b : data) b = static_cast<std::byte>(rng() % 7);  // compressible, not trivially
  write_array(dir / "a", doc, data);
  Array array = Array::open(dir / "a");
  Settings settings;
  settings.threads = 1;
  std::thread([&] {
    EXPECT_EQ(worker_scratch_kept_bytes(), 0u);
    NDArray first = array.read({}, Device::cpu, settings);
    ASSERT_EQ(std::memcmp(first.data(), data.data(), data.size()), 0);
    EXPECT_GT(worker_scratch_kept_bytes(), 0u);  // the stored bytes' buffer, kept
    const std::byte* kept_memory = nullptr;
    {
      WorkerScratchLease peek;
      kept_memory = peek.get().stored.data();
    }
    NDArray second = array.read({}, Device::cpu, settings);
    ASSERT_EQ(std::memcmp(second.data(), data.data(), data.size()), 0);
    WorkerScratchLease peek;
    EXPECT_EQ(peek.get().stored.data(), kept_memory);
    // read_many (point reads use it) lends them the same way.
    std::vector<Region> regions{{{0, 40}, {3, 64}}};
    auto many = array.read_many(regions, Device::cpu, settings);
    EXPECT_EQ(many.size(), 1u);
  }).join();
}

}  // namespace
}  // namespace zarrdirect

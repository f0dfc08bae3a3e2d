// The pool of pinned staging slots and streams. Without a device only the failures are tested
// (they must be clean Error(cuda)s that leave the pool as it was); with one, the reuse and
// eviction rules. The pool is process-wide and device reads leave slots in it, so each GPU test
// starts with trim().
#include "cuda/device_pool.hpp"

#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "cuda/cuda_check.hpp"
#include "cuda/cuda_runtime_state.hpp"
#include "engine/array_writer.hpp"
#include "test_support.hpp"
#include "zarrdirect/array.hpp"
#include "zarrdirect/error.hpp"
#include "zarrdirect/system.hpp"

namespace zarrdirect::cuda {
namespace {

#define REQUIRE_GPU() \
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: " << cuda_unavailable_reason()

// ZARRDIRECT_STREAM_PRIORITY's values: unset, empty and "normal" keep the default priority,
// "high" asks for the greatest, anything else is refused naming the variable and the value.
TEST(DevicePoolStreams, PriorityFromText) {
  EXPECT_FALSE(stream_priority_from_text(nullptr));
  EXPECT_FALSE(stream_priority_from_text(""));
  EXPECT_FALSE(stream_priority_from_text("normal"));
  EXPECT_TRUE(stream_priority_from_text("high"));
  for (const char* bad : {"HIGH", "1", "highest", " high"}) {
    try {
      (void)stream_priority_from_text(bad);
      ADD_FAILURE() << "accepted " << bad;
    } catch (const Error& error) {
      EXPECT_EQ(error.kind(), ErrorKind::invalid_argument);
      EXPECT_NE(std::string(error.what()).find("ZARRDIRECT_STREAM_PRIORITY"), std::string::npos) << error.what();
      EXPECT_NE(std::string(error.what()).find(bad), std::string::npos) << error.what();
    }
  }
}

// Runs `action`, which must throw Error(cuda) naming `call`.
template <class Action>
void expect_cuda_error(const std::string& call, Action&& action) {
  try {
    action();
    ADD_FAILURE() << "no error; expected one from " << call;
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::cuda) << e.what();
    EXPECT_TRUE(std::string(e.what()).starts_with(call + ": ")) << e.what();
  }
}

int current_device() {
  int device = -1;
  check_cuda(cudaGetDevice(&device), "cudaGetDevice");
  return device;
}

std::set<std::byte*> hosts_of(const std::vector<SlotPtr>& slots) {
  std::set<std::byte*> hosts;
  for (const auto& slot : slots) hosts.insert(slot->host);
  return hosts;
}

// --- Everywhere -------------------------------------------------------------------------------

TEST(DevicePool, UsingADeviceThatDoesNotExistFails) {
  // One past the last device (0 without a GPU) exists on no machine.
  expect_cuda_error("cudaSetDevice", [] { use_device(cuda_device_count()); });
  expect_cuda_error("cudaSetDevice", [] { use_device(-1); });
}

TEST(DevicePool, TrimLeavesNoIdleStaging) {
  DevicePool::instance().trim();
  EXPECT_EQ(DevicePool::instance().idle_pinned_bytes(), 0u);
  EXPECT_EQ(&DevicePool::instance(), &DevicePool::instance());
}

// --- Without a GPU ----------------------------------------------------------------------------

TEST(DevicePool, WithoutADeviceAcquiringFailsCleanly) {
  if (cuda_available()) GTEST_SKIP() << "a CUDA device is present";
  DevicePool& pool = DevicePool::instance();
  const std::size_t idle = pool.idle_pinned_bytes();
  expect_cuda_error("cudaHostAlloc (pinned staging)", [&] { (void)pool.acquire_slots(0, 1 << 16, 2, ~std::size_t{0}); });
  expect_cuda_error("cudaStreamCreateWithPriority", [&] { (void)pool.acquire_streams(0, 2); });
  EXPECT_EQ(pool.idle_pinned_bytes(), idle);
  // An unpinned slot allocates its host memory first, then fails on the event (and frees it).
  expect_cuda_error("cudaEventCreateWithFlags", [] { StagingSlot slot(0, 1 << 16, false); });
  // Releasing nothing works without a device.
  pool.release_slots({}, 0);
  pool.release_streams(0, {});
  EXPECT_EQ(pool.idle_pinned_bytes(), idle);
}

// --- With a GPU -------------------------------------------------------------------------------

TEST(DevicePool, PinnedSlotIsPageAlignedHostMemoryWithLazyDeviceScratch) {
  REQUIRE_GPU();
  use_device(0);
  const std::size_t capacity = 3 * 4096 + 100;
  StagingSlot slot(0, capacity, true);
  EXPECT_EQ(slot.device, 0);
  EXPECT_EQ(slot.capacity, capacity);
  EXPECT_TRUE(slot.pinned);
  ASSERT_NE(slot.host, nullptr);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(slot.host) % 4096, 0u);
  // The aligned start lies within the first page of the allocation.
  const auto* base = static_cast<std::byte*>(slot.pinned_allocation);
  EXPECT_GE(slot.host, base);
  EXPECT_LT(slot.host, base + 4096);
  std::memset(slot.host, 0x5a, capacity);  // every byte is usable
  cudaPointerAttributes host_attributes{};
  check_cuda(cudaPointerGetAttributes(&host_attributes, slot.host), "cudaPointerGetAttributes (host)");
  EXPECT_EQ(host_attributes.type, cudaMemoryTypeHost);
  EXPECT_NE(slot.done, nullptr);
  EXPECT_FALSE(slot.in_flight);

  EXPECT_EQ(slot.device_scratch, nullptr);  // not until asked for
  std::byte* scratch = slot.scratch();
  ASSERT_NE(scratch, nullptr);
  EXPECT_EQ(slot.scratch(), scratch);  // allocated once
  cudaPointerAttributes scratch_attributes{};
  check_cuda(cudaPointerGetAttributes(&scratch_attributes, scratch), "cudaPointerGetAttributes (scratch)");
  EXPECT_EQ(scratch_attributes.type, cudaMemoryTypeDevice);
  EXPECT_EQ(scratch_attributes.device, 0);
  // The whole capacity is there: copy the staging up and back down.
  std::vector<std::byte> back(capacity);
  check_cuda(cudaMemcpy(scratch, slot.host, capacity, cudaMemcpyHostToDevice), "cudaMemcpy up");
  check_cuda(cudaMemcpy(back.data(), scratch, capacity, cudaMemcpyDeviceToHost), "cudaMemcpy down");
  EXPECT_TRUE(std::all_of(back.begin(), back.end(), [](std::byte b) { return b == std::byte{0x5a}; }));
}

TEST(DevicePool, ReleasedSlotsAreReusedAndTheIdleBudgetIsKept) {
  REQUIRE_GPU();
  use_device(0);
  const int device = current_device();
  DevicePool& pool = DevicePool::instance();
  pool.trim();
  constexpr std::size_t kSize = std::size_t{64} << 10;

  auto slots = pool.acquire_slots(device, kSize, 2, ~std::size_t{0});
  ASSERT_EQ(slots.size(), 2u);
  for (const auto& slot : slots) {
    EXPECT_EQ(slot->device, device);
    EXPECT_GE(slot->capacity, kSize);
    EXPECT_TRUE(slot->pinned);
    EXPECT_FALSE(slot->in_flight);
  }
  EXPECT_NE(slots[0]->host, slots[1]->host);
  const auto first_hosts = hosts_of(slots);
  EXPECT_EQ(pool.idle_pinned_bytes(), 0u);  // taken slots are not idle

  // Given back under a large budget, both stay idle and come back on the next request.
  pool.release_slots(std::move(slots), ~std::size_t{0});
  EXPECT_EQ(pool.idle_pinned_bytes(), 2 * kSize);
  slots = pool.acquire_slots(device, kSize, 2, ~std::size_t{0});
  EXPECT_EQ(hosts_of(slots), first_hosts);
  EXPECT_EQ(pool.idle_pinned_bytes(), 0u);

  // Under a budget of one slot, one is freed.
  pool.release_slots(std::move(slots), kSize);
  EXPECT_EQ(pool.idle_pinned_bytes(), kSize);
  // A request for more than the idle one: it comes back and one new slot is made.
  slots = pool.acquire_slots(device, kSize, 2, ~std::size_t{0});
  ASSERT_EQ(slots.size(), 2u);
  EXPECT_EQ(pool.idle_pinned_bytes(), 0u);
  const auto hosts = hosts_of(slots);
  EXPECT_EQ(hosts.size(), 2u);
  EXPECT_TRUE(std::any_of(hosts.begin(), hosts.end(), [&](std::byte* h) { return first_hosts.contains(h); }));

  // Null entries are ignored; a budget of zero frees everything.
  slots.push_back(nullptr);
  pool.release_slots(std::move(slots), 0);
  EXPECT_EQ(pool.idle_pinned_bytes(), 0u);
}

TEST(DevicePool, SlotsAreReusedOnlyUpToTwiceTheSizeAskedFor) {
  REQUIRE_GPU();
  use_device(0);
  const int device = current_device();
  DevicePool& pool = DevicePool::instance();
  pool.trim();
  constexpr std::size_t kSize = 100000;

  auto slots = pool.acquire_slots(device, kSize, 1, ~std::size_t{0});
  std::byte* host = slots[0]->host;
  pool.release_slots(std::move(slots), ~std::size_t{0});
  // 60000 * 2 >= 100000: the idle slot serves.
  slots = pool.acquire_slots(device, 60000, 1, ~std::size_t{0});
  EXPECT_EQ(slots[0]->host, host);
  EXPECT_EQ(slots[0]->capacity, kSize);
  pool.release_slots(std::move(slots), ~std::size_t{0});
  // 40000 * 2 < 100000: too wasteful, so a new slot of the asked size. Under a budget with room
  // for both, the idle one of another size is kept...
  slots = pool.acquire_slots(device, 40000, 1, ~std::size_t{0});
  EXPECT_EQ(slots[0]->capacity, 40000u);
  EXPECT_EQ(pool.idle_pinned_bytes(), kSize);
  pool.release_slots(std::move(slots), ~std::size_t{0});
  EXPECT_EQ(pool.idle_pinned_bytes(), kSize + 40000u);
  // ... and under one without (the idle ones fill it), it is freed to make room.
  slots = pool.acquire_slots(device, 30000, 2, kSize + 40000);
  ASSERT_EQ(slots.size(), 2u);
  EXPECT_EQ(slots[0]->capacity, 40000u);  // reused: 30000 * 2 >= 40000
  EXPECT_EQ(slots[1]->capacity, 30000u);
  EXPECT_EQ(pool.idle_pinned_bytes(), 0u);
  pool.release_slots(std::move(slots), ~std::size_t{0});
  // Too small is never taken (40000 and 30000 are idle).
  slots = pool.acquire_slots(device, 40001, 1, ~std::size_t{0});
  EXPECT_EQ(slots[0]->capacity, 40001u);
  pool.release_slots(std::move(slots), 0);
  pool.trim();
  EXPECT_EQ(pool.idle_pinned_bytes(), 0u);
}

TEST(DevicePool, DeviceBlocksAreReusedWithinTwiceTheSizeAndTheIdleLimit) {
  REQUIRE_GPU();
  use_device(0);
  const int device = current_device();
  DevicePool& pool = DevicePool::instance();
  pool.trim();
  EXPECT_EQ(pool.stats().idle_device_bytes, 0u);
  const std::uint64_t allocations = pool.stats().device_allocations;

  DeviceBlockPtr block = pool.acquire_device_block(device, 1 << 20);
  ASSERT_NE(block->data, nullptr);
  check_cuda(cudaMemset(block->data, 7, block->capacity), "cudaMemset");  // the whole block is usable
  check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  std::byte* data = block->data;
  std::vector<DeviceBlockPtr> blocks;
  blocks.push_back(std::move(block));
  pool.release_device_blocks(std::move(blocks));
  EXPECT_EQ(pool.stats().idle_device_bytes, std::size_t{1} << 20);

  block = pool.acquire_device_block(device, 600000);  // fits, and not twice too large: reused
  EXPECT_EQ(block->data, data);
  EXPECT_EQ(pool.stats().idle_device_bytes, 0u);
  DeviceBlockPtr smaller = pool.acquire_device_block(device, 100000);  // a new one of its size
  EXPECT_EQ(smaller->capacity, 100000u);
  EXPECT_EQ(pool.stats().device_allocations, allocations + 2);
  blocks.push_back(std::move(block));
  blocks.push_back(std::move(smaller));
  pool.release_device_blocks(std::move(blocks));
  EXPECT_EQ(pool.stats().idle_device_bytes, (std::size_t{1} << 20) + 100000);

  // Past the device's limit, the oldest idle blocks are freed.
  const std::size_t limit = DevicePool::idle_device_limit(device);
  ASSERT_GT(limit, 0u);
  block = pool.acquire_device_block(device, limit);
  blocks.push_back(std::move(block));
  pool.release_device_blocks(std::move(blocks));
  EXPECT_EQ(pool.stats().idle_device_bytes, limit);
  pool.trim();
  EXPECT_EQ(pool.stats().idle_device_bytes, 0u);
}

TEST(DevicePool, UnpinnedSlotsAreFreedNotPooled) {
  REQUIRE_GPU();
  use_device(0);
  DevicePool& pool = DevicePool::instance();
  pool.trim();
  std::vector<SlotPtr> slots;
  slots.push_back(std::make_unique<StagingSlot>(current_device(), 8192, false));
  EXPECT_FALSE(slots[0]->pinned);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(slots[0]->host) % 4096, 0u);
  std::memset(slots[0]->host, 1, 8192);
  pool.release_slots(std::move(slots), ~std::size_t{0});
  EXPECT_EQ(pool.idle_pinned_bytes(), 0u);
}

TEST(DevicePool, StreamsAreNonBlockingDistinctAndReused) {
  REQUIRE_GPU();
  use_device(0);
  const int device = current_device();
  DevicePool& pool = DevicePool::instance();
  auto streams = pool.acquire_streams(device, 3);
  ASSERT_EQ(streams.size(), 3u);
  const std::set<cudaStream_t> distinct(streams.begin(), streams.end());
  EXPECT_EQ(distinct.size(), 3u);
  for (cudaStream_t stream : streams) {
    EXPECT_NE(stream, nullptr);  // never the legacy default stream
    unsigned flags = 0;
    check_cuda(cudaStreamGetFlags(stream, &flags), "cudaStreamGetFlags");
    EXPECT_EQ(flags & cudaStreamNonBlocking, static_cast<unsigned>(cudaStreamNonBlocking));
    check_cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  }
  pool.release_streams(device, streams);
  // The same streams come back (streams are never freed), however many others are idle.
  auto again = pool.acquire_streams(device, 3);
  const std::set<cudaStream_t> reused(again.begin(), again.end());
  EXPECT_EQ(reused, distinct);
  pool.release_streams(device, again);
  EXPECT_TRUE(pool.acquire_streams(device, 0).empty());
}

TEST(DevicePool, UsingTheCurrentDeviceKeepsIt) {
  REQUIRE_GPU();
  use_device(0);
  EXPECT_EQ(current_device(), 0);
  use_device(0);
  EXPECT_EQ(current_device(), 0);
  // A failed switch leaves the current device alone.
  EXPECT_THROW(use_device(cuda_device_count()), Error);
  EXPECT_EQ(current_device(), 0);
}

// --- Reads at once, as Dask's threads run them (issue 14) -------------------------------------

// A 64^3 uint16 array of 32^3 chunks (64 KiB each), raw, with values that differ everywhere.
struct BlockArray {
  explicit BlockArray(const std::filesystem::path& path) : values(make_values()), array(written(path, values)) {}
  static std::vector<std::uint16_t> make_values() {
    std::vector<std::uint16_t> out(64 * 64 * 64);
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = static_cast<std::uint16_t>(i * 13 + 5);
    return out;
  }
  static Array written(const std::filesystem::path& path, const std::vector<std::uint16_t>& data) {
    const nlohmann::json doc = nlohmann::json::parse(R"({"zarr_format": 2, "shape": [64, 64, 64],
        "chunks": [32, 32, 32], "dtype": "<u2", "fill_value": 0, "order": "C", "compressor": null, "filters": null})");
    write_array(path, doc, std::as_bytes(std::span(data)));
    return Array::open(path);
  }
  // Block b of 16: 16 x 64 x 16 elements (two chunks), and its expected bytes.
  static Region block(std::size_t b) {
    const std::uint64_t i = b / 4 * 16, k = b % 4 * 16;
    return {{i, i + 16}, {0, 64}, {k, k + 16}};
  }
  std::vector<std::byte> expected(std::size_t b) const {
    const Region r = block(b);
    std::vector<std::uint16_t> out;
    for (auto i = r[0].start; i < r[0].stop; ++i)
      for (auto j = r[1].start; j < r[1].stop; ++j)
        for (auto k = r[2].start; k < r[2].stop; ++k) out.push_back(values[(i * 64 + j) * 64 + k]);
    const auto bytes = std::as_bytes(std::span(out));
    return {bytes.begin(), bytes.end()};
  }
  std::vector<std::uint16_t> values;
  Array array;
};

// Reads the 16 blocks from 16 threads at once, `rounds` times; counts the blocks that came back
// equal to the data and adds up the reads' pinned allocations.
struct ConcurrentRounds {
  std::size_t good = 0;
  std::size_t pinned_allocations = 0;
};
ConcurrentRounds read_blocks_at_once(const BlockArray& data, const Settings& settings, int rounds) {
  constexpr std::size_t kThreads = 16;
  std::vector<std::size_t> good(kThreads, 0), allocated(kThreads, 0);
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      const std::vector<std::byte> expected = data.expected(t);
      for (int round = 0; round < rounds; ++round) {
        const NDArray result = data.array.read(BlockArray::block(t), Device::cuda, settings);
        allocated[t] += result.stats().pinned_allocations;
        if (copy_to_host(result) == expected) ++good[t];
      }
    });
  for (auto& thread : threads) thread.join();
  ConcurrentRounds out;
  for (std::size_t t = 0; t < kThreads; ++t) {
    out.good += good[t];
    out.pinned_allocations += allocated[t];
  }
  return out;
}

TEST(DevicePool, SixteenThreadsReadingAtOnceKeepThePoolWarmWithinItsBudget) {
  REQUIRE_GPU();
  use_device(0);
  test::TempDir dir;
  const BlockArray data(dir / "a");
  DevicePool& pool = DevicePool::instance();
  pool.trim();
  Settings settings;
  settings.threads = 2;
  settings.device_batch = false;  // one slot size: the ring of chunk slots
  settings.pinned_pool_bytes = std::size_t{64} << 20;  // room for every read's whole want
  const DevicePoolStats before = pool.stats();
  const ConcurrentRounds result = read_blocks_at_once(data, settings, 8);
  EXPECT_EQ(result.good, 16u * 8u);
  const DevicePoolStats after = pool.stats();
  EXPECT_EQ(after.in_use_bytes, 0u);
  EXPECT_LE(after.idle_bytes, settings.pinned_pool_bytes);
  // With room for all, nothing was freed: every slot allocated is still idle, and the reads
  // counted every allocation (a pool sized for one read freed and reallocated them over and over).
  EXPECT_EQ(after.frees, before.frees);
  EXPECT_EQ(after.allocations - before.allocations, result.pinned_allocations);
  EXPECT_EQ(after.idle_bytes, result.pinned_allocations * (std::size_t{32} * 32 * 32 * 2));
  // At most two slots per worker, two workers per read, 16 reads: never more than that.
  EXPECT_LE(result.pinned_allocations, 16u * 2u * 2u);
  EXPECT_EQ(pinned_pool_stats().allocations, after.allocations);  // the public view
  // Warm: the same reads again allocate no more than the pool's peak needs, and once the idle
  // slots hold every read's share, none.
  const ConcurrentRounds again = read_blocks_at_once(data, settings, 4);
  EXPECT_EQ(again.good, 16u * 4u);
  EXPECT_LE(result.pinned_allocations + again.pinned_allocations, 16u * 2u * 2u);
  pool.trim();
}

TEST(DevicePool, SixteenThreadsReadingAtOnceUnderATightBudgetStageTheRestInOrdinaryMemory) {
  REQUIRE_GPU();
  use_device(0);
  test::TempDir dir;
  const BlockArray data(dir / "a");
  DevicePool& pool = DevicePool::instance();
  pool.trim();
  for (bool batch : {false, true}) {
    Settings settings;
    settings.threads = 2;
    settings.device_batch = batch;
    settings.pinned_pool_bytes = std::size_t{256} << 10;  // four chunk slots for 16 reads
    const ConcurrentRounds result = read_blocks_at_once(data, settings, 4);
    EXPECT_EQ(result.good, 16u * 4u) << "batch " << batch;
    const DevicePoolStats after = pool.stats();
    EXPECT_EQ(after.in_use_bytes, 0u);
    EXPECT_LE(after.idle_bytes, settings.pinned_pool_bytes);
    EXPECT_EQ(after.budget_bytes, settings.pinned_pool_bytes);
  }
  pool.trim();
}

TEST(DevicePool, EventsAreReused) {
  REQUIRE_GPU();
  use_device(0);
  const int device = current_device();
  DevicePool& pool = DevicePool::instance();
  cudaEvent_t first = pool.acquire_event(device);
  ASSERT_NE(first, nullptr);
  check_cuda(cudaEventRecord(first, cudaStreamLegacy), "cudaEventRecord");
  check_cuda(cudaEventSynchronize(first), "cudaEventSynchronize");
  pool.release_event(device, first);
  cudaEvent_t again = pool.acquire_event(device);
  EXPECT_EQ(again, first);
  cudaEvent_t other = pool.acquire_event(device);
  EXPECT_NE(other, first);
  pool.release_event(device, again);
  pool.release_event(device, other);
  pool.release_event(device, nullptr);  // ignored
}

TEST(DevicePool, AcquireStagingPadsWithOrdinaryMemoryBeyondTheBudget) {
  REQUIRE_GPU();
  use_device(0);
  const int device = current_device();
  DevicePool& pool = DevicePool::instance();
  pool.trim();
  constexpr std::size_t kSize = std::size_t{64} << 10;
  std::size_t allocated = 0;
  auto slots = pool.acquire_staging(device, kSize, 5, 2 * kSize, &allocated);
  ASSERT_EQ(slots.size(), 5u);
  EXPECT_TRUE(slots[0]->pinned);
  EXPECT_TRUE(slots[1]->pinned);
  for (std::size_t k = 2; k < 5; ++k) EXPECT_FALSE(slots[k]->pinned);
  EXPECT_EQ(allocated, 2u);
  EXPECT_EQ(pool.stats().in_use_bytes, 2 * kSize);
  pool.release_slots(std::move(slots), 2 * kSize);
  EXPECT_EQ(pool.stats().in_use_bytes, 0u);
  EXPECT_EQ(pool.idle_pinned_bytes(), 2 * kSize);
  pool.trim();
}

}  // namespace
}  // namespace zarrdirect::cuda

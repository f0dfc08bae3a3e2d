#include "engine/result_buffer_pool.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <thread>
#include <vector>

namespace zarrdirect {
namespace {

constexpr std::size_t kMiB = std::size_t{1} << 20;

TEST(ResultBufferPool, ADroppedBufferServesTheNextReadOfItsSize) {
  ResultBufferPool pool(64 * kMiB);
  void* first = nullptr;
  {
    auto buffer = pool.acquire(8 * kMiB);
    ASSERT_NE(buffer, nullptr);
    first = buffer.get();
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(first) % (2 * kMiB), 0u);  // huge-page aligned
    std::memset(buffer.get(), 0x5a, 8 * kMiB);                          // writable, all of it
    EXPECT_EQ(pool.idle_bytes(), 0u);
  }
  EXPECT_EQ(pool.idle_bytes(), 8 * kMiB);
  auto again = pool.acquire(8 * kMiB - 12345);  // rounds up to the same 8 MiB
  EXPECT_EQ(again.get(), first);
  EXPECT_EQ(pool.reuses(), 1u);
  EXPECT_EQ(pool.idle_bytes(), 0u);
}

TEST(ResultBufferPool, MuchLargerIdleBuffersAreNotSpentOnSmallResults) {
  ResultBufferPool pool(64 * kMiB);
  { auto big = pool.acquire(32 * kMiB); }
  auto small = pool.acquire(4 * kMiB);  // 32 MiB would waste more than a quarter
  EXPECT_EQ(pool.reuses(), 0u);
  EXPECT_EQ(pool.idle_bytes(), 32 * kMiB);
  auto near = pool.acquire(26 * kMiB);  // 32 MiB is within a quarter of 26 MiB
  EXPECT_EQ(pool.reuses(), 1u);
  EXPECT_EQ(pool.idle_bytes(), 0u);
}

TEST(ResultBufferPool, IdleBytesStayWithinTheLimitOldestFreedFirst) {
  ResultBufferPool pool(10 * kMiB);
  void* newest = nullptr;
  {
    std::vector<std::shared_ptr<void>> held;
    for (int i = 0; i < 4; ++i) held.push_back(pool.acquire(4 * kMiB));
    newest = held.back().get();
  }  // dropped in order: the last two of 4 MiB fit the 10 MiB limit
  EXPECT_EQ(pool.idle_bytes(), 8 * kMiB);
  EXPECT_EQ(pool.idle_buffers(), 2u);
  auto reused = pool.acquire(4 * kMiB);
  EXPECT_EQ(reused.get(), newest);  // the most recently returned first
  { auto over = pool.acquire(12 * kMiB); }  // larger than the whole limit: freed, never kept
  EXPECT_EQ(pool.idle_bytes(), 4 * kMiB);
  pool.trim();
  EXPECT_EQ(pool.idle_bytes(), 0u);
  EXPECT_EQ(pool.idle_buffers(), 0u);
}

TEST(ResultBufferPool, SmallBuffersAndAZeroLimitKeepNothing) {
  ResultBufferPool pool(64 * kMiB);
  { auto small = pool.acquire(100000); ASSERT_NE(small, nullptr); }
  EXPECT_EQ(pool.idle_bytes(), 0u);
  ResultBufferPool none(0);
  { auto buffer = none.acquire(4 * kMiB); ASSERT_NE(buffer, nullptr); }
  EXPECT_EQ(none.idle_bytes(), 0u);
  auto empty = pool.acquire(0);  // a zero-byte result still gets a valid pointer
  EXPECT_NE(empty, nullptr);
}

TEST(ResultBufferPool, SizesThatCannotBeRoundedUpAreRefused) {
  ResultBufferPool pool(64 * kMiB);
  EXPECT_THROW(pool.acquire(SIZE_MAX - 5), std::length_error);
}

TEST(ResultBufferPool, BuffersComeBackFromOtherThreads) {
  ResultBufferPool pool(256 * kMiB);
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&pool] {
      for (int i = 0; i < 50; ++i) {
        auto buffer = pool.acquire(2 * kMiB);
        ASSERT_NE(buffer, nullptr);
        static_cast<unsigned char*>(buffer.get())[0] = 1;
      }
    });
  for (auto& thread : threads) thread.join();
  EXPECT_LE(pool.idle_bytes(), 16 * kMiB);  // at most one per thread was ever out at once
  EXPECT_GE(pool.reuses(), 8u * 50u - 8u);
}

}  // namespace
}  // namespace zarrdirect

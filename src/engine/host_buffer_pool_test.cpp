#include "engine/host_buffer_pool.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <thread>
#include <utility>
#include <vector>

namespace zarrdirect {
namespace {

// The pool is process-wide and other tests leave buffers in it, so these tests assert only what
// holds whatever the pool already holds.

constexpr std::size_t kPage = 4096;

bool page_aligned(const HostBuffer& buffer) { return reinterpret_cast<std::uintptr_t>(buffer.data()) % kPage == 0; }

// Takes buffers of `capacity` bytes (a page multiple under 2 MiB) until `wanted` comes back. Best
// fit hands out every pooled buffer of exactly `capacity` before any larger one, so a buffer
// returned to the pool is found among the first few; the bound only stops a failing test.
bool pool_hands_back(std::byte* wanted, std::size_t capacity) {
  std::vector<HostBuffer> taken;
  for (int i = 0; i < 1000; ++i) {
    HostBuffer buffer = acquire_host_buffer(capacity);
    if (buffer.data() == wanted) return true;
    if (buffer.capacity() != capacity) return false;  // larger: none of that size was left
    taken.push_back(std::move(buffer));
  }
  return false;
}

TEST(HostBufferPool, BuffersArePageAlignedAndHoldTheRequest) {
  for (std::size_t nbytes : {std::size_t{1}, std::size_t{100}, kPage, kPage + 1, std::size_t{5} << 20}) {
    HostBuffer buffer = acquire_host_buffer(nbytes);
    ASSERT_NE(buffer.data(), nullptr) << nbytes;
    EXPECT_GE(buffer.capacity(), nbytes);
    EXPECT_EQ(buffer.capacity() % kPage, 0u) << buffer.capacity();
    EXPECT_TRUE(page_aligned(buffer)) << nbytes;
    // Every byte of the capacity is usable (AddressSanitizer builds check the bounds).
    std::fill(buffer.data(), buffer.data() + buffer.capacity(), std::byte{0x5a});
    EXPECT_EQ(buffer.data()[buffer.capacity() - 1], std::byte{0x5a});
  }
}

TEST(HostBufferPool, ZeroBytesStillGivesAUsableBuffer) {
  HostBuffer buffer = acquire_host_buffer(0);
  ASSERT_NE(buffer.data(), nullptr);
  EXPECT_GE(buffer.capacity(), 1u);
  EXPECT_TRUE(page_aligned(buffer));
  buffer.data()[0] = std::byte{1};
}

TEST(HostBufferPool, DefaultBufferIsEmptyAndReturnsNothing) {
  HostBuffer buffer;
  EXPECT_EQ(buffer.data(), nullptr);
  EXPECT_EQ(buffer.capacity(), 0u);
}

TEST(HostBufferPool, ReleasedBuffersAreReused) {
  std::byte* first = nullptr;
  std::size_t capacity = 0;
  {
    HostBuffer buffer = acquire_host_buffer(3 * kPage + 17);
    first = buffer.data();
    capacity = buffer.capacity();
  }
  EXPECT_TRUE(pool_hands_back(first, capacity));
}

TEST(HostBufferPool, SmallestPooledBufferThatFitsIsChosen) {
  HostBuffer small = acquire_host_buffer(kPage);
  HostBuffer large = acquire_host_buffer(std::size_t{8} << 20);
  if (small.capacity() > large.capacity()) std::swap(small, large);  // the pool held a big one
  const std::size_t small_capacity = small.capacity();
  const std::size_t large_capacity = large.capacity();
  ASSERT_LT(small_capacity, large_capacity);
  std::byte* large_data = large.data();
  large = HostBuffer();  // returned first, so a first fit rather than the best one would take it
  small = HostBuffer();
  // A request the small buffer holds gets a buffer of its size, not the large one.
  HostBuffer again = acquire_host_buffer(small_capacity);
  EXPECT_EQ(again.capacity(), small_capacity);
  EXPECT_NE(again.data(), large_data);
  // A request only the large one holds gets at most its size.
  HostBuffer bigger = acquire_host_buffer(small_capacity + 1);
  EXPECT_GE(bigger.capacity(), small_capacity + 1);
  EXPECT_LE(bigger.capacity(), large_capacity);
}

TEST(HostBufferPool, MoveTransfersOwnership) {
  HostBuffer a = acquire_host_buffer(2 * kPage);
  std::byte* data = a.data();
  const std::size_t capacity = a.capacity();

  HostBuffer b(std::move(a));
  EXPECT_EQ(b.data(), data);
  EXPECT_EQ(b.capacity(), capacity);
  EXPECT_EQ(a.data(), nullptr);  // NOLINT(bugprone-use-after-move): the moved-from state is specified
  EXPECT_EQ(a.capacity(), 0u);

  HostBuffer c;
  c = std::move(b);
  EXPECT_EQ(c.data(), data);
  EXPECT_EQ(c.capacity(), capacity);
  EXPECT_EQ(b.data(), nullptr);  // NOLINT(bugprone-use-after-move)
  EXPECT_EQ(b.capacity(), 0u);

  // Assigning to itself keeps the buffer.
  HostBuffer& alias = c;
  c = std::move(alias);
  EXPECT_EQ(c.data(), data);
  EXPECT_EQ(c.capacity(), capacity);
}

TEST(HostBufferPool, MoveAssignmentReturnsTheOverwrittenBufferToThePool) {
  HostBuffer target = acquire_host_buffer(5 * kPage + 1);
  std::byte* overwritten = target.data();
  const std::size_t overwritten_capacity = target.capacity();
  HostBuffer source = acquire_host_buffer(kPage);
  std::byte* kept = source.data();
  target = std::move(source);
  EXPECT_EQ(target.data(), kept);
  EXPECT_TRUE(pool_hands_back(overwritten, overwritten_capacity));
}

TEST(HostBufferPool, ThreadsNeverShareABuffer) {
  // Each thread stamps its buffer with its own byte and checks nobody else wrote there: a buffer
  // handed out twice, or the pool's list corrupted by unlocked access, would show.
  constexpr int kThreads = 4;
  constexpr int kRounds = 300;
  std::vector<int> failures(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([t, &failures] {
      const auto stamp = static_cast<std::byte>(t + 1);
      for (int round = 0; round < kRounds; ++round) {
        const std::size_t nbytes = kPage * static_cast<std::size_t>(1 + (round + t) % 4);
        HostBuffer buffer = acquire_host_buffer(nbytes);
        std::fill(buffer.data(), buffer.data() + nbytes, stamp);
        std::this_thread::yield();
        if (std::any_of(buffer.data(), buffer.data() + nbytes, [&](std::byte b) { return b != stamp; }))
          ++failures[static_cast<std::size_t>(t)];
      }
    });
  for (auto& thread : threads) thread.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(failures[static_cast<std::size_t>(t)], 0) << "thread " << t;
}

}  // namespace
}  // namespace zarrdirect

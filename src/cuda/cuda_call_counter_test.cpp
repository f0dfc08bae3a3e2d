// The counter alone (no GPU): each kind lands in its own field, from many threads at once. The
// device read's counts are checked against real reads in device_call_count_test.cpp.
#include "cuda/cuda_call_counter.hpp"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

namespace zarrdirect::cuda {
namespace {

TEST(CudaCallCounter, EachKindHasItsOwnField) {
  CudaCallCounter counter;
  EXPECT_EQ(counter.stats().total(), 0u);
  counter.add(CudaCall::copy);
  for (int i = 0; i < 2; ++i) counter.add(CudaCall::memset);
  for (int i = 0; i < 3; ++i) counter.add(CudaCall::launch);
  for (int i = 0; i < 4; ++i) counter.add(CudaCall::event_record);
  for (int i = 0; i < 5; ++i) counter.add(CudaCall::stream_wait);
  for (int i = 0; i < 6; ++i) counter.add(CudaCall::sync);
  const CudaCallStats stats = counter.stats();
  EXPECT_EQ(stats.copies, 1u);
  EXPECT_EQ(stats.memsets, 2u);
  EXPECT_EQ(stats.kernel_launches, 3u);
  EXPECT_EQ(stats.event_records, 4u);
  EXPECT_EQ(stats.stream_waits, 5u);
  EXPECT_EQ(stats.synchronizations, 6u);
  EXPECT_EQ(stats.total(), 21u);
}

TEST(CudaCallCounter, CountsFromManyThreadsAddUp) {
  CudaCallCounter counter;
  constexpr int kThreads = 8;
  constexpr int kEach = 10000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < kEach; ++i) counter.add(i % 2 ? CudaCall::copy : CudaCall::launch);
    });
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(counter.count(CudaCall::copy), std::uint64_t{kThreads} * kEach / 2);
  EXPECT_EQ(counter.count(CudaCall::launch), std::uint64_t{kThreads} * kEach / 2);
  EXPECT_EQ(counter.stats().total(), std::uint64_t{kThreads} * kEach);
}

}  // namespace
}  // namespace zarrdirect::cuda

#include "util/phase_trace.hpp"

#include <chrono>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace zarrdirect {
namespace {

TEST(PhaseTrace, OffRecordsNothing) {
  PhaseTrace trace("read", false);
  trace.mark("launch", 7);
  EXPECT_FALSE(trace.enabled());
  EXPECT_EQ(trace.report(), "");
}

TEST(PhaseTrace, OnListsMarksInTimeOrderWithTheirValues) {
  PhaseTrace trace("read", true);
  trace.mark("start");
  trace.mark("launch", 8388608);
  const std::string report = trace.report();
  const auto start = report.find("read +");
  const auto launch = report.find(" launch 8388608\n");
  ASSERT_NE(start, std::string::npos) << report;
  ASSERT_NE(launch, std::string::npos) << report;
  EXPECT_LT(report.find(" start 0\n"), launch);
}

TEST(PhaseTrace, MarksFromManyThreadsAreAllKept) {
  PhaseTrace trace("read", true);
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&trace] {
      for (int i = 0; i < 100; ++i) trace.mark("chunk", 1);
    });
  for (auto& thread : threads) thread.join();
  const std::string report = trace.report();
  std::size_t lines = 0;
  for (char c : report) lines += c == '\n';
  EXPECT_EQ(lines, 800u);
}

TEST(PhaseTrace, MarkFirstKeepsOnlyTheFirstOfItsName) {
  PhaseTrace trace("read", true);
  trace.mark_first("first chunk", 1);
  trace.mark_first("first chunk", 2);
  trace.mark("launch", 3);
  const std::string report = trace.report();
  EXPECT_NE(report.find(" first chunk 1\n"), std::string::npos) << report;
  EXPECT_EQ(report.find(" first chunk 2\n"), std::string::npos) << report;
  EXPECT_NE(report.find(" launch 3\n"), std::string::npos) << report;
}

TEST(PhaseTrace, TheEnvironmentTurnsItOn) {
  ::setenv("ZARRDIRECT_TRACE", "1", 1);
  EXPECT_TRUE(PhaseTrace::enabled_by_environment());
  ::setenv("ZARRDIRECT_TRACE", "yes", 1);
  EXPECT_FALSE(PhaseTrace::enabled_by_environment());
  ::unsetenv("ZARRDIRECT_TRACE");
  EXPECT_FALSE(PhaseTrace::enabled_by_environment());
}

TEST(PhaseLaps, EachLapGoesToItsPhaseAndTheFirstOnlyStartsTheClock) {
  PhaseLaps laps(3);
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  laps.lap(0);  // starts the clock: the 5 ms before it count nowhere
  EXPECT_EQ(laps.nanoseconds()[0], 0u);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  laps.lap(2);
  laps.lap(1);  // a lap of almost nothing
  const auto& ns = laps.nanoseconds();
  EXPECT_GE(ns[2], 20'000'000u);
  EXPECT_LT(ns[1], ns[2]);
  EXPECT_EQ(ns[0], 0u);
  laps.lap(7);  // past the phases: ignored, the clock still moves on
  EXPECT_EQ(laps.nanoseconds().size(), 3u);
}

}  // namespace
}  // namespace zarrdirect

#include "cli/progress.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <thread>

#include <fmt/format.h>

namespace zarrdirect::cli {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// What `action` writes to stderr (the bar draws there, terminal or not).
template <class Action>
std::string stderr_of(Action&& action) {
  ::testing::internal::CaptureStderr();
  action();
  return ::testing::internal::GetCapturedStderr();
}

TEST(ProgressBar, DisabledGivesNoCallbackAndDrawsNothing) {
  ProgressBar bar(false);
  EXPECT_FALSE(static_cast<bool>(bar.callback()));
  EXPECT_EQ(stderr_of([&] { bar.clear(); }), "");
}

TEST(ProgressBar, QuickReadsDrawNothing) {
  // Within the first half second the callback keeps the read going without drawing, and clearing
  // a bar never drawn writes nothing either.
  const auto start = Clock::now();
  ProgressBar bar(true);
  ProgressCallback callback = bar.callback();
  ASSERT_TRUE(static_cast<bool>(callback));
  bool kept_going = true;
  const std::string drawn = stderr_of([&] {
    for (std::size_t done = 0; done <= 10; ++done) kept_going = kept_going && callback(done, 10);
    bar.clear();
  });
  EXPECT_TRUE(kept_going);
  if (Clock::now() - start < milliseconds(450)) {  // else the machine stalled
    EXPECT_EQ(drawn, "");
  }
}

TEST(ProgressBar, DrawsAfterHalfASecondAtMostTenTimesASecond) {
  ProgressBar bar(true);
  ProgressCallback callback = bar.callback();
  std::this_thread::sleep_for(milliseconds(550));
  std::string first, second;
  Clock::time_point between;
  first = stderr_of([&] { EXPECT_TRUE(callback(5, 10)); });
  between = Clock::now();
  second = stderr_of([&] { EXPECT_TRUE(callback(6, 10)); });
  const bool quick = Clock::now() - between < milliseconds(90);

  // A carriage return, 20 columns of bar, the percentage and the chunk counts (no rate: the
  // size was not given; the time left depends on the clock, so only its presence is checked).
  EXPECT_EQ(first.rfind("\r[" + std::string(10, '#') + std::string(10, ' ') + "]  50.0% 5/10 chunks, ", 0), 0u)
      << first;
  EXPECT_TRUE(first.ends_with(" left")) << first;
  if (quick) {
    EXPECT_EQ(second, "");  // too soon after the first drawing
  }

  std::this_thread::sleep_for(milliseconds(120));
  // Done: nothing left; spaces cover the end of the longer line before.
  const std::string last = "[" + std::string(20, '#') + "] 100.0% 10/10 chunks";
  const std::size_t longest = std::max(first.size(), second.size()) - 1;  // without the "\r"
  const std::string padding(longest > last.size() ? longest - last.size() : 0, ' ');
  EXPECT_EQ(stderr_of([&] { callback(10, 10); }), fmt::format("\r{}{}", last, padding));

  // Clearing overwrites the longest line drawn with spaces and returns to its start.
  EXPECT_EQ(stderr_of([&] { bar.clear(); }), fmt::format("\r{}\r", std::string(longest, ' ')));
}

TEST(ProgressBar, FractionsRoundDownAndNoTotalCountsAsDone) {
  ProgressBar bar(true);
  ProgressCallback callback = bar.callback();
  std::this_thread::sleep_for(milliseconds(550));
  EXPECT_EQ(stderr_of([&] { callback(1, 3); }).rfind("\r[" + std::string(6, '#') + std::string(14, ' ') + "]  33.3% 1/3 chunks", 0),
            0u);
  std::this_thread::sleep_for(milliseconds(120));
  EXPECT_EQ(stderr_of([&] { callback(0, 0); }).rfind("\r[" + std::string(20, '#') + "] 100.0% 0/0 chunks", 0), 0u);
}

TEST(ProgressLine, ShowsRateAndTimeLeft) {
  // A quarter of 400 MB in 2 s: 50 MB/s, and three times as long again to go.
  EXPECT_EQ(progress_line(25, 100, 400'000'000, 2.0), "[#####               ]  25.0% 25/100 chunks, 50.0 MB/s, 6 s left");
  // Done: the rate over the whole read, nothing left.
  EXPECT_EQ(progress_line(100, 100, 400'000'000, 4.0), "[" + std::string(20, '#') + "] 100.0% 100/100 chunks, 100.0 MB/s");
  // Before the first chunk there is nothing to estimate from; an unknown size gives no rate.
  EXPECT_EQ(progress_line(0, 100, 400'000'000, 2.0), "[                    ]   0.0% 0/100 chunks");
  EXPECT_EQ(progress_line(50, 100, 0, 2.0), "[##########          ]  50.0% 50/100 chunks, 2 s left");
}

TEST(DurationText, SecondsMinutesHours) {
  EXPECT_EQ(duration_text(0.3), "<1 s");
  EXPECT_EQ(duration_text(42.4), "42 s");
  EXPECT_EQ(duration_text(200), "3 min 20 s");
  EXPECT_EQ(duration_text(7500), "2 h 05 min");
  EXPECT_EQ(duration_text(std::nan("")), "<1 s");
  EXPECT_EQ(duration_text(1e300), "277777777 h 46 min");  // clamped, not undefined
}

}  // namespace
}  // namespace zarrdirect::cli

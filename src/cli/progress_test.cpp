#include "cli/progress.hpp"

#include <gtest/gtest.h>

#include <thread>

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

  // A carriage return, 40 columns of bar, the percentage and the chunk counts.
  EXPECT_EQ(first, "\r[" + std::string(20, '#') + std::string(20, ' ') + "]  50.0% (5/10 chunks)");
  if (quick) {
    EXPECT_EQ(second, "");  // too soon after the first drawing
  }

  std::this_thread::sleep_for(milliseconds(120));
  EXPECT_EQ(stderr_of([&] { callback(10, 10); }),
            "\r[" + std::string(40, '#') + "] 100.0% (10/10 chunks)");

  // Clearing overwrites the line with spaces and returns to its start.
  EXPECT_EQ(stderr_of([&] { bar.clear(); }), "\r" + std::string(80, ' ') + "\r");
}

TEST(ProgressBar, FractionsRoundDownAndNoTotalCountsAsDone) {
  ProgressBar bar(true);
  ProgressCallback callback = bar.callback();
  std::this_thread::sleep_for(milliseconds(550));
  EXPECT_EQ(stderr_of([&] { callback(1, 3); }),
            "\r[" + std::string(13, '#') + std::string(27, ' ') + "]  33.3% (1/3 chunks)");
  std::this_thread::sleep_for(milliseconds(120));
  EXPECT_EQ(stderr_of([&] { callback(0, 0); }), "\r[" + std::string(40, '#') + "] 100.0% (0/0 chunks)");
}

}  // namespace
}  // namespace zarrdirect::cli

#include "store/byte_ranges.hpp"

#include <gtest/gtest.h>

namespace zarrdirect {
namespace {

TEST(ByteRanges, AdjacentRangesJoinWithoutAGap) {
  EXPECT_TRUE(joins_run(100, 100, 0));
  EXPECT_FALSE(joins_run(100, 101, 0));
}

TEST(ByteRanges, NearbyRangesJoinUpToTheGap) {
  EXPECT_TRUE(joins_run(100, 100 + kRemoteMergeGap, kRemoteMergeGap));
  EXPECT_FALSE(joins_run(100, 101 + kRemoteMergeGap, kRemoteMergeGap));
}

TEST(ByteRanges, OverlappingOrEarlierRangesNeverJoin) {
  EXPECT_FALSE(joins_run(100, 99, kRemoteMergeGap));
  EXPECT_FALSE(joins_run(100, 0, kRemoteMergeGap));
}

}  // namespace
}  // namespace zarrdirect

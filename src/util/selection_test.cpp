// The selection type's NumPy rules: slice bounds and steps as Python's slice.indices(), indices
// wrapping from the end, masks, the text form, and the box test that keeps box reads on their path.
#include "zarrdirect/selection.hpp"

#include <gtest/gtest.h>

#include <limits>

#include "zarrdirect/error.hpp"

namespace zarrdirect {
namespace {

using Indices = std::vector<std::uint64_t>;

TEST(Selection, SlicesFollowPythonSliceIndices) {
  EXPECT_EQ(AxisSelection::slice(0, 10, 3).resolve(10, 0), (Indices{0, 3, 6, 9}));
  EXPECT_EQ(AxisSelection::slice_open(false, 0, false, 0, -1).resolve(4, 0), (Indices{3, 2, 1, 0}));
  EXPECT_EQ(AxisSelection::slice_open(false, 0, false, 0, -3).resolve(7, 0), (Indices{6, 3, 0}));
  EXPECT_EQ(AxisSelection::slice(-2, -100, -1).resolve(5, 0), (Indices{3, 2, 1, 0}));
  EXPECT_EQ(AxisSelection::slice(100, 1, -2).resolve(5, 0), (Indices{4, 2}));
  EXPECT_EQ(AxisSelection::slice(-100, 100, 4).resolve(9, 0), (Indices{0, 4, 8}));
  EXPECT_EQ(AxisSelection::slice(3, 3, 1).resolve(9, 0), Indices{});
  EXPECT_EQ(AxisSelection::slice(1, 5, -1).resolve(9, 0), Indices{});
  EXPECT_EQ(AxisSelection::slice_open(false, 0, false, 0, -1).resolve(0, 0), Indices{});
  EXPECT_EQ(AxisSelection::slice(0, 5, std::numeric_limits<std::int64_t>::max()).resolve(5, 0), Indices{0});
  EXPECT_EQ(AxisSelection::slice_open(false, 0, false, 0, std::numeric_limits<std::int64_t>::min()).resolve(5, 0),
            Indices{4});
  EXPECT_THROW(AxisSelection::slice(0, 5, 0).resolve(5, 0), Error);
}

TEST(Selection, ListsMasksAndIndices) {
  EXPECT_EQ(AxisSelection::list({3, -1, 0, 3}).resolve(5, 0), (Indices{3, 4, 0, 3}));
  EXPECT_EQ(AxisSelection::mask({true, false, true}).resolve(3, 0), (Indices{0, 2}));
  EXPECT_EQ(AxisSelection::index(-5).resolve(5, 0), Indices{0});
  EXPECT_THROW(AxisSelection::index(5).resolve(5, 1), Error);
  EXPECT_THROW(AxisSelection::list({-6}).resolve(5, 1), Error);
  EXPECT_THROW(AxisSelection::mask({true}).resolve(3, 0), Error);
}

TEST(Selection, ShapeDropsIndexedAxes) {
  const std::vector<std::uint64_t> shape{10, 20, 30};
  Selection s{AxisSelection::slice(0, 10, 2), AxisSelection::index(3), AxisSelection::list({1, 1, 1})};
  EXPECT_EQ(selection_shape(s, shape), (std::vector<std::uint64_t>{5, 3}));
  EXPECT_EQ(selection_shape({}, shape), shape);
}

TEST(Selection, BoxesAreRecognized) {
  const std::vector<std::uint64_t> shape{10, 20};
  Region region;
  EXPECT_TRUE(selection_is_box({AxisSelection::slice(2, 5), AxisSelection::all()}, shape, region));
  EXPECT_EQ(region, (Region{{2, 5}, {0, 20}}));
  EXPECT_FALSE(selection_is_box({AxisSelection::slice(2, 5, 2), AxisSelection::all()}, shape, region));
  EXPECT_FALSE(selection_is_box({AxisSelection::index(2), AxisSelection::all()}, shape, region));
  EXPECT_TRUE(selection_is_box({}, shape, region));
}

TEST(Selection, ParsesTheTextForm) {
  const std::vector<std::uint64_t> shape{10, 20, 30};
  auto parsed = parse_selection("::2, -1, 5:1:-2", shape);
  ASSERT_EQ(parsed.size(), 3u);
  EXPECT_EQ(parsed[0].resolve(10, 0), (Indices{0, 2, 4, 6, 8}));
  EXPECT_EQ(parsed[1].kind(), AxisSelection::Kind::index);
  EXPECT_EQ(parsed[1].resolve(20, 1), Indices{19});
  EXPECT_EQ(parsed[2].resolve(30, 2), (Indices{5, 3}));
  auto ellipsis = parse_selection("...,::-10", shape);
  ASSERT_EQ(ellipsis.size(), 3u);
  EXPECT_EQ(ellipsis[0].resolve(10, 0).size(), 10u);
  EXPECT_EQ(ellipsis[2].resolve(30, 2), (Indices{29, 19, 9}));
  EXPECT_EQ(parse_selection("", shape).size(), 3u);
  EXPECT_EQ(parse_selection("1", shape).size(), 3u);  // the rest whole
  for (const char* bad : {"::0", "1:2:3:4", "a", "1,2,3,4", "...,...", "10", ",", "1:x"}) {
    SCOPED_TRACE(bad);
    EXPECT_THROW(parse_selection(bad, shape), Error);
  }
}

}  // namespace
}  // namespace zarrdirect

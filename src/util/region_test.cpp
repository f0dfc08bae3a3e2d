#include "zarrdirect/region.hpp"

#include <gtest/gtest.h>

#include <limits>

#include "zarrdirect/error.hpp"

namespace zarrdirect {
namespace {

std::vector<std::uint64_t> shape3{20, 30, 40};

ErrorKind kind_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.kind();
  }
  ADD_FAILURE() << "no zarrdirect::Error thrown";
  return ErrorKind::cuda;
}

std::string message_of(std::string_view text, const std::vector<std::uint64_t>& shape) {
  try {
    parse_region(text, shape);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::invalid_argument) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "\"" << text << "\" parsed";
  return {};
}

TEST(ParseRegion, EmptyTextIsTheWholeArray) {
  EXPECT_EQ(parse_region("", shape3), (Region{{0, 20}, {0, 30}, {0, 40}}));
  EXPECT_EQ(parse_region("   ", shape3), (Region{{0, 20}, {0, 30}, {0, 40}}));
}

TEST(ParseRegion, SlicesColonsAndBareIndex) {
  EXPECT_EQ(parse_region("0:10,:,5", shape3), (Region{{0, 10}, {0, 30}, {5, 6}}));
  EXPECT_EQ(parse_region(" 2 : 4 , 7: , :3 ", shape3), (Region{{2, 4}, {7, 30}, {0, 3}}));
}

TEST(ParseRegion, MissingTrailingDimensionsAreWhole) {
  EXPECT_EQ(parse_region("3", shape3), (Region{{3, 4}, {0, 30}, {0, 40}}));
}

TEST(ParseRegion, NegativeBoundsCountFromTheEnd) {
  EXPECT_EQ(parse_region("-5:", shape3), (Region{{15, 20}, {0, 30}, {0, 40}}));
  EXPECT_EQ(parse_region(":-3,-10:-5", shape3), (Region{{0, 17}, {20, 25}, {0, 40}}));
  EXPECT_EQ(parse_region("-1", shape3), (Region{{19, 20}, {0, 30}, {0, 40}}));
  EXPECT_EQ(parse_region("-20", shape3), (Region{{0, 1}, {0, 30}, {0, 40}}));
}

TEST(ParseRegion, SliceBoundsClipAsNumPyDoes) {
  EXPECT_EQ(parse_region("5:100", shape3)[0], (Range{5, 20}));
  EXPECT_EQ(parse_region("-100:3", shape3)[0], (Range{0, 3}));
  EXPECT_EQ(parse_region("15:10", shape3)[0], (Range{15, 15}));  // empty, not an error
  EXPECT_EQ(parse_region("25:30", shape3)[0], (Range{20, 20}));
  EXPECT_EQ(parse_region("-9223372036854775808:", shape3)[0], (Range{0, 20}));
  EXPECT_EQ(parse_region(":9223372036854775807", shape3)[0], (Range{0, 20}));
}

TEST(ParseRegion, BareIndexOutOfRangeIsAnError) {
  EXPECT_NE(message_of("20", shape3).find("dimension 0"), std::string::npos);
  EXPECT_NE(message_of("-21", shape3).find("outside"), std::string::npos);
  EXPECT_NE(message_of(":,30", shape3).find("dimension 1"), std::string::npos);
  message_of("-9223372036854775808", shape3);
}

TEST(ParseRegion, EllipsisStandsForTheDimensionsLeft) {
  EXPECT_EQ(parse_region("...", shape3), (Region{{0, 20}, {0, 30}, {0, 40}}));
  EXPECT_EQ(parse_region("...,5", shape3), (Region{{0, 20}, {0, 30}, {5, 6}}));
  EXPECT_EQ(parse_region("1:3, ... ,-2:", shape3), (Region{{1, 3}, {0, 30}, {38, 40}}));
  EXPECT_EQ(parse_region("1,2,...", shape3), (Region{{1, 2}, {2, 3}, {0, 40}}));
  EXPECT_EQ(parse_region("1,2,3,...", shape3), (Region{{1, 2}, {2, 3}, {3, 4}}));  // stands for none
  EXPECT_EQ(parse_region("...", std::vector<std::uint64_t>{}), Region{});             // 0-d
  // The indices around it keep their dimensions' bounds checks.
  EXPECT_NE(message_of("...,40", shape3).find("dimension 2"), std::string::npos);
}

TEST(ParseRegion, EllipsisMisuseIsRefused) {
  EXPECT_NE(message_of("...,1,...", shape3).find("only one"), std::string::npos);
  EXPECT_NE(message_of("1,2,3,4,...", shape3).find("more dimensions"), std::string::npos);
  message_of("..", shape3);
  message_of("....", shape3);
  message_of("1...", shape3);
}

TEST(ParseRegion, StepsAreRefused) {
  EXPECT_NE(message_of("0:10:2", shape3).find("steps"), std::string::npos);
  EXPECT_NE(message_of(":,::-1", shape3).find("steps"), std::string::npos);
}

TEST(ParseRegion, MalformedTextIsRefused) {
  message_of("a:b", shape3);
  message_of("1,,2", shape3);
  message_of("1.5", shape3);
  message_of("+1", shape3);
  message_of("99999999999999999999", shape3);
  message_of("0x10", shape3);
  EXPECT_NE(message_of("1,2,3,4", shape3).find("more dimensions"), std::string::npos);
  message_of("1,", shape3);
}

TEST(ParseRegion, ZeroDimensionalArray) {
  EXPECT_TRUE(parse_region("", std::vector<std::uint64_t>{}).empty());
  message_of("0", {});
}

TEST(ParseRegion, HugeExtents) {
  const std::uint64_t big = std::numeric_limits<std::int64_t>::max();
  std::vector<std::uint64_t> shape{big};
  EXPECT_EQ(parse_region("-1", shape)[0], (Range{big - 1, big}));
  EXPECT_EQ(parse_region("-9223372036854775807:", shape)[0], (Range{0, big}));
  EXPECT_EQ(parse_region("-9223372036854775808:-1", shape)[0], (Range{0, big - 1}));
}

TEST(ResolveRegion, ChecksBoundsAndRank) {
  EXPECT_EQ(resolve_region({}, shape3), full_region(shape3));
  EXPECT_EQ(resolve_region({{1, 2}, {0, 30}, {40, 40}}, shape3), (Region{{1, 2}, {0, 30}, {40, 40}}));
  EXPECT_EQ(kind_of([] { resolve_region({{0, 21}, {0, 1}, {0, 1}}, shape3); }), ErrorKind::invalid_argument);
  EXPECT_EQ(kind_of([] { resolve_region({{5, 4}, {0, 1}, {0, 1}}, shape3); }), ErrorKind::invalid_argument);
  EXPECT_EQ(kind_of([] { resolve_region({{0, 1}}, shape3); }), ErrorKind::invalid_argument);
  try {
    resolve_region({{0, 1}, {0, 31}, {0, 1}}, shape3);
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("dimension 1"), std::string::npos) << e.what();
  }
}

TEST(Region, ShapeAndText) {
  Region region{{2, 5}, {0, 0}, {7, 8}};
  EXPECT_EQ(region_shape(region), (std::vector<std::uint64_t>{3, 0, 1}));
  EXPECT_EQ(to_string(region), "2:5,0:0,7:8");
  EXPECT_EQ(to_string(Region{}), "");
  EXPECT_EQ(full_region(std::vector<std::uint64_t>{4, 0}), (Region{{0, 4}, {0, 0}}));
}

}  // namespace
}  // namespace zarrdirect

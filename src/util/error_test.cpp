#include "zarrdirect/error.hpp"

#include <gtest/gtest.h>

#include "util/checked_math.hpp"

namespace zarrdirect {
namespace {

TEST(Error, WithContextKeepsTheKindAndPrefixes) {
  Error inner(ErrorKind::corrupt_data, "codec bytes: short");
  Error outer = inner.with_context("/a/c/0");
  EXPECT_EQ(outer.kind(), ErrorKind::corrupt_data);
  EXPECT_STREQ(outer.what(), "/a/c/0: codec bytes: short");
}

TEST(Error, EveryKindHasAName) {
  for (auto kind : {ErrorKind::invalid_metadata, ErrorKind::unsupported, ErrorKind::corrupt_data, ErrorKind::io,
                    ErrorKind::cuda, ErrorKind::invalid_argument, ErrorKind::cancelled})
    EXPECT_FALSE(to_string(kind).empty());
  EXPECT_EQ(to_string(ErrorKind::cancelled), "cancelled");
}

TEST(CheckedMath, DetectsOverflow) {
  const std::uint64_t max = ~std::uint64_t{0};
  EXPECT_EQ(checked_mul(1u << 31, 1u << 31), std::uint64_t{1} << 62);
  EXPECT_FALSE(checked_mul(std::uint64_t{1} << 32, std::uint64_t{1} << 32));
  EXPECT_EQ(checked_mul(max, 1), max);
  EXPECT_EQ(checked_mul(max, 0), 0u);
  EXPECT_FALSE(checked_add(max, 1));
  EXPECT_EQ(checked_add(max - 1, 1), max);
  std::vector<std::uint64_t> fits{1u << 20, 1u << 20, 1u << 20};
  EXPECT_EQ(checked_product(fits), std::uint64_t{1} << 60);
  std::vector<std::uint64_t> overflows{1u << 20, 1u << 20, 1u << 20, 1u << 20};
  EXPECT_FALSE(checked_product(overflows));
  std::vector<std::uint64_t> zero_after_overflowing_prefix{max, 2, 0};
  EXPECT_FALSE(checked_product(zero_after_overflowing_prefix));
  EXPECT_EQ(checked_product(std::vector<std::uint64_t>{}), 1u);
  EXPECT_EQ(ceil_div(10, 3), 4u);
  EXPECT_EQ(ceil_div(9, 3), 3u);
  EXPECT_EQ(ceil_div(0, 3), 0u);
  EXPECT_EQ(ceil_div(max, 2), (max / 2) + 1);
}

}  // namespace
}  // namespace zarrdirect

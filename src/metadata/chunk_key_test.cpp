#include <gtest/gtest.h>

#include "zarrdirect/metadata.hpp"

namespace zarrdirect {
namespace {

std::string key(ChunkKeyEncoding::Kind kind, char separator, std::vector<std::uint64_t> coords) {
  return ChunkKeyEncoding{kind, separator}.key(coords);
}

TEST(ChunkKey, V3Default) {
  using K = ChunkKeyEncoding::Kind;
  EXPECT_EQ(key(K::v3_default, '/', {0, 1, 2}), "c/0/1/2");
  EXPECT_EQ(key(K::v3_default, '.', {0, 1, 2}), "c.0.1.2");
  EXPECT_EQ(key(K::v3_default, '/', {12345678901234ull}), "c/12345678901234");
  EXPECT_EQ(key(K::v3_default, '/', {}), "c");  // 0-d
  EXPECT_EQ(ChunkKeyEncoding{}.key(std::vector<std::uint64_t>{3, 4}), "c/3/4");
}

TEST(ChunkKey, V2) {
  using K = ChunkKeyEncoding::Kind;
  EXPECT_EQ(key(K::v2, '.', {0, 1, 2}), "0.1.2");
  EXPECT_EQ(key(K::v2, '/', {0, 1, 2}), "0/1/2");
  EXPECT_EQ(key(K::v2, '.', {7}), "7");
  EXPECT_EQ(key(K::v2, '.', {}), "0");  // 0-d
  EXPECT_EQ(key(K::v2, '/', {}), "0");
}

}  // namespace
}  // namespace zarrdirect

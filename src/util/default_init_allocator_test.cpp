#include "util/default_init_allocator.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <string>

namespace zarrdirect {
namespace {

TEST(DefaultInitAllocator, KeepsValuesThatAreGivenAndCopied) {
  UninitializedBytes bytes(3, std::byte{7});
  EXPECT_EQ(bytes[0], std::byte{7});
  EXPECT_EQ(bytes[2], std::byte{7});
  bytes.push_back(std::byte{9});
  EXPECT_EQ(bytes.back(), std::byte{9});
  UninitializedBytes copy = bytes;
  EXPECT_EQ(copy, bytes);
  bytes.resize(64 << 10);  // grows: the first elements are moved, not lost
  EXPECT_EQ(bytes[0], std::byte{7});
  EXPECT_EQ(bytes[3], std::byte{9});
}

TEST(DefaultInitAllocator, NonTrivialTypesAreStillConstructed) {
  // Default initialization of a class runs its constructor: strings come out empty.
  std::vector<std::string, DefaultInitAllocator<std::string>> strings(4);
  for (const auto& s : strings) EXPECT_TRUE(s.empty());
  strings.emplace_back("kept");
  EXPECT_EQ(strings.back(), "kept");
}

}  // namespace
}  // namespace zarrdirect

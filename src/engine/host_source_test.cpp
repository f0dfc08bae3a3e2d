#include <gtest/gtest.h>

#include <numeric>
#include <vector>

#include "engine/chunk_grid.hpp"
#include "engine/chunk_source.hpp"

namespace zarrdirect {
namespace {

TEST(HostSource, WholeChunksComeStraightFromTheSourceWhereTheyLieInOneRun) {
  // A 4 x 6 x 5 uint16 source; chunks of 2 x 6 x 5 are slabs, one run each.
  std::vector<std::uint16_t> values(4 * 6 * 5);
  std::iota(values.begin(), values.end(), std::uint16_t{1});
  const std::uint64_t shape[] = {4, 6, 5};
  auto layout = DestinationLayout::contiguous(reinterpret_cast<std::byte*>(values.data()), shape, 2);
  HostSource source(layout);
  Region whole{{0, 4}, {0, 6}, {0, 5}};
  ChunkBox slab = box_of(Extents{1, 0, 0}, Extents{}, Extents{2, 6, 5}, whole, 3);
  auto bytes = source.whole_chunk(0, slab);
  ASSERT_EQ(bytes.size(), 2u * 6 * 5 * 2);
  EXPECT_EQ(bytes.data(), reinterpret_cast<const std::byte*>(values.data() + 2 * 6 * 5));

  // A chunk that is not one run in the source (2 x 3 x 5), or not covered whole: gather instead.
  ChunkBox block = box_of(Extents{0, 1, 0}, Extents{}, Extents{2, 3, 5}, whole, 3);
  EXPECT_TRUE(source.whole_chunk(0, block).empty());
  Region part{{0, 3}, {0, 6}, {0, 5}};
  ChunkBox cut = box_of(Extents{1, 0, 0}, Extents{}, Extents{2, 6, 5}, part, 3);
  EXPECT_TRUE(source.whole_chunk(0, cut).empty());

  // A strided source (every other element of the last axis) never hands out its memory.
  std::vector<std::uint16_t> wide(4 * 6 * 10);
  auto strided = DestinationLayout::contiguous(reinterpret_cast<std::byte*>(wide.data()), shape, 2);
  strided.byte_strides[0] = 6 * 10 * 2;
  strided.byte_strides[1] = 10 * 2;
  strided.byte_strides[2] = 4;
  HostSource strided_source(strided);
  EXPECT_TRUE(strided_source.whole_chunk(0, slab).empty());
}

}  // namespace
}  // namespace zarrdirect

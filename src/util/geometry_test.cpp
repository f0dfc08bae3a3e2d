#include "util/geometry.hpp"

#include <gtest/gtest.h>

namespace zarrdirect {
namespace {

TEST(Geometry, StridesAndLinearIndexRoundTrip) {
  Extents shape = to_extents(std::vector<std::uint64_t>{3, 4, 5});
  Extents strides = c_order_strides(shape, 3);
  EXPECT_EQ(strides[0], 20u);
  EXPECT_EQ(strides[1], 5u);
  EXPECT_EQ(strides[2], 1u);
  for (std::uint64_t i = 0; i < 60; ++i) {
    Extents coords = linear_to_coords(i, shape, 3);
    EXPECT_EQ(coords[0] * 20 + coords[1] * 5 + coords[2], i);
    EXPECT_EQ(coords_to_linear(coords, shape, 3), i);
  }
  EXPECT_EQ(c_order_strides(shape, 0)[0], 0u);
}

TEST(Geometry, CellsTouchedCountCutCellsWhole) {
  const std::vector<std::uint64_t> cells{128, 128, 128};
  EXPECT_EQ(cells_touched(Region{{384, 640}, {384, 640}, {896, 1152}}, cells), 8u);   // on the grid
  EXPECT_EQ(cells_touched(Region{{320, 576}, {320, 576}, {832, 1088}}, cells), 27u);  // half a cell off
  EXPECT_EQ(cells_touched(Region{{0, 1}, {127, 129}, {5, 6}}, cells), 2u);
  EXPECT_EQ(cells_touched(Region{{0, 0}, {0, 128}, {0, 128}}, cells), 0u);
  EXPECT_EQ(cells_touched(Region{{10, 20}}, std::vector<std::uint64_t>{}), 1u);
  const std::uint64_t big = std::uint64_t{1} << 40;
  EXPECT_EQ(cells_touched(Region{{0, big}, {0, big}}, std::vector<std::uint64_t>{1, 1}), ~std::uint64_t{0});
}

TEST(Geometry, WindowAndBoxesOfAGridOverARegion) {
  // A 10x10 array in 4x4 cells; the region [3, 9) x [4, 5) touches cells (0..2, 1).
  Region region{{3, 9}, {4, 5}};
  Extents cells = to_extents(std::vector<std::uint64_t>{4, 4});
  GridWindow window = window_over(region, Extents{}, cells, 2);
  EXPECT_EQ(window.size(), 3u);
  EXPECT_EQ(window.cell(0)[0], 0u);
  EXPECT_EQ(window.cell(2)[0], 2u);
  EXPECT_EQ(window.cell(2)[1], 1u);
  ChunkBox box = box_of(window.cell(0), Extents{}, cells, region, 2);
  EXPECT_EQ(box.offset_in_chunk[0], 3u);
  EXPECT_EQ(box.extent[0], 1u);
  EXPECT_EQ(box.offset_in_dest[0], 0u);
  EXPECT_EQ(box.offset_in_chunk[1], 0u);
  EXPECT_EQ(box.extent[1], 1u);
  ChunkBox last = box_of(window.cell(2), Extents{}, cells, region, 2);
  EXPECT_EQ(last.offset_in_chunk[0], 0u);
  EXPECT_EQ(last.extent[0], 1u);  // 8..9
  EXPECT_EQ(last.offset_in_dest[0], 5u);
  EXPECT_FALSE(last.covers_chunk());
  // A grid with its origin inside the array (the inner chunks of a shard at [4, 4)).
  GridWindow inner = window_over(Region{{5, 8}, {4, 6}}, to_extents(std::vector<std::uint64_t>{4, 4}),
                                 to_extents(std::vector<std::uint64_t>{2, 2}), 2);
  EXPECT_EQ(inner.first[0], 0u);
  EXPECT_EQ(inner.count[0], 2u);
  EXPECT_EQ(inner.count[1], 1u);
  // An empty region touches nothing.
  EXPECT_EQ(window_over(Region{{2, 2}, {0, 4}}, Extents{}, cells, 2).size(), 0u);
}

}  // namespace
}  // namespace zarrdirect

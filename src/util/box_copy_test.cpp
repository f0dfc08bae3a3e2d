#include "util/box_copy.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <numeric>
#include <vector>

#include "test_support.hpp"

namespace zarrdirect {
namespace {

// A chunk of `shape` whose element i holds the value i (uint16).
std::vector<std::uint16_t> iota_chunk(std::size_t n) {
  std::vector<std::uint16_t> chunk(n);
  std::iota(chunk.begin(), chunk.end(), std::uint16_t{0});
  return chunk;
}

using test::make_box;

TEST(Layout, ContiguousStrides) {
  std::vector<std::uint64_t> shape{3, 4, 5};
  std::vector<std::byte> storage(120);
  auto layout = DestinationLayout::contiguous(storage.data(), shape, 2);
  EXPECT_EQ(layout.rank, 3u);
  EXPECT_EQ(layout.byte_strides[0], 40);
  EXPECT_EQ(layout.byte_strides[1], 10);
  EXPECT_EQ(layout.byte_strides[2], 2);
  Extents offset{1, 2, 3};
  EXPECT_EQ(layout.address_of(offset) - storage.data(), 40 + 20 + 6);
}

TEST(Layout, BoxCoversAndContiguity) {
  std::vector<std::uint64_t> shape{4, 6};
  auto dest = DestinationLayout::contiguous(nullptr, shape, 1);
  EXPECT_TRUE(make_box({2, 6}, {0, 0}, {2, 6}, {2, 0}).covers_chunk());
  EXPECT_FALSE(make_box({2, 6}, {0, 1}, {2, 5}, {0, 0}).covers_chunk());
  EXPECT_TRUE(dest.box_is_contiguous(make_box({2, 6}, {0, 0}, {2, 6}, {2, 0})));   // whole rows
  EXPECT_FALSE(dest.box_is_contiguous(make_box({2, 3}, {0, 0}, {2, 3}, {0, 0})));  // half rows
  EXPECT_TRUE(dest.box_is_contiguous(make_box({1, 3}, {0, 0}, {1, 3}, {1, 3})));   // part of one row
  EXPECT_EQ(make_box({2, 3}, {0, 0}, {2, 3}, {0, 0}).num_elements(), 6u);
  EXPECT_EQ(make_box({2, 3}, {0, 0}, {0, 3}, {0, 0}).num_elements(), 0u);
}

TEST(Layout, CopyBoxIntoTheMiddleOfAContiguousDestination) {
  // Chunk 4x5; copy its [1:3, 2:5] to dest (6x7) at [2, 1].
  auto chunk = iota_chunk(20);
  std::vector<std::uint16_t> dest(42, 0xffff);
  std::vector<std::uint64_t> dest_shape{6, 7};
  auto layout = DestinationLayout::contiguous(reinterpret_cast<std::byte*>(dest.data()), dest_shape, 2);
  copy_box_to_host(reinterpret_cast<const std::byte*>(chunk.data()), make_box({4, 5}, {1, 2}, {2, 3}, {2, 1}), layout);
  for (std::size_t r = 0; r < 6; ++r)
    for (std::size_t c = 0; c < 7; ++c) {
      std::uint16_t want = 0xffff;
      if (r >= 2 && r < 4 && c >= 1 && c < 4) want = static_cast<std::uint16_t>((r - 2 + 1) * 5 + (c - 1 + 2));
      EXPECT_EQ(dest[r * 7 + c], want) << r << "," << c;
    }
}

TEST(Layout, CopyAndFillWithPaddedAndTransposedStrides) {
  // Destination 3x4 of uint16 stored column-major with a padded column: byte strides {2, 8}.
  auto chunk = iota_chunk(12);
  std::vector<std::uint16_t> storage(16, 0xeeee);
  DestinationLayout layout;
  layout.data = reinterpret_cast<std::byte*>(storage.data());
  layout.rank = 2;
  layout.shape[0] = 3;
  layout.shape[1] = 4;
  layout.byte_strides[0] = 2;
  layout.byte_strides[1] = 8;
  layout.element_size = 2;
  EXPECT_FALSE(layout.box_is_contiguous(make_box({3, 4}, {0, 0}, {3, 4}, {0, 0})));
  copy_box_to_host(reinterpret_cast<const std::byte*>(chunk.data()), make_box({3, 4}, {0, 0}, {3, 4}, {0, 0}), layout);
  for (std::size_t r = 0; r < 3; ++r)
    for (std::size_t c = 0; c < 4; ++c) EXPECT_EQ(storage[c * 4 + r], r * 4 + c);
  for (std::size_t c = 0; c < 4; ++c) EXPECT_EQ(storage[c * 4 + 3], 0xeeee);  // padding untouched
  std::uint16_t fill = 0x1234;
  fill_box_on_host(reinterpret_cast<const std::byte*>(&fill), make_box({3, 4}, {0, 0}, {2, 2}, {1, 1}), layout);
  EXPECT_EQ(storage[1 * 4 + 1], 0x1234);
  EXPECT_EQ(storage[2 * 4 + 2], 0x1234);
  EXPECT_EQ(storage[1 * 4 + 2], 0x1234);
  EXPECT_EQ(storage[0 * 4 + 0], 0);
  EXPECT_EQ(storage[3 * 4 + 2], 11);
  EXPECT_EQ(storage[1 * 4 + 3], 0xeeee);
}

TEST(Layout, FillZeroAndNonZeroPackedRows) {
  std::vector<std::uint32_t> dest(24, 7);
  std::vector<std::uint64_t> shape{2, 3, 4};
  auto layout = DestinationLayout::contiguous(reinterpret_cast<std::byte*>(dest.data()), shape, 4);
  std::uint32_t zero = 0, nine = 9;
  fill_box_on_host(reinterpret_cast<const std::byte*>(&zero), make_box({2, 3, 4}, {0, 0, 0}, {1, 2, 3}, {1, 1, 1}), layout);
  fill_box_on_host(reinterpret_cast<const std::byte*>(&nine), make_box({2, 3, 4}, {0, 0, 0}, {1, 1, 4}, {0, 2, 0}), layout);
  for (std::size_t i = 0; i < 24; ++i) {
    std::size_t a = i / 12, b = (i / 4) % 3, c = i % 4;
    std::uint32_t want = 7;
    if (a == 1 && b >= 1 && c >= 1) want = 0;
    if (a == 0 && b == 2) want = 9;
    EXPECT_EQ(dest[i], want) << i;
  }
}

TEST(Layout, ZeroDimensionalAndEmptyBoxes) {
  double value = 2.5, out = 0;
  DestinationLayout layout = DestinationLayout::contiguous(reinterpret_cast<std::byte*>(&out), {}, 8);
  ChunkBox scalar;
  copy_box_to_host(reinterpret_cast<const std::byte*>(&value), scalar, layout);
  EXPECT_EQ(out, 2.5);
  double fill = -1;
  fill_box_on_host(reinterpret_cast<const std::byte*>(&fill), scalar, layout);
  EXPECT_EQ(out, -1);
  // An empty box touches nothing (the destination pointer is not even valid).
  std::vector<std::uint64_t> shape{0, 4};
  auto empty = DestinationLayout::contiguous(nullptr, shape, 8);
  copy_box_to_host(reinterpret_cast<const std::byte*>(&value), make_box({2, 4}, {0, 0}, {0, 4}, {0, 0}), empty);
  fill_box_on_host(reinterpret_cast<const std::byte*>(&fill), make_box({2, 4}, {0, 0}, {0, 4}, {0, 0}), empty);
}

}  // namespace
}  // namespace zarrdirect

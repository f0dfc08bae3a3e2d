#include "engine/host_sink.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "test_support.hpp"
#include "zarrdirect/error.hpp"

namespace zarrdirect {
namespace {

using Shape = std::vector<std::uint64_t>;

std::span<const std::byte> fill_bytes(const std::uint16_t& value) {
  return std::as_bytes(std::span<const std::uint16_t, 1>(&value, 1));
}

bool page_aligned(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 4096 == 0; }

bool overlap(std::span<std::byte> a, std::span<std::byte> b) {
  return a.data() < b.data() + b.size() && b.data() < a.data() + a.size();
}

// A 5 x 6 uint16 destination whose rows are 8 elements apart (2 padding elements per row), the
// way a caller's view into a wider array looks.
struct PaddedDestination {
  static constexpr std::uint16_t kUntouched = 0xaaaa;
  std::vector<std::uint16_t> memory = std::vector<std::uint16_t>(5 * 8, kUntouched);
  DestinationLayout layout() {
    DestinationLayout layout;
    layout.data = reinterpret_cast<std::byte*>(memory.data());
    layout.rank = 2;
    layout.shape[0] = 5;
    layout.shape[1] = 6;
    layout.byte_strides[0] = 8 * 2;
    layout.byte_strides[1] = 2;
    layout.element_size = 2;
    return layout;
  }
  std::uint16_t at(std::size_t row, std::size_t column) const { return memory[row * 8 + column]; }
};

TEST(HostSink, StagingIsPerWorkerAndGrowsOnlyForALargerChunk) {
  std::vector<std::uint8_t> dest(16);
  const Shape shape{16};
  const std::uint16_t fill = 0;
  HostSink sink(DestinationLayout::contiguous(reinterpret_cast<std::byte*>(dest.data()), shape, 1), fill_bytes(fill));
  sink.start(3, 100);

  auto first = sink.staging(0, 100);
  ASSERT_GE(first.size(), 100u);
  EXPECT_TRUE(page_aligned(first.data()));
  std::memset(first.data(), 1, first.size());  // every byte handed out is usable
  auto other = sink.staging(1, 100);
  ASSERT_GE(other.size(), 100u);
  EXPECT_FALSE(overlap(first, other)) << "two workers share staging memory";

  // Smaller and equal requests reuse the worker's buffer.
  EXPECT_EQ(sink.staging(0, 1).data(), first.data());
  EXPECT_EQ(sink.staging(0, first.size()).data(), first.data());
  EXPECT_EQ(sink.staging(0, first.size()).size(), first.size());

  // One byte more than it holds: a larger buffer, kept for later small requests.
  auto grown = sink.staging(0, first.size() + 1);
  ASSERT_GE(grown.size(), first.size() + 1);
  EXPECT_TRUE(page_aligned(grown.data()));
  EXPECT_EQ(sink.staging(0, 10).data(), grown.data());
  EXPECT_EQ(sink.staging(0, 10).size(), grown.size());
  // Worker 1 kept its own buffer throughout.
  EXPECT_EQ(sink.staging(1, 100).data(), other.data());
  EXPECT_FALSE(overlap(grown, other));
  sink.finish();
}

TEST(HostSink, StagingThatCannotBeAllocatedIsAnIoErrorAndKeepsTheOldBuffer) {
  std::vector<std::uint8_t> dest(4);
  const Shape shape{4};
  const std::uint16_t fill = 0;
  HostSink sink(DestinationLayout::contiguous(reinterpret_cast<std::byte*>(dest.data()), shape, 1), fill_bytes(fill));
  sink.start(1, 64);
  auto before = sink.staging(0, 64);
  for (std::size_t nbytes : {std::size_t{1} << 62, std::numeric_limits<std::size_t>::max(),
                             std::numeric_limits<std::size_t>::max() - 4096}) {
    SCOPED_TRACE(nbytes);
    try {
      auto huge = sink.staging(0, nbytes);
      ADD_FAILURE() << "got " << huge.size() << " bytes for a request of " << nbytes;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::io) << e.what();
      EXPECT_NE(std::string(e.what()).find(std::to_string(nbytes)), std::string::npos) << e.what();
    }
  }
  // The failure left the worker's buffer in place.
  EXPECT_EQ(sink.staging(0, 64).data(), before.data());
}

TEST(HostSink, PlaceCopiesTheBoxIntoAStridedDestinationAndNothingElse) {
  PaddedDestination dest;
  const std::uint16_t fill = 0;
  HostSink sink(dest.layout(), fill_bytes(fill));
  sink.start(1, 24);
  // A 3 x 4 chunk holding 100 * row + column; its lower-right 2 x 3 part lands at (3, 2).
  auto staging = sink.staging(0, 24);
  std::vector<std::uint16_t> chunk;
  for (std::uint16_t r = 0; r < 3; ++r)
    for (std::uint16_t c = 0; c < 4; ++c) chunk.push_back(static_cast<std::uint16_t>(100 * r + c));
  std::memcpy(staging.data(), chunk.data(), 24);
  sink.place(0, staging.first(24), test::make_box({3, 4}, {1, 1}, {2, 3}, {3, 2}));
  for (std::size_t r = 0; r < 5; ++r)
    for (std::size_t c = 0; c < 8; ++c) {
      const bool inside = r >= 3 && r < 5 && c >= 2 && c < 5;
      const auto expected = inside ? static_cast<std::uint16_t>(100 * (r - 3 + 1) + (c - 2 + 1))
                                   : PaddedDestination::kUntouched;
      EXPECT_EQ(dest.at(r, c), expected) << "row " << r << " column " << c;
    }
}

TEST(HostSink, FillWritesItsOwnCopyOfTheFillValueOverTheBoxOnly) {
  PaddedDestination dest;
  std::optional<HostSink> sink;
  {
    // The caller's fill value is gone by the time chunks are filled.
    std::vector<std::byte> fill(2);
    const std::uint16_t value = 0x1234;
    std::memcpy(fill.data(), &value, 2);
    sink.emplace(dest.layout(), fill);
    std::fill(fill.begin(), fill.end(), std::byte{0});
  }
  sink->start(2, 0);
  sink->fill(1, test::make_box({2, 2}, {0, 0}, {2, 2}, {0, 4}));   // top-right corner
  sink->fill(0, test::make_box({4, 4}, {3, 0}, {1, 1}, {4, 0}));   // one element, bottom-left
  for (std::size_t r = 0; r < 5; ++r)
    for (std::size_t c = 0; c < 8; ++c) {
      const bool filled = (r < 2 && c >= 4 && c < 6) || (r == 4 && c == 0);
      EXPECT_EQ(dest.at(r, c), filled ? 0x1234 : PaddedDestination::kUntouched) << "row " << r << " column " << c;
    }
}

TEST(HostSink, DirectTargetOnlyForWholeChunksThatLandContiguously) {
  std::vector<std::uint16_t> memory(5 * 6, 0);
  const Shape shape{5, 6};
  const std::uint16_t fill = 0;
  auto layout = DestinationLayout::contiguous(reinterpret_cast<std::byte*>(memory.data()), shape, 2);
  HostSink sink(layout, fill_bytes(fill));
  sink.start(1, 0);

  // Full-width rows: one run of bytes starting at the box's place.
  auto rows = sink.direct_target(test::make_box({2, 6}, {0, 0}, {2, 6}, {1, 0}));
  EXPECT_EQ(rows.data(), reinterpret_cast<std::byte*>(&memory[6]));
  EXPECT_EQ(rows.size(), 2u * 6u * 2u);
  // A single-row chunk is contiguous even when narrower than the destination.
  auto one_row = sink.direct_target(test::make_box({1, 4}, {0, 0}, {1, 4}, {2, 1}));
  EXPECT_EQ(one_row.data(), reinterpret_cast<std::byte*>(&memory[2 * 6 + 1]));
  EXPECT_EQ(one_row.size(), 8u);
  // What is written there is the destination.
  std::vector<std::uint16_t> values{1, 2, 3, 4};
  std::memcpy(one_row.data(), values.data(), 8);
  EXPECT_EQ(memory[2 * 6 + 1], 1);
  EXPECT_EQ(memory[2 * 6 + 4], 4);
  EXPECT_EQ(memory[2 * 6 + 5], 0);

  // Narrower than the destination over several rows: not one run.
  EXPECT_TRUE(sink.direct_target(test::make_box({2, 4}, {0, 0}, {2, 4}, {0, 0})).empty());
  // Only part of the chunk is wanted (an edge chunk cut by the region).
  EXPECT_TRUE(sink.direct_target(test::make_box({3, 6}, {0, 0}, {2, 6}, {3, 0})).empty());
  EXPECT_TRUE(sink.direct_target(test::make_box({2, 6}, {1, 0}, {1, 6}, {0, 0})).empty());

  // Padded rows: whole rows of the view still are not one run.
  PaddedDestination padded;
  HostSink padded_sink(padded.layout(), fill_bytes(fill));
  padded_sink.start(1, 0);
  EXPECT_TRUE(padded_sink.direct_target(test::make_box({2, 6}, {0, 0}, {2, 6}, {0, 0})).empty());
  auto padded_row = padded_sink.direct_target(test::make_box({1, 6}, {0, 0}, {1, 6}, {3, 0}));
  EXPECT_EQ(padded_row.data(), reinterpret_cast<std::byte*>(&padded.memory[3 * 8]));
  EXPECT_EQ(padded_row.size(), 12u);
}

TEST(HostSink, StagingPlaceFillAndDirectTargets) {
  std::vector<std::uint8_t> dest(8 * 8, 0);
  std::vector<std::uint64_t> shape{8, 8};
  auto layout = DestinationLayout::contiguous(reinterpret_cast<std::byte*>(dest.data()), shape, 1);
  std::vector<std::byte> fill{std::byte{5}};
  HostSink sink(layout, fill);
  EXPECT_EQ(sink.name(), "host");
  sink.start(2, 16);
  auto staging = sink.staging(1, 16);
  EXPECT_GE(staging.size(), 16u);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(staging.data()) % 4096, 0u);
  EXPECT_EQ(sink.staging(1, 8).data(), staging.data());  // reused, not reallocated
  for (std::size_t i = 0; i < 16; ++i) staging[i] = std::byte(i + 100);
  sink.place(1, staging.first(16), test::make_box({4, 4}, {0, 0}, {4, 4}, {4, 4}));
  sink.fill(0, test::make_box({4, 4}, {0, 0}, {4, 4}, {0, 0}));
  EXPECT_EQ(dest[0], 5);
  EXPECT_EQ(dest[3 * 8 + 3], 5);
  EXPECT_EQ(dest[4 * 8 + 4], 100);
  EXPECT_EQ(dest[7 * 8 + 7], 115);
  EXPECT_EQ(dest[4 * 8 + 3], 0);
  // Whole rows land contiguously: a direct target; a 4x4 box inside 8x8 does not.
  auto direct = sink.direct_target(test::make_box({2, 8}, {0, 0}, {2, 8}, {2, 0}));
  EXPECT_EQ(direct.data(), reinterpret_cast<std::byte*>(dest.data()) + 16);
  EXPECT_EQ(direct.size(), 16u);
  EXPECT_TRUE(sink.direct_target(test::make_box({4, 4}, {0, 0}, {4, 4}, {0, 0})).empty());
  EXPECT_TRUE(sink.direct_target(test::make_box({4, 8}, {0, 0}, {2, 8}, {0, 0})).empty());  // part of a chunk
  sink.finish();
}

}  // namespace
}  // namespace zarrdirect

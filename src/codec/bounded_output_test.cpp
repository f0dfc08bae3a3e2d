#include "codec/bounded_output.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>

namespace zarrdirect::codec {
namespace {

constexpr std::size_t kKiB = 1024;

std::byte pattern(std::size_t i) { return static_cast<std::byte>(i * 7 + 3); }

// Plays a decoder producing `total` bytes in pieces of at most `step`, as inflate does: it fills
// what free_space() offers, commits it, and stops once done or once the output is exceeded.
void produce(BoundedOutput& output, std::size_t total, std::size_t step) {
  std::size_t written = 0;
  while (written < total && !output.exceeded()) {
    MutableByteSpan space = output.free_space();
    ASSERT_FALSE(space.empty()) << "after " << written << " bytes";
    const std::size_t count = std::min({space.size(), step, total - written});
    for (std::size_t i = 0; i < count; ++i) space[i] = pattern(written + i);
    output.commit(count);
    written += count;
  }
}

TEST(BoundedOutput, FirstAllocationFollowsTheInputSize) {
  ByteBuffer buffer;
  // Tiny inputs start at 64 KiB rather than growing one small step at a time.
  BoundedOutput tiny(buffer, 1 << 30, 10);
  EXPECT_EQ(buffer.size(), 64 * kKiB);
  // Larger inputs start at four times their size.
  BoundedOutput larger(buffer, 1 << 30, 100 * kKiB);
  EXPECT_EQ(buffer.size(), 400 * kKiB);
  // Never past limit + 1, whatever the input.
  BoundedOutput capped(buffer, 1000, 100 * kKiB);
  EXPECT_EQ(buffer.size(), 1001u);
  BoundedOutput small_limit(buffer, 100, 1);
  EXPECT_EQ(buffer.size(), 101u);
  EXPECT_EQ(small_limit.limit(), 100u);
  EXPECT_EQ(small_limit.produced(), 0u);
  EXPECT_FALSE(small_limit.exceeded());
}

TEST(BoundedOutput, FreeSpaceFollowsTheBytesProduced) {
  ByteBuffer buffer;
  BoundedOutput output(buffer, 1 << 20, 10);
  MutableByteSpan first = output.free_space();
  EXPECT_EQ(first.data(), buffer.data());
  EXPECT_EQ(first.size(), buffer.size());
  output.commit(1000);
  MutableByteSpan rest = output.free_space();
  EXPECT_EQ(rest.data(), buffer.data() + 1000);
  EXPECT_EQ(rest.size(), buffer.size() - 1000);
  EXPECT_EQ(output.produced(), 1000u);
}

TEST(BoundedOutput, GrowsKeepingWhatWasProducedAndFinishTrims) {
  ByteBuffer buffer;
  BoundedOutput output(buffer, 10'000'000, 100);
  const std::size_t total = 3'000'017;  // many times the first 64 KiB
  produce(output, total, 50'000);
  EXPECT_FALSE(output.exceeded());
  EXPECT_EQ(output.produced(), total);
  EXPECT_LE(buffer.size(), 10'000'001u);
  output.finish();
  ASSERT_EQ(buffer.size(), total);
  for (std::size_t i = 0; i < total; ++i)
    if (buffer[i] != pattern(i)) FAIL() << "byte " << i << " changed while the buffer grew";
}

TEST(BoundedOutput, OutputOfExactlyTheLimitIsNotExceeded) {
  ByteBuffer buffer;
  BoundedOutput output(buffer, 200'000, 10);
  produce(output, 200'000, 30'000);
  EXPECT_FALSE(output.exceeded());
  EXPECT_EQ(output.produced(), 200'000u);
  // The one byte of room left is what proves a longer stream too long.
  MutableByteSpan space = output.free_space();
  EXPECT_EQ(space.size(), 1u);
  output.finish();
  EXPECT_EQ(buffer.size(), 200'000u);
}

TEST(BoundedOutput, OneByteMoreThanTheLimitIsExceededAndTheBufferStopsGrowing) {
  ByteBuffer buffer;
  const std::uint64_t limit = 300'000;
  BoundedOutput output(buffer, limit, 10);
  // The decoder would produce 100 MB; the buffer never grows past limit + 1 bytes.
  produce(output, 100'000'000, 65'536);
  EXPECT_TRUE(output.exceeded());
  EXPECT_EQ(output.produced(), limit + 1);
  EXPECT_EQ(buffer.size(), limit + 1);
}

TEST(BoundedOutput, ZeroLimit) {
  ByteBuffer buffer;
  BoundedOutput output(buffer, 0, 1000);
  EXPECT_EQ(output.free_space().size(), 1u);
  EXPECT_FALSE(output.exceeded());
  output.commit(1);
  EXPECT_TRUE(output.exceeded());
  // An empty stream finishes as an empty buffer.
  BoundedOutput empty(buffer, 0, 0);
  empty.finish();
  EXPECT_TRUE(buffer.empty());
}

TEST(BoundedOutput, HugeLimitsAndInputsDoNotOverflow) {
  // A limit beyond memory sizes and an input whose expected output would overflow size_t: the
  // first allocation is sized from the input, not the limit.
  ByteBuffer buffer;
  BoundedOutput output(buffer, std::numeric_limits<std::uint64_t>::max(), 1000);
  EXPECT_EQ(buffer.size(), 64 * kKiB);
  EXPECT_FALSE(output.exceeded());
  output.commit(buffer.size());
  EXPECT_EQ(output.free_space().size(), 64 * kKiB);  // doubled
  EXPECT_EQ(buffer.size(), 128 * kKiB);
  // Four times this input would wrap around: the first size is the ceiling, here limit + 1.
  ByteBuffer other;
  BoundedOutput wrapped(other, 5000, std::numeric_limits<std::size_t>::max() / 2);
  EXPECT_EQ(other.size(), 5001u);
}

TEST(BoundedOutput, ReusesTheCallersBuffer) {
  // The scratch buffer keeps its capacity from chunk to chunk: no reallocation for the second.
  ByteBuffer buffer;
  {
    BoundedOutput output(buffer, 1 << 20, 1000);
    produce(output, 500'000, 100'000);
    output.finish();
  }
  const std::byte* storage = buffer.data();
  const std::size_t capacity = buffer.capacity();
  BoundedOutput again(buffer, 1 << 20, 1000);
  produce(again, 400'000, 100'000);
  again.finish();
  EXPECT_EQ(buffer.size(), 400'000u);
  EXPECT_EQ(buffer.data(), storage);
  EXPECT_EQ(buffer.capacity(), capacity);
  EXPECT_EQ(buffer[399'999], pattern(399'999));
}

}  // namespace
}  // namespace zarrdirect::codec

// chunk_span_of (device_placer.hpp): the bytes of a chunk the device path stages for its boxes.
#include <gtest/gtest.h>

#include <vector>

#include "engine/device_placer.hpp"

namespace zarrdirect {
namespace {

TEST(ChunkSpan, CoversTheBoxesOfAChunkFromFirstToLastElement) {
  ManyBox a;
  a.box.rank = 2;
  a.box.chunk_shape = {10, 8};
  a.box.offset_in_chunk = {2, 3};
  a.box.extent = {3, 2};
  ManyBox b = a;
  b.box.offset_in_chunk = {1, 7};
  b.box.extent = {1, 1};
  ManyBox empty = a;
  empty.box.extent = {0, 4};
  const std::vector<ManyBox> one = {a};
  EXPECT_EQ(chunk_span_of(one, 4).first, (2u * 8 + 3) * 4);
  EXPECT_EQ(chunk_span_of(one, 4).nbytes, ((4u * 8 + 4) - (2 * 8 + 3) + 1) * 4);
  const std::vector<ManyBox> two = {a, b, empty};
  EXPECT_EQ(chunk_span_of(two, 1).first, 1u * 8 + 7);
  EXPECT_EQ(chunk_span_of(two, 1).nbytes, (4u * 8 + 4) - (1 * 8 + 7) + 1);
  const std::vector<ManyBox> none = {empty};
  EXPECT_EQ(chunk_span_of(none, 2).nbytes, 0u);
}

TEST(ChunkSpan, AZeroDimensionalChunkIsOneElement) {
  ManyBox scalar;  // rank 0: one element
  const std::vector<ManyBox> boxes = {scalar};
  EXPECT_EQ(chunk_span_of(boxes, 8).first, 0u);
  EXPECT_EQ(chunk_span_of(boxes, 8).nbytes, 8u);
}

}  // namespace
}  // namespace zarrdirect

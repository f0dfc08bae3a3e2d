#include "engine/inner_batch.hpp"

#include <gtest/gtest.h>

namespace zarrdirect {
namespace {

TEST(InnerBatch, RawInnerChunksTakeSeveralMiBPerTask) {
  // 64 KiB inner chunks (32^3 uint16), many of them: 4 MiB per task.
  EXPECT_EQ(inner_chunks_per_task(1u << 20, 16, false, true, 64 << 10), 64u);
  // 1 KiB ones: 4096 per task.
  EXPECT_EQ(inner_chunks_per_task(1u << 24, 16, false, true, 1 << 10), 4096u);
  // Chunks larger than the run: still 8 per task, as compressed ones.
  EXPECT_EQ(inner_chunks_per_task(1u << 20, 16, false, true, 8 << 20), 8u);
}

TEST(InnerBatch, CompressedInnerChunksKeepSmallTasks) {
  EXPECT_EQ(inner_chunks_per_task(1u << 20, 16, false, false, 64 << 10), 8u);
}

TEST(InnerBatch, SmallRegionsSpreadOverEveryWorker) {
  // 256 inner chunks, 16 workers: 4 per task, 64 tasks.
  EXPECT_EQ(inner_chunks_per_task(256, 16, false, true, 64 << 10), 4u);
  EXPECT_EQ(inner_chunks_per_task(3, 16, false, true, 64 << 10), 1u);
  EXPECT_EQ(inner_chunks_per_task(0, 16, false, false, 64 << 10), 1u);
}

TEST(InnerBatch, RemoteStoresMergeUpToSixtyFour) {
  EXPECT_EQ(inner_chunks_per_task(1u << 20, 8, true, true, 64 << 10), 64u);
  EXPECT_EQ(inner_chunks_per_task(80, 8, true, false, 64 << 10), 10u);
}

TEST(InnerBatch, ZeroWorkersOrBytesAreNoDivisionByZero) {
  EXPECT_EQ(inner_chunks_per_task(100, 0, false, true, 0), 25u);
}

}  // namespace
}  // namespace zarrdirect

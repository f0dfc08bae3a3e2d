// The host-built blosc job tables: run with the portable decoders (as the kernels run them), the
// jobs of any frame rebuild c-blosc's bytes; the jobs cover each output byte exactly once and stay
// inside their frame; a frame whose stream sizes are damaged lists no jobs at all.
#include "cuda/blosc_gpu_jobs.hpp"

#include <gtest/gtest.h>

#include <blosc.h>

#include <cstdint>
#include <random>
#include <vector>

namespace zarrdirect::cuda {
namespace {

namespace portable = codec::portable;
using Bytes = std::vector<std::uint8_t>;

Bytes signal(std::size_t n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  Bytes out(n);
  for (std::size_t i = 0; i < n; ++i) {
    const auto sample = static_cast<std::uint32_t>(1000 + (i / 64) % 300 + rng() % 8);
    out[i] = static_cast<std::uint8_t>(i % 2 == 0 ? sample & 0xff : sample >> 8);
  }
  return out;
}

Bytes compress(const Bytes& data, const char* cname, int clevel, int shuffle, std::size_t typesize,
               std::size_t blocksize) {
  Bytes out(data.size() + BLOSC_MAX_OVERHEAD);
  const int n = blosc_compress_ctx(clevel, shuffle, typesize, data.size(), data.data(), out.data(), out.size(), cname,
                                   blocksize, 1);
  EXPECT_GT(n, 0);
  out.resize(static_cast<std::size_t>(n > 0 ? n : 0));
  return out;
}

// Builds the jobs of `frame` placed at src_at in a source buffer and dst_at in the output (so that
// offsets are exercised), runs them on the host and checks the bytes and the coverage.
void expect_jobs_rebuild(const Bytes& data, const Bytes& frame) {
  constexpr std::size_t src_at = 48;
  constexpr std::size_t dst_at = 80;
  constexpr std::uint64_t scratch_at = 32;
  portable::BloscFrame plan;
  ASSERT_EQ(portable::blosc_plan(frame.data(), frame.size(), data.size(), plan), portable::DecodeStatus::ok);
  BloscGpuJobs jobs;
  std::uint64_t scratch_end = scratch_at;
  ASSERT_EQ(append_blosc_jobs(plan, frame, src_at, dst_at, scratch_end, jobs), portable::DecodeStatus::ok);
  EXPECT_GE(scratch_end - scratch_at, std::uint64_t{plan.scratch_size()} * jobs.unshuffles.size());

  Bytes src(src_at, 0x11);
  src.insert(src.end(), frame.begin(), frame.end());
  Bytes dst(dst_at + data.size() + 64, 0xab);
  Bytes scratch(scratch_end + 64, 0);
  std::vector<portable::DecodeStatus> statuses;
  run_blosc_jobs_on_host(jobs, src.data(), dst.data(), scratch.data(), statuses);
  for (const auto status : statuses) ASSERT_EQ(status, portable::DecodeStatus::ok) << portable::describe(status);
  EXPECT_TRUE(std::equal(data.begin(), data.end(), dst.begin() + dst_at));
  for (std::size_t k = 0; k < dst_at; ++k) ASSERT_EQ(dst[k], 0xab);
  for (std::size_t k = dst_at + data.size(); k < dst.size(); ++k) ASSERT_EQ(dst[k], 0xab);

  // Each output (or scratch) byte is written by exactly one stream, each unshuffled block lands
  // once, and every stream reads inside the frame.
  std::vector<int> out_writes(dst.size()), scratch_writes(scratch.size());
  for (const GpuBloscStreamJob& job : jobs.streams) {
    ASSERT_GE(job.src_offset, src_at);
    ASSERT_LE(job.src_offset + job.src_size, src_at + plan.cbytes);
    auto& writes = job.to_scratch ? scratch_writes : out_writes;
    ASSERT_LE(job.dst_offset + job.dst_size, writes.size());
    for (std::uint64_t k = 0; k < job.dst_size; ++k) ++writes[job.dst_offset + k];
  }
  for (const GpuUnshuffleJob& job : jobs.unshuffles) {
    for (std::uint64_t k = 0; k < job.size; ++k) ASSERT_EQ(scratch_writes[job.scratch_offset + k], 1);
    for (std::uint64_t k = 0; k < job.size; ++k) ++out_writes[job.dst_offset + k];
  }
  for (std::size_t k = 0; k < out_writes.size(); ++k)
    ASSERT_EQ(out_writes[k], k >= dst_at && k < dst_at + data.size() ? 1 : 0) << "output byte " << k;
}

TEST(BloscGpuJobs, RebuildEveryShuffleTypesizeAndBlockLayout) {
  for (const char* cname : {"lz4", "lz4hc"})
    for (const int shuffle : {BLOSC_NOSHUFFLE, BLOSC_SHUFFLE, BLOSC_BITSHUFFLE})
      for (const std::size_t typesize : {1u, 2u, 3u, 4u, 8u, 16u})
        for (const std::size_t n : {std::size_t{1}, std::size_t{1000}, std::size_t{200000 + 24}})
          for (const std::size_t blocksize : {std::size_t{0}, std::size_t{8192}}) {
            SCOPED_TRACE(testing::Message() << cname << " shuffle " << shuffle << " typesize " << typesize << " n "
                                            << n << " blocksize " << blocksize);
            const Bytes data = signal(n, static_cast<std::uint32_t>(n + typesize));
            expect_jobs_rebuild(data, compress(data, cname, 5, shuffle, typesize, blocksize));
          }
}

TEST(BloscGpuJobs, SplitRawAndMemcpyedFrames) {
  const Bytes data = signal(300000 + 8, 3);
  for (const int mode : {BLOSC_NEVER_SPLIT, BLOSC_ALWAYS_SPLIT}) {
    blosc_set_splitmode(mode);
    for (const int shuffle : {BLOSC_NOSHUFFLE, BLOSC_SHUFFLE, BLOSC_BITSHUFFLE}) {
      SCOPED_TRACE(testing::Message() << "split mode " << mode << " shuffle " << shuffle);
      const Bytes frame = compress(data, "lz4", 5, shuffle, 4, 16384);
      expect_jobs_rebuild(data, frame);
      portable::BloscFrame plan;
      ASSERT_EQ(portable::blosc_plan(frame.data(), frame.size(), data.size(), plan), portable::DecodeStatus::ok);
      BloscGpuJobs jobs;
      std::uint64_t scratch_end = 0;
      ASSERT_EQ(append_blosc_jobs(plan, frame, 0, 0, scratch_end, jobs), portable::DecodeStatus::ok);
      // Split frames list a stream per byte of the type for every full block.
      const std::size_t full_blocks = data.size() / plan.blocksize;
      if (mode == BLOSC_ALWAYS_SPLIT) {
        EXPECT_GE(jobs.streams.size(), 4 * full_blocks);
      } else {
        EXPECT_EQ(jobs.streams.size(), plan.nblocks);
      }
    }
  }
  blosc_set_splitmode(BLOSC_FORWARD_COMPAT_SPLIT);  // c-blosc's default, for the tests that follow
  // Noise: streams stored raw; clevel 0: the whole frame memcpyed (one copy job per block).
  std::mt19937 rng(4);
  Bytes noise(100000 + 3);
  for (auto& b : noise) b = static_cast<std::uint8_t>(rng());
  expect_jobs_rebuild(noise, compress(noise, "lz4", 5, BLOSC_SHUFFLE, 4, 8192));
  const Bytes copied = compress(data, "lz4", 0, BLOSC_SHUFFLE, 2, 0);
  ASSERT_NE(copied[2] & BLOSC_MEMCPYED, 0);
  expect_jobs_rebuild(data, copied);
}

TEST(BloscGpuJobs, DamagedStreamSizesListNothing) {
  const Bytes data = signal(400000, 5);
  const Bytes good = compress(data, "lz4", 5, BLOSC_SHUFFLE, 2, 8192);
  portable::BloscFrame plan;
  ASSERT_EQ(portable::blosc_plan(good.data(), good.size(), data.size(), plan), portable::DecodeStatus::ok);
  ASSERT_GT(plan.nblocks, 3u);
  // The last block's first stream claims more than the frame holds; a negative size; zero.
  const std::size_t last_start = portable::blosc_detail::read_le32(good.data() + 16 + 4 * (plan.nblocks - 1));
  for (const std::uint32_t bad_size : {0x10000000u, 0x80000000u, 0u}) {
    Bytes bad = good;
    for (int i = 0; i < 4; ++i) bad[last_start + static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(bad_size >> (8 * i));
    BloscGpuJobs jobs;
    jobs.streams.resize(3);  // jobs of earlier frames stay as they were
    std::uint64_t scratch_end = 64;
    EXPECT_NE(append_blosc_jobs(plan, bad, 0, 0, scratch_end, jobs), portable::DecodeStatus::ok);
    EXPECT_EQ(jobs.streams.size(), 3u);
    EXPECT_TRUE(jobs.unshuffles.empty());
    EXPECT_EQ(scratch_end, 64u);
  }
  // Fewer bytes than the frame's cbytes.
  BloscGpuJobs jobs;
  std::uint64_t scratch_end = 0;
  EXPECT_EQ(append_blosc_jobs(plan, std::span<const std::uint8_t>(good.data(), good.size() - 1), 0, 0, scratch_end, jobs),
            portable::DecodeStatus::truncated);
  EXPECT_TRUE(jobs.streams.empty());
}

}  // namespace
}  // namespace zarrdirect::cuda

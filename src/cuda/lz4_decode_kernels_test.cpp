// The batched GPU decoders give the CPU's answer (the same portable code compiled for the host)
// job by job: the same status, the same decoded bytes, and for damaged input no byte written
// outside the job's own output. Skips where no CUDA device is usable.
#include "cuda/lz4_decode_kernels.cuh"

#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <blosc.h>
#include <lz4.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "cuda/device_test_support.hpp"

#include "zarrdirect/array.hpp"

namespace zarrdirect::cuda {
namespace {

namespace portable = codec::portable;
using Bytes = std::vector<std::uint8_t>;

// Bytes left untouched between the jobs' outputs, to catch a write past a job's room.
constexpr std::size_t kGuard = 64;
constexpr std::uint8_t kGuardByte = 0xab;

using test::DeviceArray;

Bytes signal(std::size_t n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  Bytes out(n);
  for (std::size_t i = 0; i < n; ++i) {
    const auto sample = static_cast<std::uint32_t>(1000 + (i / 64) % 300 + rng() % 8);
    out[i] = static_cast<std::uint8_t>(i % 2 == 0 ? sample & 0xff : sample >> 8);
  }
  return out;
}

Bytes lz4_compress(const Bytes& data) {
  Bytes out(static_cast<std::size_t>(LZ4_compressBound(static_cast<int>(data.size()))));
  const int n = LZ4_compress_default(reinterpret_cast<const char*>(data.data()), reinterpret_cast<char*>(out.data()),
                                     static_cast<int>(data.size()), static_cast<int>(out.size()));
  EXPECT_GT(n, 0);
  out.resize(static_cast<std::size_t>(n));
  return out;
}

void damage(Bytes& bytes, std::mt19937& rng) {
  if (bytes.empty()) return;
  if (rng() % 2 == 0) {
    for (int f = 0; f < 3; ++f) bytes[rng() % bytes.size()] ^= static_cast<std::uint8_t>(1 + rng() % 255);
  } else {
    bytes.resize(rng() % bytes.size());
  }
}

TEST(GpuLz4Decode, BatchEqualsTheCpu) {
  REQUIRE_GPU();
  std::mt19937 rng(99);
  Bytes src;
  std::vector<GpuDecodeJob> jobs;
  std::size_t dst_size = kGuard;
  for (int i = 0; i < 600; ++i) {
    const std::size_t n = i % 50 == 0 ? 0 : 1 + rng() % 70000;
    Bytes data = i % 7 == 0 ? Bytes(n, static_cast<std::uint8_t>(i)) : signal(n, static_cast<std::uint32_t>(i));
    if (i % 11 == 0)
      for (auto& b : data) b = static_cast<std::uint8_t>(rng());
    Bytes block = lz4_compress(data);
    if (i % 3 == 0) damage(block, rng);
    GpuDecodeJob job;
    job.src_offset = src.size();
    job.src_size = block.size();
    job.dst_offset = dst_size;
    job.dst_capacity = i % 13 == 0 && n > 0 ? n - 1 : n;  // some with too little room
    src.insert(src.end(), block.begin(), block.end());
    dst_size += job.dst_capacity + kGuard;
    jobs.push_back(job);
  }
  // The CPU's answers, into the same layout.
  Bytes expected(dst_size, kGuardByte);
  std::vector<portable::DecodeOutcome> expected_outcomes;
  for (const GpuDecodeJob& job : jobs)
    expected_outcomes.push_back(portable::lz4_decode_block(src.data() + job.src_offset, job.src_size,
                                                           expected.data() + job.dst_offset, job.dst_capacity));

  const DeviceArray<std::uint8_t> device_src(src);
  const DeviceArray<std::uint8_t> device_dst(Bytes(dst_size, kGuardByte));
  const DeviceArray<GpuDecodeJob> device_jobs(jobs);
  const DeviceArray<portable::DecodeOutcome> device_outcomes(std::vector<portable::DecodeOutcome>(jobs.size()));
  ASSERT_EQ(launch_lz4_decode(device_jobs.get(), static_cast<std::uint32_t>(jobs.size()), device_src.get(),
                              device_dst.get(), device_outcomes.get(), nullptr),
            cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const auto outcomes = device_outcomes.to_host();
  const Bytes got = device_dst.to_host();
  int ok = 0;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    SCOPED_TRACE(testing::Message() << "job " << i);
    ASSERT_EQ(outcomes[i].status, expected_outcomes[i].status) << portable::describe(outcomes[i].status);
    const GpuDecodeJob& job = jobs[i];
    if (outcomes[i].status == portable::DecodeStatus::ok) {
      ++ok;
      ASSERT_EQ(outcomes[i].written, expected_outcomes[i].written);
      ASSERT_TRUE(std::equal(got.begin() + static_cast<std::ptrdiff_t>(job.dst_offset),
                             got.begin() + static_cast<std::ptrdiff_t>(job.dst_offset + outcomes[i].written),
                             expected.begin() + static_cast<std::ptrdiff_t>(job.dst_offset)));
    }
    // The guard after the job's room is untouched, whatever its input held.
    for (std::size_t k = 0; k < kGuard; ++k) ASSERT_EQ(got[job.dst_offset + job.dst_capacity + k], kGuardByte);
  }
  EXPECT_GT(ok, 300);
  EXPECT_LT(ok, 600);  // the damaged jobs did fail
  EXPECT_EQ(launch_lz4_decode(nullptr, 0, nullptr, nullptr, nullptr, nullptr), cudaSuccess);
}

TEST(GpuBloscDecode, BatchOfBlocksEqualsTheCpu) {
  REQUIRE_GPU();
  std::mt19937 rng(5);
  Bytes src;
  std::vector<GpuBloscBlockJob> jobs;
  std::size_t dst_size = kGuard;
  std::size_t scratch_size = 0;
  std::vector<bool> output(kGuard, false);  // which bytes of dst belong to some frame's output
  int frames = 0;
  for (const char* cname : {"lz4", "lz4hc"})
    for (const int shuffle : {BLOSC_NOSHUFFLE, BLOSC_SHUFFLE, BLOSC_BITSHUFFLE})
      for (const std::size_t typesize : {1u, 2u, 4u, 8u})
        for (const std::size_t n : {std::size_t{100}, std::size_t{5000 + 3}, std::size_t{300000 + 8}})
          for (const bool damaged : {false, true}) {
            const Bytes data = signal(n, static_cast<std::uint32_t>(n + typesize));
            Bytes frame(n + BLOSC_MAX_OVERHEAD);
            const int written = blosc_compress_ctx(damaged ? 9 : 5, shuffle, typesize, n, data.data(), frame.data(),
                                                   frame.size(), cname, n > 100000 ? 16384 : 0, 1);
            ASSERT_GT(written, 0);
            frame.resize(static_cast<std::size_t>(written));
            // Damage past the header and block starts, so that the plan still passes and the
            // blocks themselves meet the bad bytes.
            if (damaged && frame.size() > 200)
              for (int f = 0; f < 4; ++f) frame[200 + rng() % (frame.size() - 200)] ^= 0x5a;
            portable::BloscFrame plan;
            ASSERT_EQ(portable::blosc_plan(frame.data(), frame.size(), n, plan), portable::DecodeStatus::ok);
            for (std::uint32_t b = 0; b < plan.nblocks; ++b) {
              GpuBloscBlockJob job;
              job.frame = plan;
              job.frame_offset = src.size();
              job.dst_offset = dst_size;
              job.scratch_offset = scratch_size;
              job.block = b;
              scratch_size += plan.scratch_size();
              jobs.push_back(job);
            }
            src.insert(src.end(), frame.begin(), frame.end());
            dst_size += n + kGuard;
            output.insert(output.end(), n, true);
            output.insert(output.end(), kGuard, false);
            ++frames;
          }
  Bytes expected(dst_size, kGuardByte);
  Bytes host_scratch(scratch_size);
  std::vector<portable::DecodeStatus> expected_statuses;
  for (const GpuBloscBlockJob& job : jobs)
    expected_statuses.push_back(portable::blosc_decode_block(job.frame, src.data() + job.frame_offset, job.block,
                                                             expected.data() + job.dst_offset,
                                                             host_scratch.data() + job.scratch_offset));

  const DeviceArray<std::uint8_t> device_src(src);
  const DeviceArray<std::uint8_t> device_dst(Bytes(dst_size, kGuardByte));
  const DeviceArray<std::uint8_t> device_scratch{Bytes(scratch_size)};
  const DeviceArray<GpuBloscBlockJob> device_jobs(jobs);
  const DeviceArray<portable::DecodeStatus> device_statuses(std::vector<portable::DecodeStatus>(jobs.size()));
  ASSERT_EQ(launch_blosc_decode(device_jobs.get(), static_cast<std::uint32_t>(jobs.size()), device_src.get(),
                                device_dst.get(), device_scratch.get(), device_statuses.get(), nullptr),
            cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const auto statuses = device_statuses.to_host();
  const Bytes got = device_dst.to_host();
  int ok = 0;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    SCOPED_TRACE(testing::Message() << "job " << i);
    ASSERT_EQ(statuses[i], expected_statuses[i]) << portable::describe(statuses[i]);
    if (statuses[i] != portable::DecodeStatus::ok) continue;
    ++ok;
    const GpuBloscBlockJob& job = jobs[i];
    const std::uint64_t start = job.dst_offset + static_cast<std::uint64_t>(job.block) * job.frame.blocksize;
    const std::uint64_t size = job.frame.block_size(job.block);
    ASSERT_TRUE(std::equal(got.begin() + static_cast<std::ptrdiff_t>(start),
                           got.begin() + static_cast<std::ptrdiff_t>(start + size),
                           expected.begin() + static_cast<std::ptrdiff_t>(start)));
  }
  // No job wrote outside its frame's output, whatever its bytes held.
  ASSERT_EQ(output.size(), dst_size);
  for (std::size_t k = 0; k < dst_size; ++k)
    if (!output[k]) {
      ASSERT_EQ(got[k], kGuardByte) << "byte " << k << " written outside every frame's output";
    }
  EXPECT_GT(ok, static_cast<int>(jobs.size() / 2));
  EXPECT_LT(ok, static_cast<int>(jobs.size()));
  EXPECT_EQ(frames, 144);
}

}  // namespace
}  // namespace zarrdirect::cuda

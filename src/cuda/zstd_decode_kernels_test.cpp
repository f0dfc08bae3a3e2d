// The batched GPU zstd decoder gives the CPU's answer (the same portable code compiled for the
// host) frame by frame: the same status, the same decoded bytes, which are libzstd's, and for
// damaged frames no byte written outside the job's own output. Skips where no CUDA device is
// usable.
#include "cuda/zstd_decode_kernels.cuh"

#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <zstd.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
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

// Microscopy-like uint16 samples (kind 0), text-like words (1), runs (2), random bytes (3).
Bytes data_of_kind(int kind, std::size_t n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  Bytes out(n);
  if (kind == 0) {
    for (std::size_t i = 0; i < n; ++i) {
      const auto sample = static_cast<std::uint32_t>(1000 + (i / 64) % 300 + rng() % 8);
      out[i] = static_cast<std::uint8_t>(i % 2 == 0 ? sample & 0xff : sample >> 8);
    }
  } else if (kind == 1) {
    static const char* const kWords[] = {"zarr ", "chunk ", "array ", "of ", "bytes ", "frame\n", "GPU ", "the "};
    std::string text;
    while (text.size() < n) text += kWords[rng() % 8];
    std::copy(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(n), out.begin());
  } else if (kind == 2) {
    for (std::size_t i = 0; i < n;) {
      const std::size_t run = std::min<std::size_t>(n - i, 1 + rng() % 500);
      std::fill(out.begin() + static_cast<std::ptrdiff_t>(i), out.begin() + static_cast<std::ptrdiff_t>(i + run),
                static_cast<std::uint8_t>(rng() % 3));
      i += run;
    }
  } else {
    for (auto& b : out) b = static_cast<std::uint8_t>(rng());
  }
  return out;
}

Bytes compress(const Bytes& data, int level, bool checksum, bool content_size) {
  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, level);
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, checksum ? 1 : 0);
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_contentSizeFlag, content_size ? 1 : 0);
  Bytes out(ZSTD_compressBound(data.size()));
  const std::size_t n = ZSTD_compress2(cctx, out.data(), out.size(), data.data(), data.size());
  ZSTD_freeCCtx(cctx);
  EXPECT_FALSE(ZSTD_isError(n));
  out.resize(n);
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

TEST(GpuZstdDecode, BatchEqualsTheCpuAndLibzstd) {
  REQUIRE_GPU();
  std::mt19937 rng(17);
  Bytes src;
  std::vector<GpuDecodeJob> jobs;
  std::vector<Bytes> originals;
  std::vector<bool> damaged_job;
  std::size_t dst_size = kGuard;
  const int levels[] = {-3, 1, 3, 5, 9, 15, 19};
  for (int i = 0; i < 300; ++i) {
    const int kind = i % 4;
    const std::size_t n = i % 40 == 0 ? 0 : i % 10 == 0 ? 150000 + rng() % 200000 : 1 + rng() % 40000;
    const Bytes data = data_of_kind(kind, n, static_cast<std::uint32_t>(i));
    // Some frames without a content size: the GPU leaves those to libzstd (unsupported).
    Bytes frame = compress(data, levels[i % 7], i % 3 == 0, i % 29 != 5);
    const bool damaged = i % 4 == 3;
    if (damaged) damage(frame, rng);
    GpuDecodeJob job;
    job.src_offset = src.size();
    job.src_size = frame.size();
    job.dst_offset = dst_size;
    job.dst_capacity = i % 13 == 0 && n > 0 ? n - 1 : n;  // some with too little room
    src.insert(src.end(), frame.begin(), frame.end());
    dst_size += job.dst_capacity + kGuard;
    jobs.push_back(job);
    originals.push_back(data);
    damaged_job.push_back(damaged);
  }
  // The CPU's answers, into the same layout.
  Bytes expected(dst_size, kGuardByte);
  std::vector<portable::DecodeOutcome> expected_outcomes;
  auto workspace = std::make_unique<portable::ZstdWorkspace>();
  for (const GpuDecodeJob& job : jobs)
    expected_outcomes.push_back(portable::zstd_decode_frame(src.data() + job.src_offset, job.src_size,
                                                            expected.data() + job.dst_offset, job.dst_capacity,
                                                            *workspace));

  const DeviceArray<std::uint8_t> device_src(src);
  const DeviceArray<std::uint8_t> device_dst(Bytes(dst_size, kGuardByte));
  const DeviceArray<std::uint8_t> device_scratch(Bytes(jobs.size() * kZstdScratchPerJob));
  const DeviceArray<GpuDecodeJob> device_jobs(jobs);
  const DeviceArray<portable::DecodeOutcome> device_outcomes(std::vector<portable::DecodeOutcome>(jobs.size()));
  ASSERT_EQ(launch_zstd_decode(device_jobs.get(), static_cast<std::uint32_t>(jobs.size()), device_src.get(),
                               device_dst.get(), device_scratch.get(), device_outcomes.get(), nullptr),
            cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const auto outcomes = device_outcomes.to_host();
  const Bytes got = device_dst.to_host();
  int ok = 0;
  int unsupported = 0;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    SCOPED_TRACE(testing::Message() << "job " << i);
    ASSERT_EQ(outcomes[i].status, expected_outcomes[i].status) << portable::describe(outcomes[i].status);
    const GpuDecodeJob& job = jobs[i];
    if (outcomes[i].status == portable::DecodeStatus::unsupported) ++unsupported;
    if (outcomes[i].status == portable::DecodeStatus::ok) {
      ++ok;
      ASSERT_EQ(outcomes[i].written, expected_outcomes[i].written);
      const auto begin = got.begin() + static_cast<std::ptrdiff_t>(job.dst_offset);
      const auto end = begin + static_cast<std::ptrdiff_t>(outcomes[i].written);
      ASSERT_TRUE(std::equal(begin, end, expected.begin() + static_cast<std::ptrdiff_t>(job.dst_offset)));
      // And libzstd's bytes: the original data for an undamaged frame, libzstd's decoding otherwise.
      Bytes reference(job.dst_capacity);
      const std::size_t n = ZSTD_decompress(reference.data(), reference.size(), src.data() + job.src_offset,
                                            job.src_size);
      ASSERT_FALSE(ZSTD_isError(n));
      reference.resize(n);
      ASSERT_TRUE(std::equal(begin, end, reference.begin(), reference.end()));
      if (!damaged_job[i]) {
        ASSERT_TRUE(std::equal(begin, end, originals[i].begin(), originals[i].end()));
      }
    } else if (!damaged_job[i] && outcomes[i].status != portable::DecodeStatus::unsupported) {
      // An intact frame fails only for want of room.
      ASSERT_EQ(outcomes[i].status, portable::DecodeStatus::output_overflow);
      ASSERT_LT(job.dst_capacity, originals[i].size());
    }
    // The guard after the job's room is untouched, whatever its input held.
    for (std::size_t k = 0; k < kGuard; ++k) ASSERT_EQ(got[job.dst_offset + job.dst_capacity + k], kGuardByte);
  }
  EXPECT_GT(ok, 150);
  EXPECT_LT(ok, 300);  // the damaged and too-small jobs did fail
  EXPECT_GT(unsupported, 0);
  EXPECT_EQ(launch_zstd_decode(nullptr, 0, nullptr, nullptr, nullptr, nullptr, nullptr), cudaSuccess);
}

}  // namespace
}  // namespace zarrdirect::cuda

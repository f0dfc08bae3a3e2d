// The batched GPU zstd decoder gives the host run of the same jobs (the same portable code compiled
// for the CPU) frame by frame, with its own choices of lanes a Huffman stream and threads a frame
// and with each of 1, 8 and 32 lanes and 32 and 256 threads: the same status, the same decoded bytes, which are libzstd's, and for damaged frames no
// byte written outside a frame's own output. Skips where no CUDA device is usable.
#include "cuda/zstd_decode_kernels.cuh"

#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <zstd.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "codec/portable/zstd_test_data.hpp"
#include "cuda/device_test_support.hpp"
#include "cuda/zstd_gpu_jobs.hpp"

namespace zarrdirect::cuda {
namespace {

namespace portable = codec::portable;
using namespace portable::zstd_test;

// Bytes left untouched between the frames' outputs, to catch a write past a frame's room.
constexpr std::size_t kGuard = 64;
constexpr std::uint8_t kGuardByte = 0xab;

using test::DeviceArray;

void damage(Bytes& bytes, std::mt19937& rng) {
  if (bytes.empty()) return;
  if (rng() % 2 == 0) {
    for (int f = 0; f < 3; ++f) bytes[rng() % bytes.size()] ^= static_cast<std::uint8_t>(1 + rng() % 255);
  } else {
    bytes.resize(rng() % bytes.size());
  }
}

TEST(GpuZstdDecode, BatchEqualsTheHostRunAndLibzstd) {
  REQUIRE_GPU();
  std::mt19937 rng(17);
  Bytes src;
  ZstdGpuJobs jobs;
  struct Listed {
    std::uint64_t dst = 0;
    std::uint64_t capacity = 0;
    std::int64_t job = -1;  // index in jobs.frames, -1 when the listing refused it
    bool damaged = false;
    Bytes original;
    Bytes frame;
  };
  std::vector<Listed> listed;
  std::uint64_t dst_size = kGuard;
  std::uint64_t scratch_end = 0;
  const int levels[] = {-3, 1, 3, 5, 9, 15, 19};
  for (int i = 0; i < 300; ++i) {
    const std::size_t n = i % 40 == 0 ? 0 : i % 10 == 0 ? 150000 + rng() % 600000 : 1 + rng() % 40000;
    Listed frame_info;
    frame_info.original = data_of_kind(i % 6, n, static_cast<std::uint32_t>(i));
    portable::zstd_test::Settings settings;
    settings.level = levels[i % 7];
    settings.checksum = i % 3 == 0;
    Bytes frame = compress(frame_info.original, settings);
    frame_info.damaged = i % 4 == 3;
    if (frame_info.damaged) damage(frame, rng);
    frame_info.dst = dst_size;
    frame_info.capacity = i % 13 == 0 && n > 0 ? n - 1 : n;  // some with too little room
    const std::uint64_t src_at = src.size();
    src.insert(src.end(), frame.begin(), frame.end());
    frame_info.frame = frame;
    if (append_zstd_jobs(frame, src_at, frame_info.dst, frame_info.capacity, scratch_end, jobs) ==
        portable::DecodeStatus::ok)
      frame_info.job = static_cast<std::int64_t>(jobs.frames.size()) - 1;
    dst_size += frame_info.capacity + kGuard;
    listed.push_back(std::move(frame_info));
  }
  ASSERT_GT(jobs.frames.size(), 200u);
  // The host's answers, into the same layout.
  Bytes expected(dst_size, kGuardByte);
  Bytes host_scratch(scratch_end);
  std::vector<portable::DecodeOutcome> expected_outcomes;
  run_zstd_jobs_on_host(jobs, src.data(), expected.data(), host_scratch.data(), expected_outcomes);

  const DeviceArray<std::uint8_t> device_src(src);
  const DeviceArray<std::uint8_t> device_scratch(Bytes(std::max<std::uint64_t>(scratch_end, 1)));
  const DeviceArray<portable::ZstdBlockJob> device_blocks(jobs.blocks);
  const DeviceArray<portable::ZstdFrameJob> device_frames(jobs.frames);
  const auto block_count = static_cast<std::uint32_t>(jobs.blocks.size());
  const auto frame_count = static_cast<std::uint32_t>(jobs.frames.size());
  // lanes 0: launch_zstd_decode's own choices; then each number of lanes a Huffman stream with
  // each team a frame.
  struct Choice {
    std::uint32_t lanes;
    std::uint32_t team;
  };
  int ok = 0;
  for (const Choice choice : {Choice{0, 0}, Choice{1, 32}, Choice{8, 256}, Choice{32, 32}, Choice{32, 256}}) {
    const std::uint32_t lanes = choice.lanes;
    SCOPED_TRACE(testing::Message() << "lanes " << lanes << ", team " << choice.team);
    const DeviceArray<std::uint8_t> device_dst(Bytes(dst_size, kGuardByte));
    const DeviceArray<portable::DecodeOutcome> device_outcomes{std::vector<portable::DecodeOutcome>(frame_count)};
    if (lanes == 0) {
      ASSERT_EQ(launch_zstd_decode(device_blocks.get(), block_count, device_frames.get(), frame_count, device_src.get(),
                                   device_dst.get(), device_scratch.get(), device_outcomes.get(), nullptr),
                cudaSuccess);
    } else {
      ASSERT_EQ(launch_zstd_literals(device_blocks.get(), block_count, device_src.get(), device_scratch.get(), nullptr,
                                     lanes),
                cudaSuccess);
      ASSERT_EQ(launch_zstd_sequences(device_blocks.get(), block_count, device_src.get(), device_scratch.get(), nullptr),
                cudaSuccess);
      ASSERT_EQ(launch_zstd_execute(device_blocks.get(), device_frames.get(), frame_count, device_src.get(),
                                    device_dst.get(), device_scratch.get(), device_outcomes.get(), nullptr, choice.team),
                cudaSuccess);
    }
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    const auto outcomes = device_outcomes.to_host();
    const Bytes got = device_dst.to_host();
    ok = 0;
    for (std::size_t i = 0; i < listed.size(); ++i) {
      SCOPED_TRACE(testing::Message() << "frame " << i);
      const Listed& frame = listed[i];
      if (frame.job >= 0) {
        const auto f = static_cast<std::size_t>(frame.job);
        ASSERT_EQ(outcomes[f].status, expected_outcomes[f].status) << portable::describe(outcomes[f].status);
        if (outcomes[f].status == portable::DecodeStatus::ok) {
          ++ok;
          ASSERT_EQ(outcomes[f].written, expected_outcomes[f].written);
          const auto begin = got.begin() + static_cast<std::ptrdiff_t>(frame.dst);
          const auto end = begin + static_cast<std::ptrdiff_t>(outcomes[f].written);
          ASSERT_TRUE(std::equal(begin, end, expected.begin() + static_cast<std::ptrdiff_t>(frame.dst)));
          if (!frame.damaged) {
            ASSERT_TRUE(std::equal(begin, end, frame.original.begin(), frame.original.end()));
          } else {  // damage that left a valid frame: libzstd's bytes
            Bytes reference(frame.capacity);
            const std::size_t n =
                ZSTD_decompress(reference.data(), reference.size(), frame.frame.data(), frame.frame.size());
            ASSERT_FALSE(ZSTD_isError(n));
            reference.resize(n);
            ASSERT_TRUE(std::equal(begin, end, reference.begin(), reference.end()));
          }
        }
      } else if (!frame.damaged) {
        // An intact frame is refused only for want of room.
        ASSERT_LT(frame.capacity, frame.original.size());
      }
      // The guard after the frame's room is untouched, whatever its input held.
      for (std::size_t k = 0; k < kGuard; ++k) ASSERT_EQ(got[frame.dst + frame.capacity + k], kGuardByte);
    }
  }
  EXPECT_GT(ok, 150);
  EXPECT_LT(ok, 300);  // the damaged and too-small frames did fail
  EXPECT_EQ(launch_zstd_decode(nullptr, 0, nullptr, 0, nullptr, nullptr, nullptr, nullptr, nullptr), cudaSuccess);
  EXPECT_EQ(launch_zstd_literals(device_blocks.get(), block_count, device_src.get(), device_scratch.get(), nullptr, 4),
            cudaErrorInvalidValue);
  EXPECT_EQ(launch_zstd_execute(device_blocks.get(), device_frames.get(), frame_count, device_src.get(), nullptr,
                                device_scratch.get(), nullptr, nullptr, 64),
            cudaErrorInvalidValue);
}

}  // namespace
}  // namespace zarrdirect::cuda

// The unshuffle kernel gives the portable unshuffles' bytes (which the CPU tests check against
// c-blosc) for byte and bit shuffle, every typesize blosc writes, sizes with and without leftover
// bytes, and bit-shuffled blocks whose element count is not a multiple of 8 (stored as they are);
// nothing outside the jobs' outputs changes. Skips where no CUDA device is usable.
#include "cuda/blosc_unshuffle_kernels.cuh"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "codec/portable/blosc_frame.hpp"
#include "cuda/device_test_support.hpp"

namespace zarrdirect::cuda {
namespace {

namespace portable = codec::portable;
using test::DeviceArray;
using Bytes = std::vector<std::uint8_t>;

constexpr std::size_t kGuard = 32;
constexpr std::uint8_t kGuardByte = 0xab;

TEST(GpuBloscUnshuffle, EqualsThePortableUnshuffles) {
  REQUIRE_GPU();
  std::mt19937 rng(31);
  Bytes scratch;
  std::vector<GpuUnshuffleJob> jobs;
  std::size_t dst_size = kGuard;
  for (const std::uint32_t bit : {0u, 1u})
    for (const std::uint32_t typesize : {1u, 2u, 3u, 4u, 8u, 16u, 24u, 255u})
      for (const std::uint32_t size : {1u, 7u, 64u, 1000u, 4096u, 4099u, 65536u, 262144u + 40u}) {
        GpuUnshuffleJob job;
        job.scratch_offset = scratch.size();
        job.dst_offset = dst_size;
        job.size = size;
        job.typesize = typesize;
        job.bit_shuffle = bit;
        for (std::uint32_t k = 0; k < size; ++k) scratch.push_back(static_cast<std::uint8_t>(rng()));
        dst_size += size + kGuard;
        jobs.push_back(job);
      }
  Bytes expected(dst_size, kGuardByte);
  for (const GpuUnshuffleJob& job : jobs) {
    if (job.bit_shuffle)
      portable::blosc_bit_unshuffle(scratch.data() + job.scratch_offset, expected.data() + job.dst_offset, job.size,
                                    job.typesize);
    else
      portable::blosc_byte_unshuffle(scratch.data() + job.scratch_offset, expected.data() + job.dst_offset, job.size,
                                     job.typesize);
  }
  const DeviceArray<std::uint8_t> device_scratch(scratch);
  const DeviceArray<std::uint8_t> device_dst(Bytes(dst_size, kGuardByte));
  const DeviceArray<GpuUnshuffleJob> device_jobs(jobs);
  ASSERT_EQ(launch_blosc_unshuffle(device_jobs.get(), static_cast<std::uint32_t>(jobs.size()), device_scratch.get(),
                                   device_dst.get(), nullptr),
            cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const Bytes got = device_dst.to_host();
  ASSERT_EQ(got.size(), expected.size());
  for (std::size_t k = 0; k < got.size(); ++k) ASSERT_EQ(got[k], expected[k]) << "byte " << k;
  EXPECT_EQ(launch_blosc_unshuffle(nullptr, 0, nullptr, nullptr, nullptr), cudaSuccess);
}

}  // namespace
}  // namespace zarrdirect::cuda

// The GPU downsample gives the CPU's bits for every element type, method and odd shape, and a
// pyramid written from device memory equals one written from host memory. Skips where no CUDA
// device is usable.
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <cstring>
#include <random>

#include "engine/device_info.hpp"
#include "engine/downsample.hpp"
#include "test_support.hpp"
#include "zarrdirect/multiscale_write.hpp"

namespace zarrdirect {
namespace {

#define REQUIRE_GPU() \
  if (!cuda_available()) GTEST_SKIP() << describe_system()["io_path_reason"].get<std::string>()

std::vector<std::byte> random_bytes(std::size_t n, unsigned seed) {
  std::mt19937 random(seed);
  std::vector<std::byte> bytes(n);
  for (auto& b : bytes) b = static_cast<std::byte>(random());
  return bytes;
}

TEST(DownsampleDevice, EqualsTheHostForEveryTypeMethodAndShape) {
  REQUIRE_GPU();
  const std::vector<DataType> types = {
      {ScalarKind::boolean, 1},      {ScalarKind::signed_int, 1},   {ScalarKind::signed_int, 2},
      {ScalarKind::signed_int, 4},   {ScalarKind::signed_int, 8},   {ScalarKind::unsigned_int, 1},
      {ScalarKind::unsigned_int, 2}, {ScalarKind::unsigned_int, 4}, {ScalarKind::unsigned_int, 8},
      {ScalarKind::floating, 2},     {ScalarKind::floating, 4},     {ScalarKind::floating, 8},
      {ScalarKind::complex, 8},      {ScalarKind::complex, 16}};
  const std::vector<std::vector<std::uint64_t>> shapes = {{7, 9}, {3, 5, 7}, {2, 6, 5, 9}, {33, 65, 129}};
  unsigned seed = 1;
  for (const auto& dtype : types)
    for (const auto& shape : shapes)
      for (unsigned halved : {2u, 3u})
        for (auto method : {DownsampleMethod::mean, DownsampleMethod::nearest, DownsampleMethod::max}) {
          if (shape.size() < halved) continue;
          if (dtype.kind == ScalarKind::complex && method == DownsampleMethod::max) continue;
          SCOPED_TRACE(::testing::Message() << dtype.name() << " rank " << shape.size() << " halved " << halved
                                            << " " << to_string(method));
          std::uint64_t count = 1;
          for (auto e : shape) count *= e;
          auto in = random_bytes(count * dtype.size, seed++);
          if (dtype.kind == ScalarKind::boolean)
            for (auto& b : in) b = static_cast<std::byte>(static_cast<unsigned>(b) & 1u);
          auto out_shape = downsampled_shape(shape, halved);
          std::uint64_t out_count = 1;
          for (auto e : out_shape) out_count *= e;
          const auto g = downsample_geometry(shape, halved);
          std::vector<std::byte> host(out_count * dtype.size);
          downsample_host(in.data(), host.data(), g, dtype, method, 2);

          void* device_in = nullptr;
          void* device_out = nullptr;
          ASSERT_EQ(cudaMalloc(&device_in, in.size()), cudaSuccess);
          ASSERT_EQ(cudaMalloc(&device_out, host.size() + 1), cudaSuccess);
          ASSERT_EQ(cudaMemcpy(device_in, in.data(), in.size(), cudaMemcpyHostToDevice), cudaSuccess);
          downsample_device(device_in, device_out, g, dtype, method, nullptr);
          std::vector<std::byte> device(host.size());
          ASSERT_EQ(cudaMemcpy(device.data(), device_out, device.size(), cudaMemcpyDeviceToHost), cudaSuccess);
          cudaFree(device_in);
          cudaFree(device_out);
          // NaNs of the same payload compare equal as bytes: both sides keep the winning input.
          EXPECT_EQ(std::memcmp(host.data(), device.data(), host.size()), 0);
        }
}

TEST(DownsampleDevice, PyramidFromDeviceMemoryEqualsPyramidFromHostMemory) {
  REQUIRE_GPU();
  test::TempDir dir;
  const std::vector<std::uint64_t> shape = {37, 70, 45};
  auto bytes = random_bytes(37 * 70 * 45 * 2, 9);
  MultiscaleWriteOptions options;
  options.levels = 3;
  options.downsample_dims = 3;
  options.chunks = {16, 16, 16};
  Source host{bytes.data(), {}, Device::cpu, nullptr, shape, DataType{ScalarKind::unsigned_int, 2}};
  write_multiscale(dir / "host.zarr", host, options);
  void* device = nullptr;
  ASSERT_EQ(cudaMalloc(&device, bytes.size()), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(device, bytes.data(), bytes.size(), cudaMemcpyHostToDevice), cudaSuccess);
  Source on_device{device, {}, Device::cuda, nullptr, shape, DataType{ScalarKind::unsigned_int, 2}};
  write_multiscale(dir / "device.zarr", on_device, options);
  cudaFree(device);
  for (int k = 0; k < 3; ++k) {
    auto a = Array::open(dir / "host.zarr" / std::to_string(k)).read();
    auto b = Array::open(dir / "device.zarr" / std::to_string(k)).read();
    ASSERT_EQ(a.nbytes(), b.nbytes());
    EXPECT_EQ(std::memcmp(a.data(), b.data(), a.nbytes()), 0) << "level " << k;
  }
  // Slab by slab from storage into device memory: the same levels.
  options.slab_bytes = 16 * 70 * 45 * 2;
  auto slabbed = write_multiscale(dir / "slabs.zarr", Array::open(dir / "host.zarr" / "0"), options, Device::cuda);
  EXPECT_GT(slabbed.slabs, 1u);
  for (int k = 0; k < 3; ++k) {
    auto a = Array::open(dir / "host.zarr" / std::to_string(k)).read();
    auto b = Array::open(dir / "slabs.zarr" / std::to_string(k)).read();
    EXPECT_EQ(std::memcmp(a.data(), b.data(), a.nbytes()), 0) << "level " << k;
  }
}

}  // namespace
}  // namespace zarrdirect

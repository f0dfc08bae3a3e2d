// Writes from device memory: the same arrays as from host memory, from contiguous and strided
// device sources, whole and in part, sharded too. Skips where no CUDA device is usable.
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <cstring>
#include <numeric>

#include "engine/device_info.hpp"
#include "test_support.hpp"
#include "zarrdirect/array.hpp"

namespace zarrdirect {
namespace {

using json = nlohmann::json;

#define REQUIRE_GPU() \
  if (!cuda_available()) GTEST_SKIP() << describe_system()["io_path_reason"].get<std::string>()

json array_doc(bool sharded) {
  json bytes = {{"name", "bytes"}, {"configuration", {{"endian", "little"}}}};
  json codecs = json::array({bytes, {{"name", "zstd"}, {"configuration", {{"level", 1}}}}});
  if (sharded)
    codecs = json::array({{{"name", "sharding_indexed"},
                           {"configuration", {{"chunk_shape", {4, 8, 5}}, {"codecs", codecs}}}}});
  return {{"zarr_format", 3},
          {"node_type", "array"},
          {"shape", {13, 17, 20}},
          {"data_type", "uint32"},
          {"chunk_grid", {{"name", "regular"}, {"configuration", {{"chunk_shape", {8, 16, 10}}}}}},
          {"chunk_key_encoding", {{"name", "default"}}},
          {"fill_value", 0},
          {"codecs", codecs}};
}

TEST(DeviceSource, WritesFromDeviceMemoryEqualHostWrites) {
  REQUIRE_GPU();
  for (bool sharded : {false, true}) {
    test::TempDir dir;
    Array array = Array::create(dir / "a", array_doc(sharded));
    const std::size_t count = 13 * 17 * 20;
    std::vector<std::uint32_t> host(count);
    std::iota(host.begin(), host.end(), 1u);
    void* device = nullptr;
    ASSERT_EQ(cudaMalloc(&device, count * 4), cudaSuccess);
    ASSERT_EQ(cudaMemcpy(device, host.data(), count * 4, cudaMemcpyHostToDevice), cudaSuccess);
    array.write({}, Source{device, {}, Device::cuda, nullptr, {}, {}});
    NDArray back = array.read();
    EXPECT_EQ(std::memcmp(back.data(), host.data(), count * 4), 0) << "sharded " << sharded;

    // A strided device source: every other element along the last axis of a wider buffer,
    // written into a region that cuts chunks.
    std::vector<std::uint32_t> wide(5 * 6 * 14, 0);
    for (std::size_t i = 0; i < wide.size(); i += 2) wide[i] = static_cast<std::uint32_t>(100000 + i);
    void* wide_device = nullptr;
    ASSERT_EQ(cudaMalloc(&wide_device, wide.size() * 4), cudaSuccess);
    ASSERT_EQ(cudaMemcpy(wide_device, wide.data(), wide.size() * 4, cudaMemcpyHostToDevice), cudaSuccess);
    Region region{{3, 8}, {9, 15}, {2, 9}};
    array.write(region, Source{wide_device, {6 * 14 * 4, 14 * 4, 2 * 4}, Device::cuda, nullptr, {}, {}});
    NDArray part = array.read(region);
    auto* got = static_cast<const std::uint32_t*>(part.data());
    for (std::size_t i = 0; i < 5 * 6 * 7; ++i) ASSERT_EQ(got[i], wide[2 * i]) << i;
    cudaFree(device);
    cudaFree(wide_device);
  }
}

TEST(DeviceSource, UncompressedChunksGoFromStagingToTheirFiles) {
  // Raw chunks written whole from device memory: slabs (one run in the source: a plain copy into
  // staging) and blocks (the gather kernel), then a region cutting both.
  REQUIRE_GPU();
  for (json chunk_shape : {json{2, 17, 20}, json{8, 16, 10}}) {
    test::TempDir dir;
    json doc = array_doc(false);
    doc["codecs"] = json::array({{{"name", "bytes"}, {"configuration", {{"endian", "little"}}}}});
    doc["chunk_grid"]["configuration"]["chunk_shape"] = chunk_shape;
    Array array = Array::create(dir / "a", doc);
    const std::size_t count = 13 * 17 * 20;
    std::vector<std::uint32_t> host(count);
    std::iota(host.begin(), host.end(), 7u);
    void* device = nullptr;
    ASSERT_EQ(cudaMalloc(&device, count * 4), cudaSuccess);
    ASSERT_EQ(cudaMemcpy(device, host.data(), count * 4, cudaMemcpyHostToDevice), cudaSuccess);
    array.write({}, Source{device, {}, Device::cuda, nullptr, {}, {}});
    NDArray back = array.read();
    EXPECT_EQ(std::memcmp(back.data(), host.data(), count * 4), 0) << chunk_shape.dump();
    Region region{{1, 12}, {3, 16}, {4, 19}};
    std::vector<std::uint32_t> part(11 * 13 * 15);
    std::iota(part.begin(), part.end(), 500000u);
    void* part_device = nullptr;
    ASSERT_EQ(cudaMalloc(&part_device, part.size() * 4), cudaSuccess);
    ASSERT_EQ(cudaMemcpy(part_device, part.data(), part.size() * 4, cudaMemcpyHostToDevice), cudaSuccess);
    array.write(region, Source{part_device, {}, Device::cuda, nullptr, {}, {}});
    NDArray got = array.read(region);
    EXPECT_EQ(std::memcmp(got.data(), part.data(), part.size() * 4), 0) << chunk_shape.dump();
    cudaFree(device);
    cudaFree(part_device);
  }
}

TEST(DeviceSource, HostMemoryIsRefusedAsADeviceSource) {
  REQUIRE_GPU();
  test::TempDir dir;
  Array array = Array::create(dir / "a", array_doc(false));
  std::vector<std::uint32_t> host(13 * 17 * 20, 1);
  EXPECT_THROW(array.write({}, Source{host.data(), {}, Device::cuda, nullptr, {}, {}}), Error);
}

}  // namespace
}  // namespace zarrdirect

// Reads and writes on a chosen GPU (DeviceSpec::cuda(k), Destination/Source::device_ordinal).
// Every test runs over every device this machine has, so on a one-GPU machine the N-device code
// paths (per-device pools, switching to the read's device and back) run with N = 1 and on the
// multi-GPU machine (issue 19) with all of them. Skipped without a device; the refusals without
// one are tested in engine/device_test.cpp.
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <cstring>
#include <optional>
#include <thread>

#include <fmt/format.h>

#include "conformance_cases.hpp"
#include "cuda/cuda_check.hpp"
#include "cuda/device_pool.hpp"
#include "engine/array_writer.hpp"
#include "test_support.hpp"
#include "zarrdirect/array.hpp"

namespace zarrdirect {
namespace {

#define REQUIRE_GPU() \
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device"

// The device cudaPointerGetAttributes says holds `pointer`.
int device_holding(const void* pointer) {
  cudaPointerAttributes attributes{};
  EXPECT_EQ(cudaPointerGetAttributes(&attributes, pointer), cudaSuccess);
  EXPECT_EQ(attributes.type, cudaMemoryTypeDevice);
  return attributes.device;
}

int library_current_device() {
  int device = -1;
  EXPECT_EQ(cuda::library_get_device(&device), cudaSuccess);
  return device;
}

// Puts the library's current device back to 0 whatever a test did.
struct BackToDeviceZero {
  ~BackToDeviceZero() { (void)cuda::library_set_device(0); }
};

TEST(DeviceOrdinals, EveryConformanceCaseReadIntoEachDeviceEqualsTheHostRead) {
  REQUIRE_GPU();
  std::size_t compared = 0;
  for (const auto& c : test::conformance_cases()) {
    std::optional<Array> array;
    try {
      array = Array::open(c.array);
    } catch (const Error& e) {
      if (e.kind() == ErrorKind::unsupported && test::expected_refusal(c.listed_name)) continue;
      throw;
    }
    SCOPED_TRACE(c.name);
    const NDArray host = array->read();
    const std::vector<std::byte> expected = copy_to_host(host);
    for (int k = 0; k < cuda_device_count(); ++k) {
      SCOPED_TRACE(fmt::format("cuda:{}", k));
      const NDArray on_device = array->read({}, DeviceSpec::cuda(k));
      EXPECT_EQ(on_device.device(), Device::cuda);
      EXPECT_EQ(on_device.device_ordinal(), k);
      EXPECT_EQ(device_holding(on_device.data()), k);
      EXPECT_EQ(on_device.shape(), host.shape());
      EXPECT_TRUE(copy_to_host(on_device) == expected);
      ++compared;
    }
  }
  EXPECT_GT(compared, 0u);
}

// A 2-d uint16 array of 48 x 40 in 16 x 16 chunks (partial edge chunks), zstd-compressed.
Array make_array(const std::filesystem::path& path, std::vector<std::uint16_t>* values = nullptr) {
  nlohmann::json doc = nlohmann::json::parse(R"({"zarr_format": 2, "shape": [48, 40], "chunks": [16, 16],
      "dtype": "<u2", "fill_value": 0, "order": "C", "compressor": {"id": "zstd", "level": 1}, "filters": null})");
  std::vector<std::uint16_t> data(48 * 40);
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<std::uint16_t>(i * 7 + 3);
  write_array(path, doc, std::as_bytes(std::span(data)));
  if (values) *values = data;
  return Array::open(path);
}

TEST(DeviceOrdinals, PlainCudaMeansTheCallingThreadsCurrentDevice) {
  REQUIRE_GPU();
  BackToDeviceZero restore;
  test::TempDir dir;
  Array array = make_array(dir / "a");
  for (int k = 0; k < cuda_device_count(); ++k) {
    ASSERT_EQ(cuda::library_set_device(k), cudaSuccess);
    const NDArray result = array.read({}, Device::cuda);
    EXPECT_EQ(result.device_ordinal(), k);
    EXPECT_EQ(device_holding(result.data()), k);
  }
}

TEST(DeviceOrdinals, ReadsAndWritesLeaveTheCallersDeviceAsItWas) {
  REQUIRE_GPU();
  BackToDeviceZero restore;
  test::TempDir dir;
  std::vector<std::uint16_t> values;
  Array array = make_array(dir / "a", &values);
  const int count = cuda_device_count();
  const int callers = count - 1;  // the last device, so that reads into device 0 must switch
  for (int k = 0; k < count; ++k) {
    ASSERT_EQ(cuda::library_set_device(callers), cudaSuccess);
    const NDArray result = array.read({{8, 40}, {0, 40}}, DeviceSpec::cuda(k));
    EXPECT_EQ(library_current_device(), callers) << "read into cuda:" << k;
    Array copy = Array::create(dir / fmt::format("copy{}", k), nlohmann::json::parse(R"({"zarr_format": 2,
        "shape": [48, 40], "chunks": [16, 16], "dtype": "<u2", "fill_value": 0, "order": "C",
        "compressor": null, "filters": null})"));
    Source source;
    source.data = result.data();
    source.device = Device::cuda;
    source.device_ordinal = k;
    (void)copy.write({{8, 40}, {0, 40}}, source);
    EXPECT_EQ(library_current_device(), callers) << "write from cuda:" << k;
    EXPECT_TRUE(copy_to_host(copy.read({{8, 40}, {0, 40}})) == copy_to_host(array.read({{8, 40}, {0, 40}})));
    EXPECT_EQ(copy_to_host(copy.read({{0, 8}, {0, 40}})), std::vector<std::byte>(8 * 40 * 2));  // untouched
  }
}

TEST(DeviceOrdinals, ReadIntoMemoryOfEachDeviceNamedOrNot) {
  REQUIRE_GPU();
  test::TempDir dir;
  std::vector<std::uint16_t> values;
  Array array = make_array(dir / "a", &values);
  const std::vector<std::byte> expected = copy_to_host(array.read());
  const int count = cuda_device_count();
  for (int k = 0; k < count; ++k) {
    SCOPED_TRACE(fmt::format("cuda:{}", k));
    Buffer buffer = Buffer::allocate(DeviceSpec::cuda(k), expected.size());
    ASSERT_EQ(buffer.device_ordinal(), k);
    for (int named : {DeviceSpec::kCurrent, k}) {
      ASSERT_EQ(cudaMemset(buffer.data(), 0, expected.size()), cudaSuccess);
      (void)array.read_into({}, Destination{buffer.data(), {}, Device::cuda, nullptr, named});
      std::vector<std::byte> got(expected.size());
      ASSERT_EQ(cudaMemcpy(got.data(), buffer.data(), got.size(), cudaMemcpyDefault), cudaSuccess);
      EXPECT_TRUE(got == expected) << "named " << named;
    }
    // Memory of device k with another device named: refused before anything is read.
    for (int other = 0; other < count; ++other) {
      if (other == k) continue;
      try {
        (void)array.read_into({}, Destination{buffer.data(), {}, Device::cuda, nullptr, other});
        ADD_FAILURE() << "cuda:" << other << " accepted for memory of cuda:" << k;
      } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::invalid_argument) << e.what();
        EXPECT_NE(std::string(e.what()).find(fmt::format("memory of cuda:{}, but cuda:{}", k, other)),
                  std::string::npos)
            << e.what();
      }
    }
  }
}

TEST(DeviceOrdinals, TheStagingPoolKeepsEachDevicesBuffersApart) {
  REQUIRE_GPU();
  BackToDeviceZero restore;
  auto& pool = cuda::DevicePool::instance();
  pool.trim();
  const int count = cuda_device_count();
  std::vector<std::vector<cuda::SlotPtr>> held(static_cast<std::size_t>(count));
  for (int k = 0; k < count; ++k) {
    cuda::use_device(k);
    held[static_cast<std::size_t>(k)] = pool.acquire_slots(k, 1 << 16, 2, ~std::size_t{0});
    for (const auto& slot : held[static_cast<std::size_t>(k)]) EXPECT_EQ(slot->device, k);
    auto streams = pool.acquire_streams(k, 2);
    pool.release_streams(k, std::move(streams));
  }
  for (int k = 0; k < count; ++k) pool.release_slots(std::move(held[static_cast<std::size_t>(k)]), ~std::size_t{0});
  EXPECT_EQ(pool.idle_pinned_bytes(), static_cast<std::size_t>(count) * 2 * (1 << 16));
  // Each device gets its own slots back, never another device's.
  for (int k = 0; k < count; ++k) {
    cuda::use_device(k);
    auto again = pool.acquire_slots(k, 1 << 16, 2, ~std::size_t{0});
    for (const auto& slot : again) EXPECT_EQ(slot->device, k);
    pool.release_slots(std::move(again), ~std::size_t{0});
  }
  pool.trim();
  EXPECT_EQ(pool.idle_pinned_bytes(), 0u);
}

TEST(DeviceOrdinals, ThreadsReadingIntoEveryDeviceAtOnce) {
  REQUIRE_GPU();
  test::TempDir dir;
  Array array = make_array(dir / "a");
  const std::vector<std::byte> expected = copy_to_host(array.read());
  const int count = cuda_device_count();
  std::vector<std::thread> threads;
  std::vector<int> good(static_cast<std::size_t>(2 * count), 0);
  for (int t = 0; t < 2 * count; ++t)
    threads.emplace_back([&, t] {
      const int k = t % count;
      for (int round = 0; round < 4; ++round) {
        const NDArray result = array.read({}, DeviceSpec::cuda(k));
        if (result.device_ordinal() == k && copy_to_host(result) == expected) ++good[static_cast<std::size_t>(t)];
      }
    });
  for (auto& thread : threads) thread.join();
  for (int t = 0; t < 2 * count; ++t) EXPECT_EQ(good[static_cast<std::size_t>(t)], 4) << "thread " << t;
}

}  // namespace
}  // namespace zarrdirect

// Batched device placement (DeviceSink with DeviceSinkOptions::batch, batch_kernels.cu) on the
// GPU: small plain chunks, sharded inner chunks, regions cutting edge chunks, missing chunks and
// inner chunks, and C-order, F-order and padded destinations must give exactly the bytes of the
// host read, padding untouched; reads must really run in batches, the per-chunk path must stay
// available (Settings::device_batch = false), and a table entry the kernel cannot take (more dims)
// is placed alone. Skips (GTEST_SKIP) where no CUDA device is usable.
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include "cuda/batch_test_arrays.hpp"
#include "cuda/device_sink.hpp"
#include "engine/array_state.hpp"
#include "engine/reader.hpp"
#include "test_support.hpp"
#include "zarrdirect/system.hpp"

namespace zarrdirect {
namespace {

#define REQUIRE_GPU() \
  if (!cuda_available()) GTEST_SKIP() << describe_system()["io_path_reason"].get<std::string>()

void check(cudaError_t status, const char* call) { ASSERT_EQ(status, cudaSuccess) << call << ": " << cudaGetErrorString(status); }

constexpr std::byte kUntouched{0xab};

// `region` of `array` read into host memory shaped as `shape`, every other byte kUntouched.
std::vector<std::byte> host_read(const Array& array, const Region& region, const test::BatchDestination& shape) {
  std::vector<std::byte> bytes(shape.nbytes, kUntouched);
  Destination host;
  host.data = bytes.data();
  host.byte_strides = shape.byte_strides;
  array.read_into(region, host, Settings{});
  return bytes;
}

// The same into GPU memory through the staged path with `settings`, copied back.
std::vector<std::byte> device_read(const Array& array, const Region& region, const test::BatchDestination& shape,
                                   Settings settings) {
  std::vector<std::byte> bytes(shape.nbytes);
  void* device = nullptr;
  check(cudaMalloc(&device, shape.nbytes), "cudaMalloc");
  check(cudaMemset(device, std::to_integer<int>(kUntouched), shape.nbytes), "cudaMemset");
  Destination destination{device, shape.byte_strides, Device::cuda, nullptr};
  settings.io_path = IoPath::staged;
  array.read_into(region, destination, settings);
  check(cudaMemcpy(bytes.data(), device, shape.nbytes, cudaMemcpyDeviceToHost), "cudaMemcpy");
  check(cudaFree(device), "cudaFree");
  return bytes;
}

std::size_t first_difference(const std::vector<std::byte>& a, const std::vector<std::byte>& b) {
  for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i)
    if (a[i] != b[i]) return i;
  return a.size() == b.size() ? SIZE_MAX : std::min(a.size(), b.size());
}

// Every case, region and destination shape, batched, per chunk, and with batch buffers of a few
// chunks (a small staging budget), against the host read.
void compare_cases(const std::vector<std::string>& names) {
  test::TempDir dir;
  for (const auto& c : test::batch_cases(dir.path())) {
    if (std::find(names.begin(), names.end(), c.name) == names.end()) continue;
    const std::size_t element = c.array.metadata().dtype.size;
    for (const Region& region : test::batch_regions(c.array.metadata().shape)) {
      for (const auto& shape : test::batch_destinations(region, element)) {
        SCOPED_TRACE(c.name + ", " + shape.name + " destination, region starting at " + std::to_string(region[0].start));
        const auto expected = host_read(c.array, region, shape);
        Settings batched;
        Settings small;
        small.staging_bytes = 2u << 20;
        small.threads = 4;
        Settings per_chunk;
        per_chunk.device_batch = false;
        for (const auto& [what, settings] :
             {std::pair{"batched", batched}, std::pair{"small batches", small}, std::pair{"per chunk", per_chunk}}) {
          const auto got = device_read(c.array, region, shape, settings);
          const std::size_t at = first_difference(got, expected);
          EXPECT_EQ(at, SIZE_MAX) << what << ": first difference at byte " << at;
        }
      }
    }
  }
}

TEST(DeviceBatch, Raw32ChunksMatchTheHostRead) {
  REQUIRE_GPU();
  compare_cases({"raw32", "u8_16", "f64_big"});
}

TEST(DeviceBatch, ShardedInnerChunksMatchTheHostRead) {
  REQUIRE_GPU();
  compare_cases({"sharded"});
}

TEST(DeviceBatch, MissingChunksAreFilledInTheBatch) {
  REQUIRE_GPU();
  compare_cases({"raw32_missing", "sharded_missing"});
}

// The sink itself: batching chosen, far fewer uploads than chunks, and the same bytes.
TEST(DeviceBatch, ReadsRunInBatchesOfManyChunks) {
  REQUIRE_GPU();
  test::TempDir dir;
  for (const auto& c : test::batch_cases(dir.path())) {
    if (c.name != "raw32" && c.name != "sharded_missing") continue;
    SCOPED_TRACE(c.name);
    auto impl = Array::Impl::create(c.path, read_array_metadata(c.path));
    const Region region = test::batch_regions(c.array.metadata().shape)[1];
    const auto shape = test::batch_destinations(region, 2)[1];  // F order
    const auto expected = host_read(c.array, region, shape);
    void* device = nullptr;
    check(cudaMalloc(&device, shape.nbytes), "cudaMalloc");
    check(cudaMemset(device, std::to_integer<int>(kUntouched), shape.nbytes), "cudaMemset");
    DestinationLayout layout;
    layout.data = static_cast<std::byte*>(device);
    layout.rank = 3;
    for (std::size_t d = 0; d < 3; ++d) {
      layout.shape[d] = region[d].size();
      layout.byte_strides[d] = shape.byte_strides[d];
    }
    layout.element_size = 2;
    int ordinal = 0;
    check(cudaGetDevice(&ordinal), "cudaGetDevice");
    cuda::DeviceSinkOptions options;
    options.device = ordinal;
    options.slot_bytes = 32 * 32 * 32 * 2;
    options.batch = true;
    Settings settings;
    settings.threads = 2;
    cuda::DeviceSink sink(layout, impl->metadata.fill_value, options);
    const ReadStats stats = run_read(*impl, region, sink, settings);
    EXPECT_TRUE(sink.batching());
    // 8 MiB batches of 64 KiB chunks: every worker's chunks and fills in one or two batches.
    EXPECT_GE(sink.batches_uploaded(), 1u);
    EXPECT_LE(sink.batches_uploaded(), 4u) << stats.chunks_total << " chunks";
    EXPECT_GT(stats.chunks_total, 20u);
    std::vector<std::byte> got(shape.nbytes);
    check(cudaMemcpy(got.data(), device, shape.nbytes, cudaMemcpyDeviceToHost), "cudaMemcpy");
    check(cudaFree(device), "cudaFree");
    EXPECT_EQ(first_difference(got, expected), SIZE_MAX);
  }
}

// Chunks too large for a quarter of a batch keep the per-chunk ring of slots.
TEST(DeviceBatch, LargeChunksKeepThePerChunkPath) {
  REQUIRE_GPU();
  std::vector<std::byte> memory(4);
  int ordinal = 0;
  check(cudaGetDevice(&ordinal), "cudaGetDevice");
  cuda::DeviceSinkOptions options;
  options.device = ordinal;
  options.slot_bytes = 4u << 20;  // a 128^3 uint16 chunk
  options.batch = true;
  const std::byte fill{0};
  cuda::DeviceSink sink(DestinationLayout::contiguous(memory.data(), std::vector<std::uint64_t>{4}, 1),
                        std::span(&fill, 1), options);
  sink.start(16, options.slot_bytes);
  EXPECT_FALSE(sink.batching());
  EXPECT_GT(sink.pinned_slots(), 0u);
  sink.finish();
}

// A 5-d array whose boxes keep five dims after planning: a table entry cannot take them, so
// they are placed alone from the uploaded batch; the result is the host read's.
TEST(DeviceBatch, BoxesWithMoreDimsThanAnEntryArePlacedAlone) {
  REQUIRE_GPU();
  test::TempDir dir;
  Array array = Array::create(dir / "a", test::batch_doc({6, 6, 6, 6, 6}, {4, 4, 4, 4, 4}, "uint8", 0,
                                                          nlohmann::json::array({test::batch_bytes_codec()})));
  std::vector<std::uint8_t> data(6 * 6 * 6 * 6 * 6);
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<std::uint8_t>(i * 7 + 1);
  Source source;
  source.data = data.data();
  array.write({}, source);
  const Region region = full_region(array.metadata().shape);
  for (const auto& shape : test::batch_destinations(region, 1)) {
    SCOPED_TRACE(shape.name);
    const auto expected = host_read(array, region, shape);
    const auto got = device_read(array, region, shape, Settings{});
    EXPECT_EQ(first_difference(got, expected), SIZE_MAX);
  }
}

}  // namespace
}  // namespace zarrdirect

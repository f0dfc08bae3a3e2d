// Device reads end to end: every conformance case read into GPU memory must equal expected.npy,
// whole and in a region that cuts through chunks, through every I/O path and staging shape, into
// caller-owned strided memory on a caller's stream, and from several threads at once. The GPU
// tests skip (GTEST_SKIP) where no CUDA device is usable; the no-device behaviour is tested
// there instead.
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <atomic>
#include <cmath>
#include <cstring>
#include <map>
#include <optional>
#include <thread>

#include <fmt/format.h>

#include "cuda/cufile.hpp"
#include "cuda/device_pool.hpp"
#include "conformance_cases.hpp"
#include "test_support.hpp"
#include "util/npy.hpp"
#include "zarrdirect/array.hpp"
#include "zarrdirect/group.hpp"
#include "zarrdirect/system.hpp"

namespace zarrdirect {
namespace {

namespace fs = std::filesystem;

#define REQUIRE_GPU() \
  if (!cuda_available()) GTEST_SKIP() << describe_system()["io_path_reason"].get<std::string>()

void check(cudaError_t status, const char* call) { ASSERT_EQ(status, cudaSuccess) << call << ": " << cudaGetErrorString(status); }

using Case = test::ConformanceCase;

// A case opened with its expected values.
struct Loaded {
  Case source;
  std::optional<Array> array;
  NpyArray npy;
  std::vector<std::byte> expected;  // C order, native byte order
};

// Every conformance case that opens; a case refused as unsupported must be an expected refusal
// (expected_refusals.json), else the calling test fails. `refused` counts the listed ones.
std::vector<Loaded> load_cases(std::size_t* refused = nullptr) {
  std::vector<Loaded> loaded;
  for (const auto& c : test::conformance_cases()) {
    Loaded entry{c, std::nullopt, read_npy(c.expected), {}};
    entry.expected = entry.npy.native_c_order();
    try {
      entry.array = Array::open(c.array);
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::unsupported) throw;
      EXPECT_TRUE(test::expected_refusal(c.listed_name).has_value())
          << c.name << ": refused as unsupported, and not an expected refusal: " << e.what();
      if (refused) ++*refused;
      continue;
    }
    loaded.push_back(std::move(entry));
  }
  return loaded;
}

// Equal element by element, NaN equal to NaN (floats, and each half of a complex number).
bool same_values(std::span<const std::byte> got, std::span<const std::byte> expected, const DataType& type,
                 std::string& why) {
  if (got.size() != expected.size()) {
    why = fmt::format("{} bytes, expected {}", got.size(), expected.size());
    return false;
  }
  const std::size_t unit = type.kind == ScalarKind::complex ? type.size / 2u : type.size;
  const bool floating = type.kind == ScalarKind::floating || type.kind == ScalarKind::complex;
  auto nan_at = [&](const std::byte* p) {
    if (unit == 2) {
      std::uint16_t bits;
      std::memcpy(&bits, p, 2);
      return (bits & 0x7c00u) == 0x7c00u && (bits & 0x03ffu) != 0;
    }
    if (unit == 4) {
      float value;
      std::memcpy(&value, p, 4);
      return std::isnan(value);
    }
    double value;
    std::memcpy(&value, p, 8);
    return std::isnan(value);
  };
  for (std::size_t i = 0; i < got.size(); i += unit) {
    if (std::memcmp(got.data() + i, expected.data() + i, unit) == 0) continue;
    if (floating && nan_at(got.data() + i) && nan_at(expected.data() + i)) continue;
    why = fmt::format("first difference at element {}", i / type.size);
    return false;
  }
  return true;
}

// The middle half of each dimension: cuts through chunk (and shard) boundaries.
Region middle_of(const std::vector<std::uint64_t>& shape) {
  Region region;
  for (auto extent : shape) region.push_back({extent / 4, extent - extent / 4});
  return region;
}

// The C-order elements of `region` of a C-order array of `shape`.
std::vector<std::byte> slice_of(const std::vector<std::byte>& data, const std::vector<std::uint64_t>& shape,
                                const Region& region, std::size_t element) {
  std::uint64_t count = 1;
  for (const auto& range : region) count *= range.size();
  std::vector<std::byte> out;
  out.reserve(count * element);
  for (std::uint64_t n = 0; n < count; ++n) {
    std::uint64_t rest = n;
    std::uint64_t offset = 0;
    std::uint64_t stride = 1;
    for (std::size_t d = shape.size(); d-- > 0;) {
      const std::uint64_t index = region[d].start + rest % region[d].size();
      rest /= region[d].size();
      offset += index * stride;
      stride *= shape[d];
    }
    const auto* first = data.data() + offset * element;
    out.insert(out.end(), first, first + element);
  }
  return out;
}

// Reads whole and middle region to the GPU with `settings`; expects equality and `io_path`.
void expect_device_reads_match(const Loaded& c, const Settings& settings, const std::string& io_path) {
  SCOPED_TRACE(c.source.name);
  std::string why;
  NDArray whole = c.array->read({}, Device::cuda, settings);
  EXPECT_EQ(whole.device(), Device::cuda);
  EXPECT_EQ(whole.shape(), c.npy.shape);
  EXPECT_EQ(whole.stats().io_path, io_path);
  EXPECT_TRUE(same_values(copy_to_host(whole), c.expected, c.npy.dtype, why)) << "whole array: " << why;

  const Region region = middle_of(c.npy.shape);
  NDArray part = c.array->read(region, Device::cuda, settings);
  EXPECT_TRUE(same_values(copy_to_host(part), slice_of(c.expected, c.npy.shape, region, c.npy.dtype.size),
                          c.npy.dtype, why))
      << "region " << to_string(region) << ": " << why;
}

bool uncompressed(const Loaded& c) {
  // The GDS path applies to arrays whose chunks are stored as plain bytes in native order.
  const auto& codecs = c.array->metadata().codecs;
  return codecs.size() == 1 && codecs[0].value("name", "") == "bytes" &&
         (c.array->metadata().dtype.size == 1 || !codecs[0].contains("configuration") ||
          codecs[0]["configuration"].value("endian", "little") == "little");
}

// --- Without a GPU -----------------------------------------------------------------------------

TEST(DeviceSystem, DescribesTheMachine) {
  const auto cufile_before = cuda::CuFile::instance().state();
  nlohmann::json doc = describe_system();
  SCOPED_TRACE(doc.dump(2));
  if (cufile_before.loaded && !cufile_before.native && !cufile_before.driver_tried) {
    // Describing the machine leaves cuFile's driver closed where the automatic path would not
    // use it, and says why.
    EXPECT_FALSE(cuda::CuFile::instance().state().driver_tried);
    EXPECT_FALSE(doc["cufile"]["driver_open"].get<bool>());
    EXPECT_NE(doc["cufile"]["detail"].get<std::string>().find("compatibility mode"), std::string::npos);
  }
  EXPECT_TRUE(doc["cuda_built"].get<bool>());
  ASSERT_TRUE(doc.contains("cufile"));
  EXPECT_TRUE(doc["cufile"].contains("loaded"));
  EXPECT_TRUE(doc["cufile"].contains("driver_open"));
  EXPECT_TRUE(doc["cufile"].contains("native"));
  EXPECT_FALSE(doc["io_path_reason"].get<std::string>().empty());
  if (!cuda_available()) {
    EXPECT_EQ(doc["cuda_devices"].get<int>(), 0);
    EXPECT_EQ(doc["io_path"].get<std::string>(), "host");
    EXPECT_TRUE(doc["io_path_reason"].get<std::string>().starts_with("no CUDA device: reads go to host memory"));
    EXPECT_FALSE(doc["cufile"]["driver_open"].get<bool>());
  } else {
    EXPECT_GT(doc["cuda_devices"].get<int>(), 0);
    EXPECT_TRUE(doc.contains("device"));
    const auto path = doc["io_path"].get<std::string>();
    EXPECT_TRUE(path == "staged" || path == "gds") << path;
    std::printf("system: %s\n", doc.dump().c_str());
  }
}

TEST(DeviceSystem, DeviceReadsFailClearlyWithoutADevice) {
  if (cuda_available()) GTEST_SKIP() << "a CUDA device is present";
  auto cases = load_cases();
  ASSERT_FALSE(cases.empty()) << "no conformance cases under " << test::conformance_dir();
  const Array& array = *cases.front().array;
  try {
    (void)array.read({}, Device::cuda);
    FAIL() << "a device read succeeded without a device";
  } catch (const Error& e) {
    EXPECT_TRUE(e.kind() == ErrorKind::cuda || e.kind() == ErrorKind::unsupported) << to_string(e.kind());
    EXPECT_NE(std::string(e.what()).find("CUDA"), std::string::npos) << e.what();
    std::printf("without a device: %s\n", e.what());
  }
  std::vector<std::byte> host(cases.front().expected.size() + 16);
  Destination destination{host.data(), {}, Device::cuda, nullptr};
  EXPECT_THROW((void)array.read_into({}, destination), Error);
  // Host reads are unaffected.
  std::string why;
  NDArray on_host = array.read();
  EXPECT_TRUE(same_values(copy_to_host(on_host), cases.front().expected, cases.front().npy.dtype, why)) << why;
}

// --- With a GPU --------------------------------------------------------------------------------

TEST(DeviceRead, EveryConformanceCaseMatches) {
  REQUIRE_GPU();
  std::size_t refused = 0;
  auto cases = load_cases(&refused);
  ASSERT_FALSE(cases.empty());
  const std::string automatic_path = describe_system()["io_path"].get<std::string>();
  for (const auto& c : cases) {
    Settings settings = Settings::from_environment();
    settings.io_path = IoPath::automatic;
    const bool gds_eligible = automatic_path == "gds" && uncompressed(c) && c.array->metadata().codecs.size() == 1;
    expect_device_reads_match(c, settings, gds_eligible ? "gds" : "staged");
  }
  std::printf("conformance (device memory): %zu cases read back equal, %zu refused as listed in "
              "expected_refusals.json\n",
              cases.size(), refused);
}

TEST(DeviceRead, StagingShapesAllGiveTheSameValues) {
  REQUIRE_GPU();
  auto cases = load_cases();
  struct Shape {
    const char* name;
    unsigned threads;
    std::size_t staging_bytes;
    unsigned slots;
  };
  // No pinned memory at all (every worker stages in ordinary memory), a budget too small for one
  // slot per worker (some pinned, some not), one worker with one slot, many slots per worker.
  const Shape shapes[] = {{"no pinned staging", 4, 0, 2},
                          {"pinned for some workers", 8, 3 * 4096, 1},
                          {"one worker, one slot", 1, 256u << 20, 1},
                          {"four slots per worker", 3, 256u << 20, 4}};
  for (const auto& shape : shapes) {
    SCOPED_TRACE(shape.name);
    Settings settings;
    settings.io_path = IoPath::staged;
    settings.threads = shape.threads;
    settings.staging_bytes = shape.staging_bytes;
    settings.slots_per_thread = shape.slots;
    for (const auto& c : cases) expect_device_reads_match(c, settings, "staged");
  }
}

// The pool keeps staging between reads up to the process's budget (Settings::pinned_pool_bytes),
// never beyond it, and a read like the one before it allocates nothing new.
TEST(DeviceRead, PinnedStagingIsReusedAndBounded) {
  REQUIRE_GPU();
  auto cases = load_cases();
  ASSERT_FALSE(cases.empty());
  auto& pool = cuda::DevicePool::instance();
  pool.trim();
  Settings settings;
  settings.io_path = IoPath::staged;
  settings.staging_bytes = 1u << 20;
  settings.pinned_pool_bytes = 4u << 20;
  for (const auto& c : cases) {
    (void)c.array->read({}, Device::cuda, settings);
    EXPECT_LE(pool.idle_pinned_bytes(), settings.pinned_pool_bytes) << c.source.name;
    const NDArray again = c.array->read({}, Device::cuda, settings);
    EXPECT_EQ(again.stats().pinned_allocations, 0u) << c.source.name << ": the second read allocated pinned memory";
    EXPECT_LE(pool.idle_pinned_bytes(), settings.pinned_pool_bytes) << c.source.name;
  }
  pool.trim();
  EXPECT_EQ(pool.idle_pinned_bytes(), 0u);
}

TEST(DeviceRead, StridedDestinationOnACallerStream) {
  REQUIRE_GPU();
  auto cases = load_cases();
  cudaStream_t stream = nullptr;
  check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  constexpr unsigned char kPadding = 0xab;
  for (const auto& c : cases) {
    SCOPED_TRACE(c.source.name);
    const Region region = middle_of(c.npy.shape);
    const std::vector<std::uint64_t> shape = region_shape(region);
    const std::size_t element = c.npy.dtype.size;
    std::uint64_t count = 1;
    for (auto extent : shape) count *= extent;
    if (count == 0) continue;
    // Padded strides: a gap after every element of the innermost dim and 24 spare bytes after
    // each row of every outer dim.
    std::vector<std::int64_t> strides(shape.size());
    std::int64_t stride = static_cast<std::int64_t>(2 * element);
    for (std::size_t d = shape.size(); d-- > 0;) {
      strides[d] = stride;
      stride = stride * static_cast<std::int64_t>(shape[d]) + 24 * static_cast<std::int64_t>(element);
    }
    const auto span = static_cast<std::size_t>(stride);
    void* device = nullptr;
    check(cudaMalloc(&device, span), "cudaMalloc");
    // Queued on the caller's stream before the read: the read must come after it.
    check(cudaMemsetAsync(device, kPadding, span, stream), "cudaMemsetAsync");
    Destination destination{device, strides, Device::cuda, stream};
    Settings settings;
    settings.io_path = IoPath::staged;
    ReadStats stats = c.array->read_into(region, destination, settings);
    EXPECT_EQ(stats.io_path, "staged");
    std::vector<std::byte> got(span);
    check(cudaMemcpyAsync(got.data(), device, span, cudaMemcpyDeviceToHost, stream), "cudaMemcpyAsync");
    check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
    check(cudaFree(device), "cudaFree");

    // The elements at their strided places, the padding untouched.
    const auto expected = slice_of(c.expected, c.npy.shape, region, element);
    std::vector<std::byte> placed(expected.size());
    std::vector<bool> used(span, false);
    for (std::uint64_t n = 0; n < count; ++n) {
      std::uint64_t rest = n;
      std::int64_t offset = 0;
      for (std::size_t d = shape.size(); d-- > 0;) {
        offset += static_cast<std::int64_t>(rest % shape[d]) * strides[d];
        rest /= shape[d];
      }
      std::memcpy(placed.data() + n * element, got.data() + offset, element);
      for (std::size_t b = 0; b < element; ++b) used[static_cast<std::size_t>(offset) + b] = true;
    }
    std::string why;
    EXPECT_TRUE(same_values(placed, expected, c.npy.dtype, why)) << why;
    std::size_t clobbered = 0;
    for (std::size_t b = 0; b < span; ++b)
      if (!used[b] && got[b] != std::byte{kPadding}) ++clobbered;
    EXPECT_EQ(clobbered, 0u) << "padding bytes overwritten";
  }
  check(cudaStreamDestroy(stream), "cudaStreamDestroy");
}

TEST(DeviceRead, ConcurrentReadsFromFourThreads) {
  REQUIRE_GPU();
  auto cases = load_cases();
  ASSERT_FALSE(cases.empty());
  std::atomic<int> failures{0};
  std::vector<std::string> errors(4);
  auto run = [&](unsigned t) {
    cudaStream_t stream = nullptr;
    if (cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) != cudaSuccess) {
      ++failures;
      errors[t] = "cudaStreamCreateWithFlags failed";
      return;
    }
    try {
      for (int round = 0; round < 3; ++round) {
        for (std::size_t i = t; i < cases.size() + t; ++i) {
          const Loaded& c = cases[i % cases.size()];
          const Region region = (round + i) % 2 ? middle_of(c.npy.shape) : full_region(c.npy.shape);
          const std::vector<std::uint64_t> shape = region_shape(region);
          std::uint64_t count = 1;
          for (auto extent : shape) count *= extent;
          const std::size_t nbytes = static_cast<std::size_t>(count * c.npy.dtype.size);
          Buffer buffer = Buffer::allocate(Device::cuda, nbytes);
          Settings settings;
          settings.threads = 3;
          settings.io_path = IoPath::staged;
          (void)c.array->read_into(region, {buffer.data(), {}, Device::cuda, stream}, settings);
          std::vector<std::byte> got(nbytes);
          if (nbytes && cudaMemcpy(got.data(), buffer.data(), nbytes, cudaMemcpyDeviceToHost) != cudaSuccess)
            throw std::runtime_error("cudaMemcpy failed");
          std::string why;
          if (!same_values(got, slice_of(c.expected, c.npy.shape, region, c.npy.dtype.size), c.npy.dtype, why)) {
            ++failures;
            errors[t] = c.source.name + ": " + why;
          }
        }
      }
    } catch (const std::exception& e) {
      ++failures;
      errors[t] = e.what();
    }
    cudaStreamDestroy(stream);
  };
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < 4; ++t) threads.emplace_back(run, t);
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0) << fmt::format("{}", fmt::join(errors, " | "));
}

TEST(DeviceRead, GdsReadsMatchOrFailClearly) {
  REQUIRE_GPU();
  auto cases = load_cases();
  const auto state = cuda::CuFile::instance().state();
  std::printf("cuFile: loaded %d, native %d: %s\n", state.loaded, state.native, state.detail.c_str());
  Settings settings;
  settings.io_path = IoPath::gds;
  std::size_t read = 0;
  for (const auto& c : cases) {
    try {
      expect_device_reads_match(c, settings, "gds");
      ++read;
    } catch (const Error& e) {
      // cuFile missing, its driver refusing to open, or (open in compatibility mode, as on the
      // GPU machine) refusing the file: one clear error naming GPUDirect Storage and the call.
      EXPECT_EQ(e.kind(), ErrorKind::unsupported) << e.what();
      EXPECT_NE(std::string(e.what()).find("GPUDirect Storage"), std::string::npos) << e.what();
      if (cuda::CuFile::instance().state().driver_open) {
        EXPECT_NE(std::string(e.what()).find("cuFileHandleRegister"), std::string::npos) << e.what();
      }
      std::printf("gds unavailable: %s\n", e.what());
      return;
    }
  }
  std::printf("gds: %zu cases read with cuFile (%s)\n", read, cuda::CuFile::instance().state().detail.c_str());
}

TEST(DeviceRead, StagedPathIsForcedByTheSetting) {
  REQUIRE_GPU();
  auto cases = load_cases();
  for (const auto& c : cases) {
    if (!uncompressed(c)) continue;
    Settings settings;
    settings.io_path = IoPath::staged;
    expect_device_reads_match(c, settings, "staged");
  }
}

TEST(DeviceRead, RefusesOrdinaryHostMemoryAsADeviceDestination) {
  REQUIRE_GPU();
  auto cases = load_cases();
  ASSERT_FALSE(cases.empty());
  const Loaded& c = cases.front();
  std::vector<std::byte> host(c.expected.size() + 64);
  try {
    (void)c.array->read_into({}, {host.data(), {}, Device::cuda, nullptr});
    FAIL() << "host memory accepted as a device destination";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::invalid_argument) << e.what();
  }
}

}  // namespace
}  // namespace zarrdirect

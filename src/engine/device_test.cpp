// Naming devices and checking them before a read or write: runs everywhere (CI has no GPU); the
// answer for a cuda device depends on the build and the machine, and each case is checked.
#include "zarrdirect/device.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>

#include <fmt/format.h>

#include "engine/array_writer.hpp"
#include "test_support.hpp"
#include "zarrdirect/array.hpp"

namespace zarrdirect {
namespace {

TEST(Device, ParsesCpuCudaAndOrdinals) {
  EXPECT_EQ(parse_device("cpu"), DeviceSpec(Device::cpu));
  EXPECT_EQ(parse_device("cuda"), DeviceSpec(Device::cuda));
  EXPECT_EQ(parse_device("gpu"), DeviceSpec(Device::cuda));  // the older alias
  EXPECT_EQ(parse_device("cuda:0"), DeviceSpec::cuda(0));
  EXPECT_EQ(parse_device("cuda:1"), DeviceSpec::cuda(1));
  EXPECT_EQ(parse_device("cuda:12"), DeviceSpec::cuda(12));
  EXPECT_EQ(parse_device("cuda").ordinal, DeviceSpec::kCurrent);
}

TEST(Device, RefusesAnythingElseQuotingIt) {
  for (const char* text : {"cuda:-1", "cuda:x", "cuda:", "cuda:1x", "cuda:+1", "cuda: 1", "gpu:1", "cpu:0", "GPU",
                           " cuda", "cuda:99999999999", "tpu", ""}) {
    SCOPED_TRACE(text);
    try {
      (void)parse_device(text);
      ADD_FAILURE() << "accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::invalid_argument);
      const std::string message = e.what();
      EXPECT_NE(message.find(std::string("\"") + text + "\""), std::string::npos) << message;
      EXPECT_NE(message.find("cuda:N"), std::string::npos) << message;
    }
  }
  // Control characters in the text are escaped, not printed.
  try {
    (void)parse_device("cuda:\n\x1b[2J");
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).find('\x1b'), std::string::npos) << e.what();
  }
}

TEST(Device, PrintsAsItParses) {
  for (const DeviceSpec device : {DeviceSpec(Device::cpu), DeviceSpec(Device::cuda), DeviceSpec::cuda(0),
                                  DeviceSpec::cuda(3)})
    EXPECT_EQ(parse_device(to_string(device)), device) << to_string(device);
  EXPECT_EQ(to_string(DeviceSpec::cuda(3)), "cuda:3");
  EXPECT_EQ(to_string(DeviceSpec(Device::cuda)), "cuda");
}

TEST(Device, CpuNeedsNothingAndTakesNoOrdinal) {
  EXPECT_NO_THROW(check_device(Device::cpu));
  try {
    check_device(DeviceSpec(Device::cpu, 1));
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::invalid_argument) << e.what();
  }
}

TEST(Device, NegativeOrdinalsAreRefused) {
  try {
    check_device(DeviceSpec::cuda(-2));
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::invalid_argument) << e.what();
    EXPECT_NE(std::string(e.what()).find("cuda:-2"), std::string::npos) << e.what();
  }
}

// What check_device must say for cuda:`ordinal` on this machine.
void expect_refused_for_this_machine(const std::function<void()>& attempt, int ordinal) {
  const int count = cuda_device_count();
  try {
    attempt();
    ADD_FAILURE() << "cuda:" << ordinal << " accepted with " << count << " devices";
  } catch (const Error& e) {
    const std::string message = e.what();
    if (count > 0) {
      EXPECT_EQ(e.kind(), ErrorKind::invalid_argument) << message;
      EXPECT_NE(message.find(fmt::format("cuda:{}: this machine has {} CUDA device", ordinal, count)),
                std::string::npos)
          << message;
    } else {
#ifdef ZARRDIRECT_WITH_CUDA
      EXPECT_EQ(e.kind(), ErrorKind::cuda) << message;  // a CUDA build without a usable device
      EXPECT_NE(message.find("no usable CUDA device"), std::string::npos) << message;
#else
      EXPECT_EQ(e.kind(), ErrorKind::unsupported) << message;
      EXPECT_NE(message.find("no CUDA support"), std::string::npos) << message;
#endif
    }
  }
}

TEST(Device, AnOrdinalThisMachineLacksIsRefusedNamingItAndTheCount) {
  const int count = cuda_device_count();
  for (int ordinal : {count, count + 2}) {
    SCOPED_TRACE(ordinal);
    expect_refused_for_this_machine([&] { check_device(DeviceSpec::cuda(ordinal)); }, ordinal);
    expect_refused_for_this_machine([&] { (void)Buffer::allocate(DeviceSpec::cuda(ordinal), 64); }, ordinal);
  }
}

// An array whose only chunk is corrupt: a read that got as far as the chunk fails with
// corrupt_data, so any other error shows the device was refused before reading.
class DeviceChecks : public ::testing::Test {
 protected:
  void SetUp() override {
    nlohmann::json doc = nlohmann::json::parse(R"({"zarr_format": 2, "shape": [4], "chunks": [4],
        "dtype": "<u2", "fill_value": 0, "order": "C", "compressor": {"id": "zlib", "level": 1}, "filters": null})");
    const std::uint16_t values[4] = {1, 2, 3, 4};
    write_array(dir / "a", doc, std::as_bytes(std::span(values)));
    std::ofstream(dir / "a" / "0", std::ios::binary | std::ios::trunc) << "not zlib";
    before = std::filesystem::file_size(dir / "a" / "0");
  }
  test::TempDir dir;
  std::uintmax_t before = 0;
};

TEST_F(DeviceChecks, HostReadsOfTheCorruptChunkFail) {
  Array array = Array::open(dir / "a");
  try {
    (void)array.read();
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::corrupt_data) << e.what();
  }
}

TEST_F(DeviceChecks, ReadsCheckTheDeviceBeforeReading) {
  Array array = Array::open(dir / "a");
  const int ordinal = cuda_device_count();
  expect_refused_for_this_machine([&] { (void)array.read({}, DeviceSpec::cuda(ordinal)); }, ordinal);
  // read_into with a named device: checked before the pointer is even looked at.
  std::uint16_t out[4] = {};
  Destination destination{out, {}, Device::cuda, nullptr, ordinal};
  expect_refused_for_this_machine([&] { (void)array.read_into({}, destination); }, ordinal);
}

TEST_F(DeviceChecks, WritesCheckTheDeviceBeforeWriting) {
  Array array = Array::open(dir / "a");
  const int ordinal = cuda_device_count();
  const std::uint16_t values[4] = {5, 6, 7, 8};
  Source source;
  source.data = values;
  source.device = Device::cuda;
  source.device_ordinal = ordinal;
  expect_refused_for_this_machine([&] { (void)array.write({}, source); }, ordinal);
  EXPECT_EQ(std::filesystem::file_size(dir / "a" / "0"), before);  // nothing written
}

TEST(Device, HostResultsHaveNoOrdinal) {
  EXPECT_EQ(Buffer::allocate(Device::cpu, 8).device_ordinal(), DeviceSpec::kCurrent);
  EXPECT_EQ(Buffer().device_ordinal(), DeviceSpec::kCurrent);
}

}  // namespace
}  // namespace zarrdirect

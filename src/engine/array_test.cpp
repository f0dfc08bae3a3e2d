#include "zarrdirect/array.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>

#include "engine/array_writer.hpp"
#include "test_support.hpp"

namespace zarrdirect {
namespace {

TEST(Buffer, HostBuffersAreAlignedAndSized) {
  for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{5000}, std::size_t{3} << 20}) {
    Buffer buffer = Buffer::allocate(Device::cpu, n);
    EXPECT_EQ(buffer.size(), n);
    EXPECT_EQ(buffer.device(), Device::cpu);
    ASSERT_NE(buffer.data(), nullptr);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(buffer.data()) % 4096, 0u);
    if (n) std::memset(buffer.data(), 0xab, n);  // all of it is ours
  }
  EXPECT_EQ(Buffer().data(), nullptr);
  EXPECT_EQ(Buffer().size(), 0u);
}

TEST(Buffer, ImpossibleSizesAreErrorsNotTinyBuffers) {
  for (std::size_t n : {SIZE_MAX, SIZE_MAX - 4095, SIZE_MAX - (std::size_t{2} << 20) + 1, std::size_t{1} << 62}) {
    try {
      Buffer buffer = Buffer::allocate(Device::cpu, n);
      ADD_FAILURE() << n << " bytes allocated";
    } catch (const Error& e) {
      EXPECT_TRUE(e.kind() == ErrorKind::invalid_argument || e.kind() == ErrorKind::io) << e.what();
    }
  }
}

#ifndef ZARRDIRECT_WITH_CUDA
TEST(Buffer, DeviceBuffersNeedCuda) {
  try {
    Buffer::allocate(Device::cuda, 16);
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::unsupported);
  }
}
#endif

TEST(Array, OpenAndDescribe) {
  test::TempDir dir;
  nlohmann::json doc = nlohmann::json::parse(R"({"zarr_format": 2, "shape": [3, 2], "chunks": [2, 2],
      "dtype": "<f4", "fill_value": "NaN", "order": "C", "compressor": null, "filters": null})");
  std::vector<float> values{1, 2, 3, 4, 5, 6};
  write_array(dir / "a", doc, std::as_bytes(std::span(values)));
  Array array = Array::open(dir / "a");
  EXPECT_EQ(array.path(), dir / "a");
  EXPECT_EQ(array.metadata().zarr_format, 2);
  Array copy = array;  // cheap to copy: the same state
  EXPECT_EQ(&copy.metadata(), &array.metadata());
  NDArray result = copy.read();
  EXPECT_EQ(result.device(), Device::cpu);
  EXPECT_EQ(result.dtype(), (DataType{ScalarKind::floating, 4}));
  EXPECT_EQ(result.nbytes(), 24u);
  EXPECT_EQ(std::memcmp(result.data(), values.data(), 24), 0);
  EXPECT_EQ(to_string(Device::cuda), "cuda");
  EXPECT_EQ(to_string(Device::cpu), "cpu");
}

TEST(Array, OpenFailuresAreErrors) {
  test::TempDir dir;
  try {
    Array::open(dir / "missing");
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::io);
    EXPECT_NE(std::string(e.what()).find("missing"), std::string::npos);
  }
  test::write_text(dir / "file", "x");
  EXPECT_THROW(Array::open(dir / "file"), Error);
}

}  // namespace
}  // namespace zarrdirect

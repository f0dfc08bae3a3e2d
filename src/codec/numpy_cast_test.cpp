#include "codec/numpy_cast.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "codec/codec_test_support.hpp"

namespace zarrdirect::codec {
namespace {

using namespace test;

// Casts `values` (of type `from`) to `to` and returns the converted elements as `To`.
template <class To, class From>
std::vector<To> cast(const std::vector<From>& values, std::string_view from, std::string_view to) {
  auto source = bytes_of(values);
  std::vector<std::byte> target(values.size() * sizeof(To));
  cast_elements("test.cast", source, dtype(from), target, dtype(to));
  return values_of<To>(target);
}

std::uint32_t bits_of(float value) {
  std::uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

TEST(NumpyCast, IntegersWrapToTheLowBits) {
  EXPECT_EQ((cast<std::int16_t>(std::vector<std::int64_t>{70000, -70000, -1, 32768, 5}, "int64", "int16")),
            (std::vector<std::int16_t>{4464, -4464, -1, -32768, 5}));
  EXPECT_EQ((cast<std::int8_t>(std::vector<std::uint64_t>{~std::uint64_t{0}, 128, 127}, "uint64", "int8")),
            (std::vector<std::int8_t>{-1, -128, 127}));
  // Sign extension going wider, reinterpretation going to unsigned.
  EXPECT_EQ((cast<std::uint32_t>(std::vector<std::int8_t>{-1, -128, 3}, "int8", "uint32")),
            (std::vector<std::uint32_t>{0xffffffffu, 0xffffff80u, 3}));
  EXPECT_EQ((cast<std::int64_t>(std::vector<std::uint16_t>{65535, 0}, "uint16", "int64")),
            (std::vector<std::int64_t>{65535, 0}));
}

TEST(NumpyCast, FloatsTruncateTowardZeroIntoIntegers) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ((cast<std::int32_t>(std::vector<double>{-2.7, 2.9999, -0.5, 1e10}, "float64", "int32")),
            (std::vector<std::int32_t>{-2, 2, 0, 1410065408}));  // 1e10 keeps its low 32 bits
  // Beyond int64 (or NaN) NumPy leaves the result to the C compiler: x86-64 gives INT64_MIN.
  constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();
  EXPECT_EQ((cast<std::int64_t>(std::vector<double>{nan, 1e300, -HUGE_VAL, -9.2e18}, "float64", "int64")),
            (std::vector<std::int64_t>{kMin, kMin, kMin, -9200000000000000000}));
  EXPECT_EQ((cast<std::int32_t>(std::vector<double>{nan}, "float64", "int32")), (std::vector<std::int32_t>{0}));
  // uint64 holds the values from 2^63 up; negatives wrap as their int64 value does.
  EXPECT_EQ((cast<std::uint64_t>(std::vector<double>{1e19, -1.0, 0.99}, "float64", "uint64")),
            (std::vector<std::uint64_t>{10000000000000000000ull, ~std::uint64_t{0}, 0}));
  EXPECT_EQ((cast<std::uint8_t>(std::vector<float>{255.9f, 256.5f, -1.5f}, "float32", "uint8")),
            (std::vector<std::uint8_t>{255, 0, 255}));
}

TEST(NumpyCast, FloatsRoundToNearest) {
  EXPECT_EQ((cast<float>(std::vector<double>{0.1, -1e300, 1e-50}, "float64", "float32")),
            (std::vector<float>{0.1f, -HUGE_VALF, 0.0f}));
  // 2^24 + 1 is not a float: it rounds to even.
  EXPECT_EQ((cast<float>(std::vector<std::uint32_t>{16777217, 16777219}, "uint32", "float32")),
            (std::vector<float>{16777216.0f, 16777220.0f}));
  EXPECT_EQ((cast<double>(std::vector<std::int64_t>{-3, std::int64_t{1} << 53}, "int64", "float64")),
            (std::vector<double>{-3.0, 9007199254740992.0}));
}

TEST(NumpyCast, HalfFloats) {
  // float16 bit patterns: 1.0, -2.0, the largest finite half, and 65520, which rounds to infinity.
  EXPECT_EQ((cast<std::uint16_t>(std::vector<float>{1.0f, -2.0f, 65504.0f, 65520.0f}, "float32", "float16")),
            (std::vector<std::uint16_t>{0x3C00, 0xC000, 0x7BFF, 0x7C00}));
  // 1.5, -1.5 and infinity as halves, truncated into int16.
  EXPECT_EQ((cast<std::int16_t>(std::vector<std::uint16_t>{0x3E00, 0xBE00, 0x7C00}, "float16", "int16")),
            (std::vector<std::int16_t>{1, -1, 0}));
  EXPECT_EQ((cast<double>(std::vector<std::uint16_t>{0x3555}, "float16", "float64")),
            (std::vector<double>{0.333251953125}));
  // float64 -> float16 rounds once, as NumPy: through float 1 + 2^-11 + 2^-40 landed on a tie and
  // went to 1.0 (an astype filter writing float16 stored the wrong half).
  EXPECT_EQ((cast<std::uint16_t>(std::vector<double>{1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40),
                                                     2049.0 + std::ldexp(1.0, -30)},
                                 "float64", "float16")),
            (std::vector<std::uint16_t>{0x3C01, 0x6801}));
}

TEST(NumpyCast, BooleansMeanNonzero) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ((cast<std::uint8_t>(std::vector<float>{0.0f, -0.0f, 0.5f, nan, -3.0f}, "float32", "bool")),
            (std::vector<std::uint8_t>{0, 0, 1, 1, 1}));
  EXPECT_EQ((cast<std::uint8_t>(std::vector<std::int32_t>{0, 256, -1}, "int32", "bool")),
            (std::vector<std::uint8_t>{0, 1, 1}));
  // Any nonzero byte is true, and true converts to one.
  EXPECT_EQ((cast<std::int32_t>(std::vector<std::uint8_t>{0, 1, 2, 255}, "bool", "int32")),
            (std::vector<std::int32_t>{0, 1, 1, 1}));
  EXPECT_EQ((cast<double>(std::vector<std::uint8_t>{7, 0}, "bool", "float64")), (std::vector<double>{1.0, 0.0}));
}

TEST(NumpyCast, TheSameTypeIsCopiedBitForBit) {
  // A NaN's payload survives, as does a bool byte other than 0 or 1.
  std::vector<std::uint32_t> nan_bits{0x7fc00001u, 0xffc12345u};
  auto floats = cast<std::uint32_t>(nan_bits, "float32", "float32");
  EXPECT_EQ(floats, nan_bits);
  EXPECT_EQ((cast<std::uint8_t>(std::vector<std::uint8_t>{2, 0, 255}, "bool", "bool")),
            (std::vector<std::uint8_t>{2, 0, 255}));
  // Complex types are refused only when converted: as they are, they are copied.
  std::vector<float> complex_values{1.5f, -2.5f, 3.0f, 0.25f};
  EXPECT_EQ((cast<float>(complex_values, "complex64", "complex64")), complex_values);
  EXPECT_EQ(bits_of(cast<float>(std::vector<float>{-0.0f}, "float32", "float32")[0]), 0x80000000u);
}

TEST(NumpyCast, WritesExactlyOneTargetElementPerSourceElement) {
  // Widening: three uint8 become three float64 (24 bytes); the bytes after them are untouched.
  auto source = bytes_of(std::vector<std::uint8_t>{0, 128, 255});
  std::vector<std::byte> target(3 * sizeof(double) + 4, std::byte{0xEE});
  cast_elements("test.cast", source, dtype("uint8"), MutableByteSpan(target).first(3 * sizeof(double)),
                dtype("float64"));
  std::vector<double> values(3);
  std::memcpy(values.data(), target.data(), 3 * sizeof(double));
  EXPECT_EQ(values, (std::vector<double>{0.0, 128.0, 255.0}));
  for (std::size_t i = 3 * sizeof(double); i < target.size(); ++i) EXPECT_EQ(target[i], std::byte{0xEE}) << i;

  // Narrowing: four int32 become four int8 and nothing more.
  source = bytes_of(std::vector<std::int32_t>{1, -2, 300, 4});
  target.assign(8, std::byte{0xEE});
  cast_elements("test.cast", source, dtype("int32"), MutableByteSpan(target).first(4), dtype("int8"));
  EXPECT_EQ(values_of<std::int8_t>(std::vector<std::byte>(target.begin(), target.begin() + 4)),
            (std::vector<std::int8_t>{1, -2, 44, 4}));
  for (std::size_t i = 4; i < target.size(); ++i) EXPECT_EQ(target[i], std::byte{0xEE}) << i;

  // No elements: nothing is written.
  target.assign(4, std::byte{0xEE});
  cast_elements("test.cast", ByteSpan(), dtype("float32"), MutableByteSpan(target).first(0), dtype("uint16"));
  EXPECT_EQ(target, std::vector<std::byte>(4, std::byte{0xEE}));
}

TEST(NumpyCast, ComplexConversionsAreUnsupportedNamingTheCodec) {
  std::vector<std::byte> complex_bytes(16), target(16);
  expect_error(ErrorKind::unsupported, {"my.codec", "complex64"}, [&] {
    cast_elements("my.codec", complex_bytes, dtype("complex64"), MutableByteSpan(target).first(8), dtype("float32"));
  });
  expect_error(ErrorKind::unsupported, {"my.codec", "complex128"}, [&] {
    cast_elements("my.codec", ByteSpan(complex_bytes).first(8), dtype("float64"), target, dtype("complex128"));
  });
}

}  // namespace
}  // namespace zarrdirect::codec

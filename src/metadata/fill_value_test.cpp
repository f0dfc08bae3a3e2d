#include "metadata/fill_value.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

#include "zarrdirect/error.hpp"

namespace zarrdirect {
namespace {

using nlohmann::json;

const DataType kBool{ScalarKind::boolean, 1};
const DataType kI8{ScalarKind::signed_int, 1};
const DataType kI16{ScalarKind::signed_int, 2};
const DataType kI32{ScalarKind::signed_int, 4};
const DataType kI64{ScalarKind::signed_int, 8};
const DataType kU8{ScalarKind::unsigned_int, 1};
const DataType kU16{ScalarKind::unsigned_int, 2};
const DataType kU32{ScalarKind::unsigned_int, 4};
const DataType kU64{ScalarKind::unsigned_int, 8};
const DataType kF16{ScalarKind::floating, 2};
const DataType kF32{ScalarKind::floating, 4};
const DataType kF64{ScalarKind::floating, 8};
const DataType kC64{ScalarKind::complex, 8};
const DataType kC128{ScalarKind::complex, 16};

template <typename T>
T as(const std::vector<std::byte>& bytes) {
  EXPECT_EQ(bytes.size(), sizeof(T));
  T value{};
  std::memcpy(&value, bytes.data(), std::min(bytes.size(), sizeof(T)));
  return value;
}

std::vector<std::byte> v3(const json& value, const DataType& type) {
  return parse_fill_value(value, type, FillValueDialect::v3, "x/zarr.json");
}
std::vector<std::byte> v2(const json& value, const DataType& type) {
  return parse_fill_value(value, type, FillValueDialect::v2, "x/.zarray");
}

void expect_refused(const json& value, const DataType& type, FillValueDialect dialect = FillValueDialect::v3) {
  try {
    parse_fill_value(value, type, dialect, "x/zarr.json");
    ADD_FAILURE() << value.dump() << " accepted for " << type.name();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::invalid_metadata) << e.what();
    std::string message = e.what();
    EXPECT_NE(message.find("x/zarr.json"), std::string::npos) << message;
    EXPECT_NE(message.find("fill_value"), std::string::npos) << message;
  }
}

TEST(FillValue, Integers) {
  EXPECT_EQ(as<std::int8_t>(v3(-128, kI8)), -128);
  EXPECT_EQ(as<std::int8_t>(v3(127, kI8)), 127);
  EXPECT_EQ(as<std::int16_t>(v3(-32768, kI16)), -32768);
  EXPECT_EQ(as<std::int32_t>(v3(-5, kI32)), -5);
  EXPECT_EQ(as<std::int64_t>(v3(std::numeric_limits<std::int64_t>::min(), kI64)), std::numeric_limits<std::int64_t>::min());
  EXPECT_EQ(as<std::uint8_t>(v3(255, kU8)), 255);
  EXPECT_EQ(as<std::uint16_t>(v3(65535, kU16)), 65535);
  EXPECT_EQ(as<std::uint32_t>(v3(4294967295u, kU32)), 4294967295u);
  EXPECT_EQ(as<std::uint64_t>(v3(json(~std::uint64_t{0}), kU64)), ~std::uint64_t{0});
  // zarr-python 2 writes 0.0 for integer arrays at times.
  EXPECT_EQ(as<std::int32_t>(v2(json(3.0), kI32)), 3);
}

TEST(FillValue, IntegersOutOfRangeOrOfTheWrongType) {
  expect_refused(128, kI8);
  expect_refused(-129, kI8);
  expect_refused(256, kU8);
  expect_refused(-1, kU8);
  expect_refused(-1, kU64);
  expect_refused(65536, kU16);
  expect_refused(2147483648LL, kI32);
  expect_refused(json(~std::uint64_t{0}), kI64);
  expect_refused(1.5, kI32);
  expect_refused("1", kI32);
  expect_refused("NaN", kI32);
  expect_refused(true, kU8);
  expect_refused(json::array({1}), kU8);
  expect_refused(json::object(), kU8);
  // Whole floats at and just past the edges of the 64-bit types.
  expect_refused(9223372036854775808.0, kI64);
  expect_refused(18446744073709551616.0, kU64);
  expect_refused(-1.0, kU64);
  expect_refused(1e300, kI64);
  expect_refused(-9223372036854777856.0, kI64);
  EXPECT_EQ(as<std::int64_t>(v2(json(-9223372036854775808.0), kI64)), std::numeric_limits<std::int64_t>::min());
  EXPECT_EQ(as<std::uint64_t>(v2(json(18446744073709549568.0), kU64)), 18446744073709549568ull);
  expect_refused(json(std::numeric_limits<double>::infinity()), kI32);
}

TEST(FillValue, Booleans) {
  EXPECT_EQ(as<std::uint8_t>(v3(true, kBool)), 1);
  EXPECT_EQ(as<std::uint8_t>(v3(false, kBool)), 0);
  EXPECT_EQ(as<std::uint8_t>(v2(1, kBool)), 1);  // zarr-python 2 writes 0 / 1
  EXPECT_EQ(as<std::uint8_t>(v2(0, kBool)), 0);
  expect_refused(1, kBool);
  expect_refused(2, kBool, FillValueDialect::v2);
  expect_refused("true", kBool);
  expect_refused(0.0, kBool);
}

TEST(FillValue, FloatsNumbersAndSpecialStrings) {
  EXPECT_EQ(as<float>(v3(1.5, kF32)), 1.5f);
  EXPECT_EQ(as<double>(v3(-2.25, kF64)), -2.25);
  EXPECT_EQ(as<double>(v3(7, kF64)), 7.0);
  EXPECT_TRUE(std::isnan(as<double>(v3("NaN", kF64))));
  EXPECT_TRUE(std::isnan(as<float>(v3("NaN", kF32))));
  EXPECT_EQ(as<double>(v3("Infinity", kF64)), std::numeric_limits<double>::infinity());
  EXPECT_EQ(as<float>(v3("-Infinity", kF32)), -std::numeric_limits<float>::infinity());
  EXPECT_EQ(as<std::uint16_t>(v3("Infinity", kF16)), 0x7c00u);
  EXPECT_EQ(as<std::uint16_t>(v3("-Infinity", kF16)), 0xfc00u);
  EXPECT_EQ(as<std::uint16_t>(v3(1.0, kF16)), 0x3c00u);
  EXPECT_EQ(as<std::uint16_t>(v3(-2.0, kF16)), 0xc000u);
  std::uint16_t half_nan = as<std::uint16_t>(v3("NaN", kF16));
  EXPECT_EQ(half_nan & 0x7c00u, 0x7c00u);
  EXPECT_NE(half_nan & 0x3ffu, 0u);
  expect_refused("nan", kF32);
  expect_refused("inf", kF32);
  expect_refused("1.5", kF64);
  expect_refused(true, kF64);
  expect_refused(json::array({1.0}), kF64);
}

TEST(FillValue, HexBitsGiveTheExactBits) {
  EXPECT_EQ(as<double>(v3("0x3ff0000000000000", kF64)), 1.0);
  EXPECT_EQ(as<std::uint64_t>(v3("0x7ff8000000000001", kF64)), 0x7ff8000000000001ull);  // NaN payload kept
  EXPECT_EQ(as<float>(v3("0x3fc00000", kF32)), 1.5f);
  EXPECT_EQ(as<std::uint32_t>(v3("0xFFC00001", kF32)), 0xffc00001u);
  EXPECT_EQ(as<std::uint16_t>(v3("0x3c00", kF16)), 0x3c00u);
  EXPECT_EQ(as<std::uint16_t>(v3("0x7e01", kF16)), 0x7e01u);
  expect_refused("0x3c0", kF16);         // too few digits
  expect_refused("0x3ff00000", kF64);    // digits of a float32
  expect_refused("0x3fc0000g", kF32);    // not hex
  expect_refused("0x", kF32);
  expect_refused("0x3fc00000", kF32, FillValueDialect::v2);  // v2 has no hex form
}

TEST(FillValue, Complex) {
  auto c64 = v3(json::array({1.5, -2.0}), kC64);
  ASSERT_EQ(c64.size(), 8u);
  float parts[2];
  std::memcpy(parts, c64.data(), 8);
  EXPECT_EQ(parts[0], 1.5f);
  EXPECT_EQ(parts[1], -2.0f);
  auto c128 = v3(json::array({"NaN", "0x4000000000000000"}), kC128);
  double dparts[2];
  std::memcpy(dparts, c128.data(), 16);
  EXPECT_TRUE(std::isnan(dparts[0]));
  EXPECT_EQ(dparts[1], 2.0);
  auto real_only = v2(3.0, kC128);
  std::memcpy(dparts, real_only.data(), 16);
  EXPECT_EQ(dparts[0], 3.0);
  EXPECT_EQ(dparts[1], 0.0);
  expect_refused(json::array({1.0}), kC64);
  expect_refused(json::array({1.0, 2.0, 3.0}), kC64);
  expect_refused(json::array({1.0, "x"}), kC64);
  expect_refused(json::object({{"re", 1.0}}), kC64);
}

TEST(FillValue, NullIsZeroInV2AndAnErrorInV3) {
  EXPECT_EQ(v2(nullptr, kF64), std::vector<std::byte>(8));
  EXPECT_EQ(v2(nullptr, kC128), std::vector<std::byte>(16));
  expect_refused(nullptr, kF64);
  EXPECT_TRUE(std::isnan(as<double>(v2("NaN", kF64))));
}

TEST(Half, KnownValues) {
  EXPECT_EQ(float_to_half(0.0f), 0x0000u);
  EXPECT_EQ(float_to_half(-0.0f), 0x8000u);
  EXPECT_EQ(float_to_half(1.0f), 0x3c00u);
  EXPECT_EQ(float_to_half(65504.0f), 0x7bffu);              // largest finite half
  EXPECT_EQ(float_to_half(65520.0f), 0x7c00u);              // rounds up to infinity
  EXPECT_EQ(float_to_half(1e10f), 0x7c00u);
  EXPECT_EQ(float_to_half(-1e10f), 0xfc00u);
  EXPECT_EQ(float_to_half(std::ldexp(1.0f, -24)), 0x0001u);  // smallest subnormal
  EXPECT_EQ(float_to_half(std::ldexp(1.0f, -14)), 0x0400u);  // smallest normal
  EXPECT_EQ(float_to_half(std::ldexp(1.0f, -26)), 0x0000u);  // underflows to zero
  EXPECT_EQ(float_to_half(1.0f + std::ldexp(1.0f, -11)), 0x3c00u);  // halfway: to even (down)
  EXPECT_EQ(float_to_half(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02u);  // halfway: to even (up)
  EXPECT_EQ(half_to_float(0x3555u), 0.333251953125f);
  EXPECT_EQ(half_to_float(0xfc00u), -std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(half_to_float(0x7e00u)));
  EXPECT_EQ(half_to_float(0x0001u), std::ldexp(1.0f, -24));
  EXPECT_EQ(half_to_float(0x8001u), -std::ldexp(1.0f, -24));
}

TEST(Half, EveryHalfRoundTripsThroughFloat) {
  for (std::uint32_t bits = 0; bits <= 0xffffu; ++bits) {
    auto half = static_cast<std::uint16_t>(bits);
    float value = half_to_float(half);
    if (std::isnan(value)) {
      std::uint16_t back = float_to_half(value);
      EXPECT_EQ(back & 0x7c00u, 0x7c00u);
      EXPECT_NE(back & 0x3ffu, 0u) << bits;
      continue;
    }
    ASSERT_EQ(float_to_half(value), half) << "bits " << bits;
  }
}

TEST(Half, FloatToHalfRoundsToNearest) {
  // Every float between two adjacent halves goes to the nearer one.
  for (std::uint32_t bits = 0x0000; bits < 0x7bff; bits += 7) {
    float low = half_to_float(static_cast<std::uint16_t>(bits));
    float high = half_to_float(static_cast<std::uint16_t>(bits + 1));
    float quarter = low + (high - low) / 4;
    float three_quarters = low + 3 * (high - low) / 4;
    EXPECT_EQ(float_to_half(quarter), bits);
    EXPECT_EQ(float_to_half(three_quarters), bits + 1);
    EXPECT_EQ(float_to_half(-quarter), bits | 0x8000u);
  }
}

// A float16 fill value is rounded once, from the double, as NumPy (and so zarr-python) rounds it:
// through float, 1 + 2^-11 + 2^-40 became the tie 1 + 2^-11 and rounded to even, 1.0, not 1.001.
TEST(Half, DoubleToHalfRoundsOnceAsNumpy) {
  const double just_above_tie = 1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40);
  EXPECT_EQ(double_to_half(just_above_tie), 0x3c01u);
  EXPECT_EQ(double_to_half(2049.0 + std::ldexp(1.0, -30)), 0x6801u);  // 2050, not 2048
  EXPECT_EQ(double_to_half(1.0 + std::ldexp(1.0, -11)), 0x3c00u);     // an exact tie: to even
  EXPECT_EQ(double_to_half(std::ldexp(1.0, -25) * (1 + std::ldexp(1.0, -50))), 0x0001u);  // subnormal, above the tie
  EXPECT_EQ(double_to_half(std::ldexp(1.0, -25)), 0x0000u);
  EXPECT_EQ(double_to_half(65519.99), 0x7bffu);
  EXPECT_EQ(double_to_half(65520.0), 0x7c00u);
  EXPECT_EQ(double_to_half(-1e300), 0xfc00u);
  EXPECT_EQ(double_to_half(-0.0), 0x8000u);
  EXPECT_EQ(as<std::uint16_t>(v2(just_above_tie, kF16)), 0x3c01u);
  // Every float goes where float_to_half puts it (one rounding either way).
  for (std::uint32_t bits = 0; bits < 0x7f800000u; bits += 4099) {
    const float value = std::bit_cast<float>(bits);
    ASSERT_EQ(double_to_half(value), float_to_half(value)) << value;
    ASSERT_EQ(double_to_half(-static_cast<double>(value)), float_to_half(-value)) << value;
  }
}

}  // namespace
}  // namespace zarrdirect

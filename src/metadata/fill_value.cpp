#include "metadata/fill_value.hpp"

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

#include <fmt/format.h>

#include "metadata/json_fields.hpp"
#include "zarrdirect/error.hpp"

namespace zarrdirect {
namespace {

[[noreturn]] void bad_fill(const std::string& where, const DataType& type, const nlohmann::json& value,
                           std::string_view why) {
  throw Error(ErrorKind::invalid_metadata,
              fmt::format("{}: fill_value {} is not a valid {}: {}", where, quoted_json(value), type.name(), why));
}

template <typename T>
std::vector<std::byte> bytes_of(T value) {
  std::vector<std::byte> bytes(sizeof(T));
  std::memcpy(bytes.data(), &value, sizeof(T));
  return bytes;
}

// "0x3ff0000000000000": the raw bits of a float, big-endian hex as the v3 spec writes them.
std::vector<std::byte> parse_hex_bits(const std::string& text, std::size_t size, const std::string& where,
                                      const DataType& type, const nlohmann::json& value) {
  std::string digits = text.substr(2);
  if (digits.size() != size * 2) bad_fill(where, type, value, fmt::format("expected {} hex digits", size * 2));
  std::uint64_t bits = 0;
  for (char c : digits) {
    int nibble;
    if (c >= '0' && c <= '9') nibble = c - '0';
    else if (c >= 'a' && c <= 'f') nibble = c - 'a' + 10;
    else if (c >= 'A' && c <= 'F') nibble = c - 'A' + 10;
    else bad_fill(where, type, value, "not a hex digit");
    bits = (bits << 4) | static_cast<std::uint64_t>(nibble);
  }
  std::vector<std::byte> bytes(size);
  if (size == 2) { auto v = static_cast<std::uint16_t>(bits); std::memcpy(bytes.data(), &v, 2); }
  else if (size == 4) { auto v = static_cast<std::uint32_t>(bits); std::memcpy(bytes.data(), &v, 4); }
  else std::memcpy(bytes.data(), &bits, 8);
  return bytes;
}

// One float component: a number, "NaN", "Infinity", "-Infinity" or (v3) "0x..." raw bits.
std::vector<std::byte> parse_float(const nlohmann::json& value, std::size_t size, FillValueDialect dialect,
                                   const std::string& where, const DataType& type) {
  double number = 0;
  if (value.is_number()) {
    number = value.get<double>();
  } else if (value.is_string()) {
    auto text = value.get<std::string>();
    if (text == "NaN") number = std::numeric_limits<double>::quiet_NaN();
    else if (text == "Infinity") number = std::numeric_limits<double>::infinity();
    else if (text == "-Infinity") number = -std::numeric_limits<double>::infinity();
    else if (dialect == FillValueDialect::v3 && text.rfind("0x", 0) == 0)
      return parse_hex_bits(text, size, where, type, value);
    else bad_fill(where, type, value, "strings allowed are \"NaN\", \"Infinity\", \"-Infinity\"");
  } else {
    bad_fill(where, type, value, "expected a number");
  }
  if (size == 2) return bytes_of(double_to_half(number));  // not through float: that rounds twice
  if (size == 4) return bytes_of(static_cast<float>(number));
  return bytes_of(number);
}

template <typename T>
std::vector<std::byte> parse_integer(const nlohmann::json& value, const std::string& where, const DataType& type) {
  if (value.is_number_unsigned()) {
    auto v = value.get<std::uint64_t>();
    if (v > static_cast<std::uint64_t>(std::numeric_limits<T>::max())) bad_fill(where, type, value, "out of range");
    return bytes_of(static_cast<T>(v));
  }
  if (value.is_number_integer()) {
    auto v = value.get<std::int64_t>();
    if constexpr (std::is_unsigned_v<T>) {
      if (v < 0) bad_fill(where, type, value, "out of range");
      if (static_cast<std::uint64_t>(v) > std::numeric_limits<T>::max()) bad_fill(where, type, value, "out of range");
    } else {
      if (v < std::numeric_limits<T>::min() || v > std::numeric_limits<T>::max())
        bad_fill(where, type, value, "out of range");
    }
    return bytes_of(static_cast<T>(v));
  }
  if (value.is_number_float()) {
    // zarr-python 2 writes 0.0 for integer arrays at times: accept whole numbers only.
    double v = value.get<double>();
    if (std::trunc(v) != v) bad_fill(where, type, value, "an integer type needs a whole number");
    // [min, 2^digits): max itself rounds up to 2^digits as a double, which does not fit.
    if (v < static_cast<double>(std::numeric_limits<T>::min()) || v >= std::ldexp(1.0, std::numeric_limits<T>::digits))
      bad_fill(where, type, value, "out of range");
    return bytes_of(static_cast<T>(v));
  }
  bad_fill(where, type, value, "expected an integer");
}

}  // namespace

std::uint16_t float_to_half(float value) {
  auto bits = std::bit_cast<std::uint32_t>(value);
  std::uint32_t sign = (bits >> 16) & 0x8000u;
  std::uint32_t exponent = (bits >> 23) & 0xffu;
  std::uint32_t mantissa = bits & 0x7fffffu;
  if (exponent == 0xff) return static_cast<std::uint16_t>(sign | 0x7c00u | (mantissa ? 0x200u : 0u));
  int e = static_cast<int>(exponent) - 127 + 15;
  if (e >= 0x1f) return static_cast<std::uint16_t>(sign | 0x7c00u);  // overflow: infinity
  if (e <= 0) {
    if (e < -10) return static_cast<std::uint16_t>(sign);  // underflow: signed zero
    mantissa |= 0x800000u;
    auto shift = static_cast<std::uint32_t>(14 - e);
    std::uint32_t half = mantissa >> shift;
    std::uint32_t rest = mantissa & ((1u << shift) - 1u);
    std::uint32_t halfway = 1u << (shift - 1);
    if (rest > halfway || (rest == halfway && (half & 1u))) ++half;
    return static_cast<std::uint16_t>(sign | half);
  }
  std::uint32_t half = sign | (static_cast<std::uint32_t>(e) << 10) | (mantissa >> 13);
  std::uint32_t rest = mantissa & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1u))) ++half;  // may carry into the exponent: correct
  return static_cast<std::uint16_t>(half);
}

std::uint16_t double_to_half(double value) {
  auto bits = std::bit_cast<std::uint64_t>(value);
  auto sign = static_cast<std::uint32_t>((bits >> 48) & 0x8000u);
  auto exponent = static_cast<std::uint32_t>((bits >> 52) & 0x7ffu);
  std::uint64_t mantissa = bits & 0xfffffffffffffull;
  if (exponent == 0x7ff) return static_cast<std::uint16_t>(sign | 0x7c00u | (mantissa ? 0x200u : 0u));
  int e = static_cast<int>(exponent) - 1023 + 15;
  if (e >= 0x1f) return static_cast<std::uint16_t>(sign | 0x7c00u);  // overflow: infinity
  if (e <= 0) {
    if (e < -10) return static_cast<std::uint16_t>(sign);  // below half the smallest subnormal: signed zero
    mantissa |= 1ull << 52;
    auto shift = static_cast<std::uint32_t>(43 - e);
    std::uint64_t half = mantissa >> shift;
    std::uint64_t rest = mantissa & ((1ull << shift) - 1u);
    std::uint64_t halfway = 1ull << (shift - 1);
    if (rest > halfway || (rest == halfway && (half & 1u))) ++half;
    return static_cast<std::uint16_t>(sign | static_cast<std::uint32_t>(half));
  }
  auto half = sign | (static_cast<std::uint32_t>(e) << 10) | static_cast<std::uint32_t>(mantissa >> 42);
  std::uint64_t rest = mantissa & ((1ull << 42) - 1u);
  if (rest > (1ull << 41) || (rest == (1ull << 41) && (half & 1u))) ++half;  // may carry into the exponent: correct
  return static_cast<std::uint16_t>(half);
}

float half_to_float(std::uint16_t bits) {
  std::uint32_t sign = static_cast<std::uint32_t>(bits & 0x8000u) << 16;
  std::uint32_t exponent = (bits >> 10) & 0x1fu;
  std::uint32_t mantissa = bits & 0x3ffu;
  if (exponent == 0x1f) return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13));
  if (exponent == 0) {
    if (mantissa == 0) return std::bit_cast<float>(sign);
    float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
    return sign ? -magnitude : magnitude;
  }
  return std::bit_cast<float>(sign | ((exponent + 112u) << 23) | (mantissa << 13));
}

std::vector<std::byte> parse_fill_value(const nlohmann::json& value, const DataType& type,
                                        FillValueDialect dialect, const std::string& where) {
  if (value.is_null()) {
    // v3 requires a fill value; v2's null means "no fill value": zero bytes, as zarr-python uses.
    if (dialect == FillValueDialect::v3) bad_fill(where, type, value, "zarr v3 requires a fill value");
    return std::vector<std::byte>(type.size);
  }
  switch (type.kind) {
    case ScalarKind::boolean:
      if (value.is_boolean()) return bytes_of<std::uint8_t>(value.get<bool>() ? 1 : 0);
      // zarr-python 2 writes 0 / 1 for bool arrays at times.
      if (dialect == FillValueDialect::v2 && value.is_number_integer() &&
          (value.get<std::int64_t>() == 0 || value.get<std::int64_t>() == 1))
        return bytes_of<std::uint8_t>(static_cast<std::uint8_t>(value.get<std::int64_t>()));
      bad_fill(where, type, value, "expected true or false");
    case ScalarKind::signed_int:
      switch (type.size) {
        case 1: return parse_integer<std::int8_t>(value, where, type);
        case 2: return parse_integer<std::int16_t>(value, where, type);
        case 4: return parse_integer<std::int32_t>(value, where, type);
        default: return parse_integer<std::int64_t>(value, where, type);
      }
    case ScalarKind::unsigned_int:
      switch (type.size) {
        case 1: return parse_integer<std::uint8_t>(value, where, type);
        case 2: return parse_integer<std::uint16_t>(value, where, type);
        case 4: return parse_integer<std::uint32_t>(value, where, type);
        default: return parse_integer<std::uint64_t>(value, where, type);
      }
    case ScalarKind::floating:
      return parse_float(value, type.size, dialect, where, type);
    case ScalarKind::complex: {
      std::size_t half = type.size / 2u;
      if (value.is_array() && value.size() == 2) {
        auto re = parse_float(value[0], half, dialect, where, type);
        auto im = parse_float(value[1], half, dialect, where, type);
        re.insert(re.end(), im.begin(), im.end());
        return re;
      }
      // A bare number means a real value (zarr-python 2 writes complex fills this way at times).
      if (value.is_number() || value.is_string()) {
        auto re = parse_float(value, half, dialect, where, type);
        re.resize(type.size);
        return re;
      }
      bad_fill(where, type, value, "expected [real, imaginary]");
    }
  }
  bad_fill(where, type, value, "unknown type");
}

}  // namespace zarrdirect

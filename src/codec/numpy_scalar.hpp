// The element types of the numcodecs filters and NumPy's arithmetic on them.
//
// The filters (delta, fixedscaleoffset, astype, quantize) are defined by what NumPy computes, so
// their kernels are templates over one C++ type per element type, with NumPy's rules spelled out:
// integers wrap, floats round to nearest, float->int truncates, bool means "nonzero".
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string_view>
#include <type_traits>

#include <fmt/format.h>

#include "metadata/fill_value.hpp"
#include "zarrdirect/dtype.hpp"
#include "zarrdirect/error.hpp"

namespace zarrdirect::codec {

// NumPy's bool: one byte, any nonzero byte is true. A struct rather than `bool`, because copying a
// byte other than 0 or 1 into a C++ bool is undefined.
struct Bool8 {
  std::uint8_t byte;
};

// IEEE binary16. Each operation is done in float and rounded back: float carries more than twice
// half's precision, so the result equals correctly rounded half arithmetic, as NumPy's.
struct Half {
  std::uint16_t bits;
  static Half from_float(float value) { return {float_to_half(value)}; }
  float to_float() const { return half_to_float(bits); }
  friend Half operator+(Half a, Half b) { return from_float(a.to_float() + b.to_float()); }
  friend Half operator-(Half a, Half b) { return from_float(a.to_float() - b.to_float()); }
  friend Half operator*(Half a, Half b) { return from_float(a.to_float() * b.to_float()); }
  friend Half operator/(Half a, Half b) { return from_float(a.to_float() / b.to_float()); }
};
static_assert(sizeof(Bool8) == 1 && sizeof(Half) == 2);

template <class T>
inline constexpr bool is_float_element = std::is_floating_point_v<T> || std::is_same_v<T, Half>;
template <class T>
inline constexpr bool is_integer_element = std::is_integral_v<T>;

// Calls `visit(T{})` with the C++ type of one element of `type`. Complex types have no place in
// these filters (NumPy would drop the imaginary part), so they are refused naming `codec`.
template <class Visitor>
decltype(auto) visit_element_type(const DataType& type, std::string_view codec, Visitor&& visit) {
  switch (type.kind) {
    case ScalarKind::boolean:
      return visit(Bool8{});
    case ScalarKind::signed_int:
      if (type.size == 1) return visit(std::int8_t{});
      if (type.size == 2) return visit(std::int16_t{});
      if (type.size == 4) return visit(std::int32_t{});
      if (type.size == 8) return visit(std::int64_t{});
      break;
    case ScalarKind::unsigned_int:
      if (type.size == 1) return visit(std::uint8_t{});
      if (type.size == 2) return visit(std::uint16_t{});
      if (type.size == 4) return visit(std::uint32_t{});
      if (type.size == 8) return visit(std::uint64_t{});
      break;
    case ScalarKind::floating:
      if (type.size == 2) return visit(Half{});
      if (type.size == 4) return visit(float{});
      if (type.size == 8) return visit(double{});
      break;
    case ScalarKind::complex:
      break;
  }
  throw Error(ErrorKind::unsupported, fmt::format("codec {}: data type {} is not supported", codec, type.name()));
}

template <class T>
T load_element(const std::byte* base, std::size_t index) {
  T value;
  std::memcpy(&value, base + index * sizeof(T), sizeof(T));
  return value;
}

template <class T>
void store_element(std::byte* base, std::size_t index, T value) {
  std::memcpy(base + index * sizeof(T), &value, sizeof(T));
}

// An element widened without loss for conversion: integers to 64 bits, floats to double.
template <class T>
auto widen(T value) {
  if constexpr (std::is_same_v<T, Bool8>) return std::uint64_t{value.byte != 0};
  else if constexpr (std::is_same_v<T, Half>) return static_cast<double>(value.to_float());
  else if constexpr (std::is_floating_point_v<T>) return static_cast<double>(value);
  else if constexpr (std::is_signed_v<T>) return static_cast<std::int64_t>(value);
  else return static_cast<std::uint64_t>(value);
}

// Float to integer as NumPy does it: truncation toward zero, then the low bits of the result.
// Out-of-range values and NaN have no result NumPy defines (it leaves them to the C compiler);
// here they give the low bits of INT64_MIN, which is what x86-64 produces for 64-bit targets.
template <class To>
To truncate_to_integer(double value) {
  const double truncated = std::trunc(value);
  constexpr double kTwoTo63 = 9223372036854775808.0;
  if (truncated >= -kTwoTo63 && truncated < kTwoTo63) return static_cast<To>(static_cast<std::int64_t>(truncated));
  if (std::is_unsigned_v<To> && truncated >= kTwoTo63 && truncated < 2 * kTwoTo63)
    return static_cast<To>(static_cast<std::uint64_t>(truncated));
  return static_cast<To>(std::numeric_limits<std::int64_t>::min());
}

// NumPy's astype for one element.
template <class To, class From>
To numpy_cast(From value) {
  if constexpr (std::is_same_v<To, From>) {
    return value;
  } else {
    const auto wide = widen(value);
    using Wide = decltype(wide);
    if constexpr (std::is_same_v<To, Bool8>) {
      return Bool8{static_cast<std::uint8_t>(wide != 0)};
    } else if constexpr (std::is_same_v<To, Half>) {
      // A double straight to half, as NumPy: through float it may round twice (1 + 2^-11 + 2^-40
      // became 1.0, not 1.001). Other wide types (integers) convert through float as before.
      if constexpr (std::is_floating_point_v<Wide>) return Half{double_to_half(wide)};
      else return Half::from_float(static_cast<float>(wide));
    } else if constexpr (std::is_floating_point_v<To>) {
      return static_cast<To>(wide);
    } else if constexpr (std::is_integral_v<Wide>) {
      return static_cast<To>(wide);  // modular since C++20, as NumPy's integer casts
    } else {
      return truncate_to_integer<To>(wide);
    }
  }
}

// Arithmetic in the element's own type: integers wrap around as NumPy's do.
template <class T>
T numpy_add(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
  } else {
    return a + b;
  }
}

template <class T>
T numpy_subtract(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) - static_cast<U>(b)));
  } else {
    return a - b;
  }
}

template <class T>
T numpy_multiply(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    // Unsigned types narrower than int promote to int, where the product could overflow: widen.
    using Wide = std::conditional_t<(sizeof(U) < sizeof(unsigned)), unsigned, U>;
    return static_cast<T>(static_cast<Wide>(static_cast<Wide>(static_cast<U>(a)) * static_cast<Wide>(static_cast<U>(b))));
  } else {
    return a * b;
  }
}

// np.around: to the nearest integer, ties to even.
template <class T>
T numpy_around(T value) {
  if constexpr (std::is_same_v<T, Half>) return Half::from_float(std::nearbyint(value.to_float()));
  else if constexpr (std::is_floating_point_v<T>) return std::nearbyint(value);
  else return value;
}

}  // namespace zarrdirect::codec

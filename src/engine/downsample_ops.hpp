// What one output element of a 2x2 (yx) or 2x2x2 (zyx) downsample is, for every element type:
// written once, compiled for the host (engine/downsample.cpp) and the device (cuda/downsample.cu),
// so that the CPU and the GPU give the same bits.
//
// The block's values arrive in C order (z, then y, then x).
//   nearest  the block's last value (what a[1::2, 1::2] keeps): the pixel ome-zarr-py's nearest
//            (skimage.transform.resize, order=0, to shape // 2) samples, for odd extents too.
//   max      the largest; NaN wins as in numpy.max. Booleans: any.
//   mean     integers: the exact sum in a wider type (64 bits; 128 for 64-bit elements), divided
//            by the block size and rounded half to even (numpy.round's rule), so nothing
//            overflows and both sides agree. Booleans: true when more than half are true.
//            Floating point: the sum in double, in block order, divided, then rounded to the
//            element type to nearest even (float16 converted from double directly: no double
//            rounding through float). Complex: each part so.
#pragma once

#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#define ZD_HD __host__ __device__ __forceinline__
#else
#define ZD_HD inline
#endif

namespace zarrdirect::downsample_ops {

__extension__ typedef __int128 Int128;
__extension__ typedef unsigned __int128 UInt128;

// Element types that are not plain C++ arithmetic types.
struct Half {
  std::uint16_t bits;
};
struct Bool {
  std::uint8_t value;
};
struct Complex64 {
  float re, im;
};
struct Complex128 {
  double re, im;
};

// --- float16 <-> double, bit exact and identical on both sides ------------------------------

ZD_HD double half_to_double(Half h) {
  const unsigned sign = h.bits >> 15;
  const unsigned exponent = (h.bits >> 10) & 0x1fu;
  const unsigned mantissa = h.bits & 0x3ffu;
  double magnitude;
  if (exponent == 0) {
    magnitude = static_cast<double>(mantissa) * (1.0 / 16777216.0);  // subnormal: m * 2^-24
  } else if (exponent == 31) {
    std::uint64_t bits = mantissa ? 0x7ff8000000000000ull : 0x7ff0000000000000ull;
    double special;
    std::memcpy(&special, &bits, sizeof special);
    magnitude = special;
  } else {
    std::uint64_t bits = (static_cast<std::uint64_t>(exponent - 15 + 1023) << 52) |
                         (static_cast<std::uint64_t>(mantissa) << 42);
    std::memcpy(&magnitude, &bits, sizeof magnitude);
  }
  return sign ? -magnitude : magnitude;
}

// Rounds `kept` (the bits kept) up when the `dropped` low bits of `shift` are more than half, or
// exactly half and `kept` is odd.
ZD_HD std::uint64_t round_half_even_shift(std::uint64_t value, unsigned shift) {
  const std::uint64_t kept = value >> shift;
  const std::uint64_t dropped = value & ((std::uint64_t{1} << shift) - 1);
  const std::uint64_t half = std::uint64_t{1} << (shift - 1);
  return kept + ((dropped > half || (dropped == half && (kept & 1u))) ? 1u : 0u);
}

ZD_HD Half half_from_double(double value) {
  std::uint64_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  const auto sign = static_cast<std::uint16_t>((bits >> 48) & 0x8000u);
  const int exponent = static_cast<int>((bits >> 52) & 0x7ffu);
  const std::uint64_t fraction = bits & ((std::uint64_t{1} << 52) - 1);
  if (exponent == 0x7ff) return Half{static_cast<std::uint16_t>(sign | (fraction ? 0x7e00u : 0x7c00u))};
  if (exponent == 0) return Half{sign};  // double subnormals are far below half's smallest
  int e = exponent - 1023;
  const std::uint64_t significand = fraction | (std::uint64_t{1} << 52);
  if (e >= -14) {
    std::uint64_t kept = round_half_even_shift(significand, 42);  // 11 bits, the leading one included
    if (kept == (std::uint64_t{1} << 11)) {
      kept >>= 1;
      ++e;
    }
    if (e > 15) return Half{static_cast<std::uint16_t>(sign | 0x7c00u)};
    return Half{static_cast<std::uint16_t>(sign | (static_cast<unsigned>(e + 15) << 10) | (kept & 0x3ffu))};
  }
  // Subnormal half: units of 2^-24. A carry into 0x400 is the smallest normal, bit for bit.
  const unsigned shift = static_cast<unsigned>(28 - e);
  if (shift > 53) return Half{sign};
  return Half{static_cast<std::uint16_t>(sign | round_half_even_shift(significand, shift))};
}

// --- integer means --------------------------------------------------------------------------

// floor(sum / 2^shift) rounded half to even. C++20 shifts of negative values are arithmetic.
template <typename Wide>
ZD_HD Wide divide_round_half_even(Wide sum, unsigned shift) {
  const Wide quotient = sum >> shift;
  const Wide remainder = sum - (quotient << shift);  // in [0, 2^shift)
  const Wide half = Wide{1} << (shift - 1);
  return quotient + ((remainder > half || (remainder == half && (quotient & 1) != 0)) ? 1 : 0);
}

template <typename T>
struct Wider;  // the sum type of integer T
template <> struct Wider<std::int8_t> { using type = std::int64_t; };
template <> struct Wider<std::int16_t> { using type = std::int64_t; };
template <> struct Wider<std::int32_t> { using type = std::int64_t; };
template <> struct Wider<std::int64_t> { using type = Int128; };
template <> struct Wider<std::uint8_t> { using type = std::uint64_t; };
template <> struct Wider<std::uint16_t> { using type = std::uint64_t; };
template <> struct Wider<std::uint32_t> { using type = std::uint64_t; };
template <> struct Wider<std::uint64_t> { using type = UInt128; };

// N is the block size (4 or 8); Shift its log2.
template <int N>
inline constexpr unsigned kShift = N == 8 ? 3u : N == 4 ? 2u : N == 2 ? 1u : 0u;

template <typename T, int N>
ZD_HD T mean_of(const T (&v)[N]) {
  using Wide = typename Wider<T>::type;
  Wide sum = 0;
  for (int i = 0; i < N; ++i) sum += static_cast<Wide>(v[i]);
  return static_cast<T>(divide_round_half_even<Wide>(sum, kShift<N>));
}

// A mean with a NaN among its values is NaN, but which NaN differs by side: x86 passes an input's
// payload through, CUDA's arithmetic and conversions give their own canonical NaN. Both sides
// return these quiet NaNs instead, so the bits agree.
ZD_HD double quiet_nan_double() {
  const std::uint64_t bits = 0x7ff8000000000000ull;
  double value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}
ZD_HD float quiet_nan_float() {
  const std::uint32_t bits = 0x7fc00000u;
  float value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}
ZD_HD float narrow_to_float(double value) {
  return value != value ? quiet_nan_float() : static_cast<float>(value);
}

template <int N>
ZD_HD double sum_in_double(const double (&v)[N]) {
  double sum = 0.0;
  for (int i = 0; i < N; ++i) sum += v[i];
  return sum != sum ? quiet_nan_double() : sum / N;
}

template <int N>
ZD_HD float mean_of(const float (&v)[N]) {
  double wide[N];
  for (int i = 0; i < N; ++i) wide[i] = v[i];
  return narrow_to_float(sum_in_double(wide));
}
template <int N>
ZD_HD double mean_of(const double (&v)[N]) {
  return sum_in_double(v);
}
template <int N>
ZD_HD Half mean_of(const Half (&v)[N]) {
  double wide[N];
  for (int i = 0; i < N; ++i) wide[i] = half_to_double(v[i]);
  return half_from_double(sum_in_double(wide));
}
template <int N>
ZD_HD Bool mean_of(const Bool (&v)[N]) {
  int count = 0;
  for (int i = 0; i < N; ++i) count += v[i].value ? 1 : 0;
  return Bool{static_cast<std::uint8_t>(2 * count > N ? 1 : 0)};  // half of them rounds to even: false
}
template <int N>
ZD_HD Complex64 mean_of(const Complex64 (&v)[N]) {
  double re[N], im[N];
  for (int i = 0; i < N; ++i) re[i] = v[i].re, im[i] = v[i].im;
  return Complex64{narrow_to_float(sum_in_double(re)), narrow_to_float(sum_in_double(im))};
}
template <int N>
ZD_HD Complex128 mean_of(const Complex128 (&v)[N]) {
  double re[N], im[N];
  for (int i = 0; i < N; ++i) re[i] = v[i].re, im[i] = v[i].im;
  return Complex128{sum_in_double(re), sum_in_double(im)};
}

// --- max --------------------------------------------------------------------------------------

template <typename T, int N>
ZD_HD T max_of(const T (&v)[N]) {  // integers
  T best = v[0];
  for (int i = 1; i < N; ++i)
    if (v[i] > best) best = v[i];
  return best;
}

template <typename F>
ZD_HD bool is_nan(F value) {
  return value != value;
}

template <typename F, int N>
ZD_HD F float_max_of(const F (&v)[N]) {
  F best = v[0];
  for (int i = 1; i < N && !is_nan(best); ++i)
    if (is_nan(v[i]) || v[i] > best) best = v[i];
  return best;
}
template <int N>
ZD_HD float max_of(const float (&v)[N]) {
  return float_max_of(v);
}
template <int N>
ZD_HD double max_of(const double (&v)[N]) {
  return float_max_of(v);
}
template <int N>
ZD_HD Half max_of(const Half (&v)[N]) {
  Half best = v[0];
  double best_value = half_to_double(best);
  for (int i = 1; i < N && !is_nan(best_value); ++i) {
    const double value = half_to_double(v[i]);
    if (is_nan(value) || value > best_value) best = v[i], best_value = value;
  }
  return best;
}
template <int N>
ZD_HD Bool max_of(const Bool (&v)[N]) {
  for (int i = 0; i < N; ++i)
    if (v[i].value) return Bool{1};
  return Bool{0};
}

// --- one output element -------------------------------------------------------------------------

enum class Method : int { mean = 0, nearest = 1, max = 2 };

template <typename T, Method M, int N>
ZD_HD T reduce(const T (&v)[N]) {
  if constexpr (M == Method::nearest) return v[N - 1];
  else if constexpr (M == Method::max) return max_of(v);
  else return mean_of(v);
}

template <typename T>
inline constexpr bool kIsComplex = false;
template <>
inline constexpr bool kIsComplex<Complex64> = true;
template <>
inline constexpr bool kIsComplex<Complex128> = true;

// Whether method M is defined for T (complex numbers have no max).
template <typename T, Method M>
inline constexpr bool kSupported = !(M == Method::max && kIsComplex<T>);

// Input viewed as [outer][in_z][in_y][in_x] (C order), output [outer][in_z / fz][in_y / 2][in_x / 2];
// fz is 1 (yx) or 2 (zyx). Odd trailing planes, rows and columns are dropped (floor).
struct Geometry {
  std::uint64_t outer = 1;
  std::uint64_t in_z = 1;
  std::uint64_t in_y = 1;
  std::uint64_t in_x = 1;
  unsigned fz = 1;
  ZD_HD std::uint64_t out_z() const { return in_z / fz; }
  ZD_HD std::uint64_t out_y() const { return in_y / 2; }
  ZD_HD std::uint64_t out_x() const { return in_x / 2; }
  ZD_HD std::uint64_t out_rows() const { return outer * out_z() * out_y(); }
};

// Output row `row` (an index into [outer][out_z][out_y]) from `in` to `out`, columns
// [x_begin, x_end). FZ is the geometry's fz.
// The FZ * 2 input rows (z, then y) whose blocks make output row `row`.
template <typename T, unsigned FZ>
ZD_HD void block_rows(const T* in, const Geometry& g, std::uint64_t row, const T* (&rows)[FZ * 2]) {
  const std::uint64_t oy = row % g.out_y();
  const std::uint64_t rest = row / g.out_y();
  const std::uint64_t oz = rest % g.out_z();
  const std::uint64_t o = rest / g.out_z();
  for (unsigned dz = 0; dz < FZ; ++dz)
    for (unsigned dy = 0; dy < 2; ++dy)
      rows[dz * 2 + dy] = in + ((o * g.in_z + oz * FZ + dz) * g.in_y + oy * 2 + dy) * g.in_x;
}

template <typename T, Method M, unsigned FZ>
ZD_HD void downsample_elements(const T* in, T* out, const Geometry& g, std::uint64_t row, std::uint64_t x_begin,
                               std::uint64_t x_end) {
  const T* rows[FZ * 2];
  block_rows<T, FZ>(in, g, row, rows);
  T* target = out + row * g.out_x();
  for (std::uint64_t x = x_begin; x < x_end; ++x) {
    T v[FZ * 4];
    for (unsigned r = 0; r < FZ * 2; ++r) {
      v[r * 2] = rows[r][2 * x];
      v[r * 2 + 1] = rows[r][2 * x + 1];
    }
    target[x] = reduce<T, M, static_cast<int>(FZ * 4)>(v);
  }
}

}  // namespace zarrdirect::downsample_ops

namespace zarrdirect::downsample_ops {

// Element types, for dispatch from a run-time type to the templates above.
enum class Element : int { i8, i16, i32, i64, u8, u16, u32, u64, f16, f32, f64, c64, c128, b8 };

template <Element E>
struct ElementType;
template <> struct ElementType<Element::i8> { using type = std::int8_t; };
template <> struct ElementType<Element::i16> { using type = std::int16_t; };
template <> struct ElementType<Element::i32> { using type = std::int32_t; };
template <> struct ElementType<Element::i64> { using type = std::int64_t; };
template <> struct ElementType<Element::u8> { using type = std::uint8_t; };
template <> struct ElementType<Element::u16> { using type = std::uint16_t; };
template <> struct ElementType<Element::u32> { using type = std::uint32_t; };
template <> struct ElementType<Element::u64> { using type = std::uint64_t; };
template <> struct ElementType<Element::f16> { using type = Half; };
template <> struct ElementType<Element::f32> { using type = float; };
template <> struct ElementType<Element::f64> { using type = double; };
template <> struct ElementType<Element::c64> { using type = Complex64; };
template <> struct ElementType<Element::c128> { using type = Complex128; };
template <> struct ElementType<Element::b8> { using type = Bool; };

// Calls visit.template operator()<T, M, FZ>() for the run-time element, method and fz; returns
// false (calling nothing) for a method the type does not have.
template <typename Visit>
bool dispatch(Element element, Method method, unsigned fz, Visit&& visit) {
  auto with_type = [&]<typename T>() {
    auto with_method = [&]<Method M>() {
      if constexpr (!kSupported<T, M>) {
        return false;
      } else {
        if (fz == 2) visit.template operator()<T, M, 2u>();
        else visit.template operator()<T, M, 1u>();
        return true;
      }
    };
    switch (method) {
      case Method::mean: return with_method.template operator()<Method::mean>();
      case Method::nearest: return with_method.template operator()<Method::nearest>();
      case Method::max: return with_method.template operator()<Method::max>();
    }
    return false;
  };
  switch (element) {
#define ZD_ELEMENT_CASE(E) \
  case Element::E: return with_type.template operator()<typename ElementType<Element::E>::type>();
    ZD_ELEMENT_CASE(i8) ZD_ELEMENT_CASE(i16) ZD_ELEMENT_CASE(i32) ZD_ELEMENT_CASE(i64)
    ZD_ELEMENT_CASE(u8) ZD_ELEMENT_CASE(u16) ZD_ELEMENT_CASE(u32) ZD_ELEMENT_CASE(u64)
    ZD_ELEMENT_CASE(f16) ZD_ELEMENT_CASE(f32) ZD_ELEMENT_CASE(f64) ZD_ELEMENT_CASE(c64)
    ZD_ELEMENT_CASE(c128) ZD_ELEMENT_CASE(b8)
#undef ZD_ELEMENT_CASE
  }
  return false;
}

}  // namespace zarrdirect::downsample_ops

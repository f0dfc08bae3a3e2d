#include "engine/downsample.hpp"

#include <algorithm>
#include <atomic>
#include <thread>
#include <type_traits>
#include <vector>

#include <fmt/format.h>

#include "engine/worker_pool.hpp"
#include "zarrdirect/error.hpp"

namespace zarrdirect {

namespace ops = downsample_ops;

std::string_view to_string(DownsampleMethod method) {
  switch (method) {
    case DownsampleMethod::mean: return "mean";
    case DownsampleMethod::nearest: return "nearest";
    case DownsampleMethod::max: return "max";
  }
  return "?";
}

DownsampleMethod parse_downsample_method(std::string_view text) {
  if (text == "mean") return DownsampleMethod::mean;
  if (text == "nearest") return DownsampleMethod::nearest;
  if (text == "max") return DownsampleMethod::max;
  throw Error(ErrorKind::invalid_argument,
              fmt::format("downsampling method \"{}\" is not one of mean, nearest, max", text.substr(0, 40)));
}

ops::Element downsample_element(const DataType& dtype) {
  switch (dtype.kind) {
    case ScalarKind::boolean: return ops::Element::b8;
    case ScalarKind::signed_int:
      return dtype.size == 1 ? ops::Element::i8 : dtype.size == 2 ? ops::Element::i16
             : dtype.size == 4 ? ops::Element::i32 : ops::Element::i64;
    case ScalarKind::unsigned_int:
      return dtype.size == 1 ? ops::Element::u8 : dtype.size == 2 ? ops::Element::u16
             : dtype.size == 4 ? ops::Element::u32 : ops::Element::u64;
    case ScalarKind::floating:
      return dtype.size == 2 ? ops::Element::f16 : dtype.size == 4 ? ops::Element::f32 : ops::Element::f64;
    case ScalarKind::complex: return dtype.size == 8 ? ops::Element::c64 : ops::Element::c128;
  }
  throw Error(ErrorKind::unsupported, fmt::format("cannot downsample {}", dtype.name()));
}

ops::Method downsample_method(DownsampleMethod method) {
  switch (method) {
    case DownsampleMethod::mean: return ops::Method::mean;
    case DownsampleMethod::nearest: return ops::Method::nearest;
    case DownsampleMethod::max: return ops::Method::max;
  }
  return ops::Method::mean;
}

ops::Geometry downsample_geometry(const std::vector<std::uint64_t>& shape, unsigned halved_dims) {
  if (halved_dims != 2 && halved_dims != 3)
    throw Error(ErrorKind::invalid_argument, fmt::format("downsampling halves 2 (yx) or 3 (zyx) axes, not {}", halved_dims));
  if (shape.size() < halved_dims)
    throw Error(ErrorKind::invalid_argument,
                fmt::format("cannot halve {} axes of an array of {} dimensions", halved_dims, shape.size()));
  const std::size_t first = shape.size() - halved_dims;
  ops::Geometry g;
  for (std::size_t d = 0; d < first; ++d) g.outer *= shape[d];
  g.fz = halved_dims == 3 ? 2u : 1u;
  g.in_z = halved_dims == 3 ? shape[first] : 1;
  g.in_y = shape[shape.size() - 2];
  g.in_x = shape[shape.size() - 1];
  return g;
}

std::vector<std::uint64_t> downsampled_shape(std::vector<std::uint64_t> shape, unsigned halved_dims) {
  for (std::size_t d = shape.size() - std::min<std::size_t>(halved_dims, shape.size()); d < shape.size(); ++d)
    shape[d] /= 2;
  return shape;
}

void check_downsample_supported(const DataType& dtype, DownsampleMethod method) {
  if (dtype.kind == ScalarKind::complex && method == DownsampleMethod::max)
    throw Error(ErrorKind::unsupported, fmt::format("max is not defined for {} (complex numbers have no order): "
                                                    "use mean or nearest",
                                                    dtype.name()));
}

namespace {

// Integer means and maxima on the host, reordered so that the compiler vectorizes them: the
// block's input rows are first reduced column by column (contiguous loads), then neighbouring
// columns are paired. Integer sums are exact and max is associative, so the bits are those of
// downsample_elements, the element-by-element form the device runs; in that form the strided
// loads and 64-bit sums kept the host at about a third of memory speed.
template <typename T, ops::Method M>
inline constexpr bool kByColumns =
    std::is_integral_v<T> && sizeof(T) <= 4 && (M == ops::Method::mean || M == ops::Method::max);

// A column's value: for means an exact sum of up to 8 elements (32 bits hold 8- and 16-bit
// sums, 64 bits 32-bit ones); for max the element type itself.
template <typename T, ops::Method M>
using ColumnValue = std::conditional_t<
    M == ops::Method::max, T,
    std::conditional_t<(sizeof(T) <= 2), std::conditional_t<std::is_signed_v<T>, std::int32_t, std::uint32_t>,
                       std::conditional_t<std::is_signed_v<T>, std::int64_t, std::uint64_t>>>;

template <typename T, ops::Method M, unsigned FZ>
void reduce_row_by_columns(const T* in, T* out, const ops::Geometry& g, std::uint64_t row,
                           ColumnValue<T, M>* column) {
  using C = ColumnValue<T, M>;
  const T* rows[FZ * 2];
  ops::block_rows<T, FZ>(in, g, row, rows);
  const std::uint64_t out_x = g.out_x();
  const std::uint64_t width = out_x * 2;  // an odd last input column is dropped
  for (std::uint64_t x = 0; x < width; ++x) column[x] = static_cast<C>(rows[0][x]);
  for (unsigned r = 1; r < FZ * 2; ++r) {
    const T* source = rows[r];
    for (std::uint64_t x = 0; x < width; ++x) {
      const C value = static_cast<C>(source[x]);
      if constexpr (M == ops::Method::mean) column[x] += value;
      else column[x] = value > column[x] ? value : column[x];
    }
  }
  T* target = out + row * out_x;
  for (std::uint64_t x = 0; x < out_x; ++x) {
    const C left = column[2 * x], right = column[2 * x + 1];
    if constexpr (M == ops::Method::mean)
      target[x] = static_cast<T>(ops::divide_round_half_even<C>(left + right, ops::kShift<static_cast<int>(FZ * 4)>));
    else
      target[x] = right > left ? right : left;
  }
}

}  // namespace

void downsample_host(const void* in, void* out, const ops::Geometry& g, const DataType& dtype, DownsampleMethod method,
                     unsigned threads) {
  check_downsample_supported(dtype, method);
  const std::uint64_t rows = g.out_rows();
  if (rows == 0 || g.out_x() == 0) return;
  // Rows in blocks of about 256 KiB of output, handed out through a shared counter.
  const std::uint64_t row_bytes = std::max<std::uint64_t>(1, g.out_x() * dtype.size);
  const std::uint64_t block = std::max<std::uint64_t>(1, (256u << 10) / row_bytes);
  const std::uint64_t blocks = (rows + block - 1) / block;
  std::atomic<std::uint64_t> next{0};
  auto work = [&]<typename T, ops::Method M, unsigned FZ>() {
    const T* input = static_cast<const T*>(in);
    T* output = static_cast<T*>(out);
    if constexpr (kByColumns<T, M>) {
      std::vector<ColumnValue<T, M>> columns(g.out_x() * 2);
      for (std::uint64_t b; (b = next.fetch_add(1)) < blocks;)
        for (std::uint64_t r = b * block, end = std::min(rows, r + block); r < end; ++r)
          reduce_row_by_columns<T, M, FZ>(input, output, g, r, columns.data());
    } else {
      for (std::uint64_t b; (b = next.fetch_add(1)) < blocks;)
        for (std::uint64_t r = b * block, end = std::min(rows, r + block); r < end; ++r)
          ops::downsample_elements<T, M, FZ>(input, output, g, r, 0, g.out_x());
    }
  };
  const unsigned workers =
      static_cast<unsigned>(std::min<std::uint64_t>(std::max(1u, threads), blocks));
  WorkerPool::shared().run(workers, [&](unsigned) {
    ops::dispatch(downsample_element(dtype), downsample_method(method), g.fz, work);
  });
}

}  // namespace zarrdirect

#include "engine/downsample.hpp"

#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "zarrdirect/error.hpp"

namespace zarrdirect {
namespace {

__extension__ typedef __int128 Wide;

// A naive reference: walks every output index of the full shape and gathers its block there.
template <typename T, typename Reduce>
std::vector<T> reference(const std::vector<T>& in, const std::vector<std::uint64_t>& shape, unsigned halved,
                         Reduce reduce) {
  const std::size_t rank = shape.size();
  std::vector<std::uint64_t> out_shape = shape;
  for (std::size_t d = rank - halved; d < rank; ++d) out_shape[d] /= 2;
  std::uint64_t count = 1;
  for (auto e : out_shape) count *= e;
  std::vector<T> out(count);
  for (std::uint64_t i = 0; i < count; ++i) {
    std::vector<std::uint64_t> index(rank);
    for (std::uint64_t rest = i, d = rank; d-- > 0;) index[d] = rest % out_shape[d], rest /= out_shape[d];
    std::vector<T> block;
    for (unsigned b = 0; b < (1u << halved); ++b) {
      std::uint64_t flat = 0;
      for (std::size_t d = 0; d < rank; ++d) {
        std::uint64_t at = index[d];
        if (d >= rank - halved) at = at * 2 + ((b >> (rank - 1 - d)) & 1u);
        flat = flat * shape[d] + at;
      }
      block.push_back(in[flat]);
    }
    out[i] = reduce(block);
  }
  return out;
}

template <typename T>
T integer_mean(const std::vector<T>& block) {
  Wide sum = 0;
  for (T v : block) sum += v;
  const Wide n = static_cast<Wide>(block.size());
  Wide q = sum / n, r = sum % n;
  if (r < 0) r += n, q -= 1;
  if (2 * r > n || (2 * r == n && q % 2 != 0)) q += 1;
  return static_cast<T>(q);
}

template <typename T>
T float_mean(const std::vector<T>& block) {
  double sum = 0;
  for (T v : block) sum += static_cast<double>(v);
  return static_cast<T>(sum / static_cast<double>(block.size()));
}

template <typename T>
T float_max(const std::vector<T>& block) {
  T best = block[0];
  for (T v : block) {
    if (std::isnan(static_cast<double>(best))) break;
    if (std::isnan(static_cast<double>(v)) || v > best) best = v;
  }
  return best;
}

template <typename T>
std::vector<T> run(const std::vector<T>& in, const std::vector<std::uint64_t>& shape, unsigned halved,
                   DownsampleMethod method, const DataType& dtype, unsigned threads = 3) {
  auto out_shape = downsampled_shape(shape, halved);
  std::uint64_t count = 1;
  for (auto e : out_shape) count *= e;
  std::vector<T> out(count);
  downsample_host(in.data(), out.data(), downsample_geometry(shape, halved), dtype, method, threads);
  return out;
}

// Rows of 67 and 1031 elements run past the vectorized loops' widths and leave an odd column.
const std::vector<std::vector<std::uint64_t>> kShapes = {{6, 8}, {7, 9},       {3, 5, 7},  {2, 5, 6, 9},
                                                         {1, 1}, {4, 3, 2, 3}, {3, 5, 67}, {2, 3, 1031}};

template <typename T>
void check_integers(ScalarKind kind) {
  const DataType dtype{kind, sizeof(T)};
  std::mt19937_64 random(sizeof(T) * 7 + (kind == ScalarKind::signed_int));
  for (const auto& shape : kShapes)
    for (unsigned halved : {2u, 3u}) {
      if (shape.size() < halved) continue;
      std::uint64_t count = 1;
      for (auto e : shape) count *= e;
      std::vector<T> in(count);
      // Values at the type's ends make a naive sum overflow.
      for (auto& v : in) {
        const auto pick = random() % 4;
        v = pick == 0 ? std::numeric_limits<T>::max() : pick == 1 ? std::numeric_limits<T>::min()
                                                               : static_cast<T>(random());
      }
      SCOPED_TRACE(::testing::Message() << dtype.name() << " shape rank " << shape.size() << " halved " << halved);
      EXPECT_EQ(run(in, shape, halved, DownsampleMethod::mean, dtype), reference(in, shape, halved, integer_mean<T>));
      EXPECT_EQ(run(in, shape, halved, DownsampleMethod::nearest, dtype),
                reference(in, shape, halved, [](const std::vector<T>& b) { return b.back(); }));
      EXPECT_EQ(run(in, shape, halved, DownsampleMethod::max, dtype),
                reference(in, shape, halved, [](const std::vector<T>& b) { return *std::max_element(b.begin(), b.end()); }));
    }
}

TEST(Downsample, IntegersEveryMethodMatchesTheNaiveReference) {
  check_integers<std::int8_t>(ScalarKind::signed_int);
  check_integers<std::int16_t>(ScalarKind::signed_int);
  check_integers<std::int32_t>(ScalarKind::signed_int);
  check_integers<std::int64_t>(ScalarKind::signed_int);
  check_integers<std::uint8_t>(ScalarKind::unsigned_int);
  check_integers<std::uint16_t>(ScalarKind::unsigned_int);
  check_integers<std::uint32_t>(ScalarKind::unsigned_int);
  check_integers<std::uint64_t>(ScalarKind::unsigned_int);
}

TEST(Downsample, IntegerMeansRoundHalfToEven) {
  // shape (2, 12): blocks are columns pairs of both rows.
  std::vector<std::int16_t> rows = {0, 1, 1, 2, -1, -1, -1, -2, 1, 1, 2, 1, 0, 1, 0, 0, 0, -1, 0, -1, 0, 1, 1, 1};
  auto out = run(rows, {2, 12}, 2, DownsampleMethod::mean, DataType{ScalarKind::signed_int, 2});
  // Sums: 0+1+0+1=2 -> 0; 1+2+0+0=3 -> 1 (0.75); -1-1+0-1=-3 -> -1; -1-2+0-1=-4 -> -1; 1+1+0+1=3 -> 1; 2+1+1+1=5 -> 1
  EXPECT_EQ(out, (std::vector<std::int16_t>{0, 1, -1, -1, 1, 1}));
  std::vector<std::uint8_t> halves = {1, 1, 0, 1, 0, 0, 1, 2};  // sums 2 (0.5 -> 0), 4 (1), ...
  auto u = run(halves, {2, 4}, 2, DownsampleMethod::mean, DataType{ScalarKind::unsigned_int, 1});
  // blocks: {1,1,0,0}=2 -> 0.5 -> 0; {0,1,1,2}=4 -> 1
  EXPECT_EQ(u, (std::vector<std::uint8_t>{0, 1}));
  std::vector<std::uint8_t> odd_half = {3, 3, 0, 0};  // 6 / 4 = 1.5 -> 2
  EXPECT_EQ(run(odd_half, {2, 2}, 2, DownsampleMethod::mean, DataType{ScalarKind::unsigned_int, 1}),
            (std::vector<std::uint8_t>{2}));
}

template <typename T>
void check_floats() {
  const DataType dtype{ScalarKind::floating, sizeof(T)};
  std::mt19937_64 random(sizeof(T));
  std::uniform_real_distribution<double> value(-1e6, 1e6);
  for (const auto& shape : kShapes)
    for (unsigned halved : {2u, 3u}) {
      if (shape.size() < halved) continue;
      std::uint64_t count = 1;
      for (auto e : shape) count *= e;
      std::vector<T> in(count);
      for (auto& v : in) v = random() % 17 == 0 ? std::numeric_limits<T>::quiet_NaN() : static_cast<T>(value(random));
      auto same = [](const std::vector<T>& a, const std::vector<T>& b) {
        return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
      };
      EXPECT_TRUE(same(run(in, shape, halved, DownsampleMethod::mean, dtype), reference(in, shape, halved, float_mean<T>)));
      EXPECT_TRUE(same(run(in, shape, halved, DownsampleMethod::max, dtype), reference(in, shape, halved, float_max<T>)));
      EXPECT_TRUE(same(run(in, shape, halved, DownsampleMethod::nearest, dtype),
                       reference(in, shape, halved, [](const std::vector<T>& b) { return b.back(); })));
    }
}

TEST(Downsample, FloatsEveryMethodMatchesTheNaiveReferenceNaNIncluded) {
  check_floats<float>();
  check_floats<double>();
}

#if defined(__FLT16_MAX__)
TEST(Downsample, Float16MeanRoundsFromDoubleToNearestEven) {
  __extension__ typedef _Float16 F16;
  std::mt19937 random(5);
  std::vector<std::uint16_t> bits;
  std::vector<F16> values;
  for (int i = 0; i < 4 * 4096; ++i) {
    std::uint16_t b = static_cast<std::uint16_t>(random());
    if (((b >> 10) & 0x1f) == 0x1f) b &= 0xbfff;  // no NaN / infinity in the mean check
    F16 v;
    std::memcpy(&v, &b, 2);
    bits.push_back(b);
    values.push_back(v);
  }
  const DataType f16{ScalarKind::floating, 2};
  auto out = run(bits, {2, 2 * 4096}, 2, DownsampleMethod::mean, f16);
  auto expected = reference(values, {2, 2 * 4096}, 2, [](const std::vector<F16>& b) {
    double sum = 0;
    for (F16 v : b) sum += static_cast<double>(v);
    return static_cast<F16>(sum / 4.0);
  });
  ASSERT_EQ(out.size(), expected.size());
  EXPECT_EQ(std::memcmp(out.data(), expected.data(), out.size() * 2), 0);
  for (std::size_t i = 0; i < out.size(); ++i) {
    F16 got;
    std::memcpy(&got, &out[i], 2);
    if (std::memcmp(&got, &expected[i], 2) != 0) {
      ADD_FAILURE() << "element " << i << ": " << static_cast<double>(got) << " vs " << static_cast<double>(expected[i]);
      break;
    }
  }
  // Max compares as numbers (not bits): -1 < 0.5.
  std::vector<F16> pair = {F16(-1.0), F16(0.5), F16(-2.0), F16(-3.0)};
  std::vector<std::uint16_t> pair_bits(4);
  std::memcpy(pair_bits.data(), pair.data(), 8);
  auto max = run(pair_bits, {2, 2}, 2, DownsampleMethod::max, f16);
  F16 got;
  std::memcpy(&got, max.data(), 2);
  EXPECT_EQ(static_cast<double>(got), 0.5);
}
#endif

TEST(Downsample, BooleansAndComplex) {
  const DataType b8{ScalarKind::boolean, 1};
  std::vector<std::uint8_t> flags = {1, 0, 1, 1, 0, 0, 1, 0};  // blocks {1,0,0,0} {1,1,1,0}
  EXPECT_EQ(run(flags, {2, 4}, 2, DownsampleMethod::mean, b8), (std::vector<std::uint8_t>{0, 1}));
  EXPECT_EQ(run(flags, {2, 4}, 2, DownsampleMethod::max, b8), (std::vector<std::uint8_t>{1, 1}));
  EXPECT_EQ(run(flags, {2, 4}, 2, DownsampleMethod::nearest, b8), (std::vector<std::uint8_t>{0, 0}));
  std::vector<std::uint8_t> half = {1, 1, 0, 0};  // 2 of 4: half rounds to even, false
  EXPECT_EQ(run(half, {2, 2}, 2, DownsampleMethod::mean, b8), (std::vector<std::uint8_t>{0}));

  const DataType c64{ScalarKind::complex, 8};
  std::vector<std::complex<float>> values = {{1, 2}, {3, 4}, {5, 6}, {7, 9}};
  auto mean = run(values, {2, 2}, 2, DownsampleMethod::mean, c64);
  EXPECT_EQ(mean[0], std::complex<float>(4, 5.25f));
  EXPECT_THROW(run(values, {2, 2}, 2, DownsampleMethod::max, c64), Error);
}

TEST(Downsample, GeometryAndShapes) {
  EXPECT_EQ(downsampled_shape({3, 7, 9, 11}, 3), (std::vector<std::uint64_t>{3, 3, 4, 5}));
  EXPECT_EQ(downsampled_shape({3, 7, 9, 11}, 2), (std::vector<std::uint64_t>{3, 7, 4, 5}));
  auto g = downsample_geometry({3, 7, 9, 11}, 3);
  EXPECT_EQ(g.outer, 3u);
  EXPECT_EQ(g.out_rows(), 3u * 3u * 4u);
  EXPECT_THROW(downsample_geometry({5}, 2), Error);
  EXPECT_THROW(downsample_geometry({5, 5}, 4), Error);
  EXPECT_THROW(parse_downsample_method("median"), Error);
  EXPECT_EQ(parse_downsample_method("max"), DownsampleMethod::max);
}

}  // namespace
}  // namespace zarrdirect

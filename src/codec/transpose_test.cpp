#include "codec/transpose.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

namespace zarrdirect::codec {
namespace {

using nlohmann::json;

ArraySpec spec(std::vector<std::uint64_t> shape, std::uint8_t size = 2) {
  DataType type{ScalarKind::unsigned_int, size};
  std::vector<std::byte> fill(size, std::byte{0x5a});
  return {std::move(shape), type, fill};
}

TEST(PermuteAxes, TwoDimensionalTranspose) {
  std::vector<std::uint8_t> source{1, 2, 3, 4, 5, 6};  // 2x3
  std::vector<std::uint8_t> target(6);
  std::vector<std::uint64_t> shape{2, 3};
  std::vector<std::size_t> order{1, 0};
  permute_axes(reinterpret_cast<const std::byte*>(source.data()), shape, order, 1,
               reinterpret_cast<std::byte*>(target.data()));
  EXPECT_EQ(target, (std::vector<std::uint8_t>{1, 4, 2, 5, 3, 6}));
}

// Element (i0, i1, i2) of a C-order array of `shape` with value = its linear index.
TEST(PermuteAxes, EveryPermutationOfThreeAxesMovesEachElementWhereItBelongs) {
  std::vector<std::uint64_t> shape{2, 3, 4};
  std::vector<std::uint32_t> source(24);
  std::iota(source.begin(), source.end(), 0u);
  std::vector<std::size_t> order{0, 1, 2};
  do {
    std::vector<std::uint32_t> target(24);
    permute_axes(reinterpret_cast<const std::byte*>(source.data()), shape, order, 4,
                 reinterpret_cast<std::byte*>(target.data()));
    std::vector<std::uint64_t> target_shape{shape[order[0]], shape[order[1]], shape[order[2]]};
    for (std::uint64_t t = 0; t < 24; ++t) {
      std::uint64_t index[3];
      std::uint64_t rest = t;
      for (std::size_t k = 3; k-- > 0;) {
        index[k] = rest % target_shape[k];
        rest /= target_shape[k];
      }
      std::uint64_t source_index[3];
      for (std::size_t k = 0; k < 3; ++k) source_index[order[k]] = index[k];
      std::uint64_t linear = (source_index[0] * 3 + source_index[1]) * 4 + source_index[2];
      ASSERT_EQ(target[t], linear) << order[0] << order[1] << order[2] << " at " << t;
    }
  } while (std::next_permutation(order.begin(), order.end()));
}

TEST(TransposeCodec, RoundTripsEveryPermutationOfFourAxes) {
  std::vector<std::uint64_t> shape{2, 3, 1, 5};
  std::vector<std::uint16_t> values(30);
  std::iota(values.begin(), values.end(), std::uint16_t{100});
  std::vector<std::size_t> order{0, 1, 2, 3};
  int permutations = 0;
  do {
    auto codec = make_transpose_codec({{"order", order}}, spec(shape));
    const auto& encoded_spec = codec->encoded_spec();
    for (std::size_t k = 0; k < 4; ++k) EXPECT_EQ(encoded_spec.shape[k], shape[order[k]]);
    std::vector<std::uint16_t> encoded(30), decoded(30);
    codec->encode(std::as_bytes(std::span(values)), std::as_writable_bytes(std::span(encoded)));
    codec->decode(std::as_bytes(std::span(encoded)), std::as_writable_bytes(std::span(decoded)));
    EXPECT_EQ(decoded, values);
    ++permutations;
  } while (std::next_permutation(order.begin(), order.end()));
  EXPECT_EQ(permutations, 24);
}

TEST(TransposeCodec, EncodedSpecKeepsTheTypeAndFillValue) {
  // The next codec (sharding, say) fills missing inner chunks from the encoded spec's fill value.
  auto codec = make_transpose_codec({{"order", {1, 0}}}, spec({3, 4}, 8));
  EXPECT_EQ(codec->encoded_spec().dtype, (DataType{ScalarKind::unsigned_int, 8}));
  EXPECT_EQ(codec->encoded_spec().fill_value, std::vector<std::byte>(8, std::byte{0x5a}));
  EXPECT_EQ(codec->encoded_spec().shape, (std::vector<std::uint64_t>{4, 3}));
  EXPECT_EQ(codec->name(), "transpose");
}

TEST(TransposeCodec, LegacyCAndFOrders) {
  auto f = make_transpose_codec({{"order", "F"}}, spec({2, 3, 4}));
  EXPECT_EQ(f->encoded_spec().shape, (std::vector<std::uint64_t>{4, 3, 2}));
  auto c = make_transpose_codec({{"order", "C"}}, spec({2, 3, 4}));
  EXPECT_EQ(c->encoded_spec().shape, (std::vector<std::uint64_t>{2, 3, 4}));
}

TEST(TransposeCodec, ZeroDimensional) {
  auto codec = make_transpose_codec({{"order", json::array()}}, spec({}));
  std::uint16_t in = 77, out = 0;
  codec->decode(std::as_bytes(std::span(&in, 1)), std::as_writable_bytes(std::span(&out, 1)));
  EXPECT_EQ(out, 77);
}

TEST(TransposeCodec, BadOrdersAreRefused) {
  for (json order : {json::array({0, 0, 1}), json::array({0, 1}), json::array({0, 1, 2, 3}), json::array({0, 1, 3}),
                     json::array({-1, 0, 1}), json::array({0, 1, 2.0}), json::array({"0", 1, 2}), json("K"), json(3),
                     json::object()}) {
    try {
      make_transpose_codec({{"order", order}}, spec({2, 3, 4}));
      ADD_FAILURE() << order.dump();
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::invalid_metadata) << e.what();
      EXPECT_NE(std::string(e.what()).find("order"), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(make_transpose_codec(json::object(), spec({2})), Error);
}

}  // namespace
}  // namespace zarrdirect::codec

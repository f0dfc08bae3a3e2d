#include "codec/transpose.hpp"

#include <algorithm>
#include <cstring>
#include <numeric>

#include <fmt/format.h>

namespace zarrdirect::codec {
namespace {

class TransposeCodec final : public ArrayToArrayCodec {
 public:
  TransposeCodec(const ArraySpec& decoded, std::vector<std::size_t> order) : decoded_(decoded), order_(std::move(order)) {
    encoded_.dtype = decoded.dtype;
    encoded_.fill_value = decoded.fill_value;
    for (auto axis : order_) encoded_.shape.push_back(decoded.shape[axis]);
    inverse_.resize(order_.size());
    for (std::size_t k = 0; k < order_.size(); ++k) inverse_[order_[k]] = k;
  }
  std::string_view name() const override { return "transpose"; }
  const ArraySpec& encoded_spec() const override { return encoded_; }

  void decode(ByteSpan encoded, MutableByteSpan decoded) const override {
    // decoded axis j is encoded axis inverse[j]
    permute_axes(encoded.data(), encoded_.shape, inverse_, decoded_.dtype.size, decoded.data());
  }
  void encode(ByteSpan decoded, MutableByteSpan encoded) const override {
    permute_axes(decoded.data(), decoded_.shape, order_, decoded_.dtype.size, encoded.data());
  }

 private:
  ArraySpec decoded_;
  ArraySpec encoded_;
  std::vector<std::size_t> order_;
  std::vector<std::size_t> inverse_;
};

template <std::size_t N>
void copy_element(const std::byte* from, std::byte* to) {
  std::memcpy(to, from, N);
}

}  // namespace

void permute_axes(const std::byte* source, std::span<const std::uint64_t> source_shape,
                  std::span<const std::size_t> order, std::size_t element_size, std::byte* target) {
  const std::size_t rank = source_shape.size();
  std::uint64_t count = 1;
  for (auto extent : source_shape) count *= extent;
  if (count == 0) return;
  // Stride in source elements of each target axis.
  std::vector<std::uint64_t> source_strides(rank, 1);
  for (std::size_t d = rank; d-- > 1;) source_strides[d - 1] = source_strides[d] * source_shape[d];
  std::vector<std::uint64_t> target_shape(rank), stride_of_target_axis(rank);
  for (std::size_t k = 0; k < rank; ++k) {
    target_shape[k] = source_shape[order[k]];
    stride_of_target_axis[k] = source_strides[order[k]];
  }
  // Walk the target in C order with an odometer over its index, tracking the source offset.
  std::vector<std::uint64_t> index(rank, 0);
  std::uint64_t source_offset = 0;
  for (std::uint64_t t = 0; t < count; ++t) {
    std::memcpy(target + t * element_size, source + source_offset * element_size, element_size);
    for (std::size_t k = rank; k-- > 0;) {
      if (++index[k] < target_shape[k]) {
        source_offset += stride_of_target_axis[k];
        break;
      }
      source_offset -= stride_of_target_axis[k] * (target_shape[k] - 1);
      index[k] = 0;
    }
  }
}

std::unique_ptr<ArrayToArrayCodec> make_transpose_codec(const nlohmann::json& configuration, const ArraySpec& decoded) {
  const std::size_t rank = decoded.shape.size();
  const auto& order_json = require_member(configuration, "transpose", "order");
  std::vector<std::size_t> order;
  if (order_json.is_string()) {
    auto text = order_json.get<std::string>();
    order.resize(rank);
    std::iota(order.begin(), order.end(), std::size_t{0});
    if (text == "F") std::reverse(order.begin(), order.end());
    else if (text != "C") throw_bad_config("transpose", "\"order\" must be a permutation, \"C\" or \"F\"");
  } else {
    if (!order_json.is_array()) throw_bad_config("transpose", "\"order\" must be a list of axes");
    for (const auto& axis : order_json) {
      // Signed or unsigned JSON integers alike (JSON built in code holds them signed).
      if (!axis.is_number_integer() || (!axis.is_number_unsigned() && axis.get<std::int64_t>() < 0) ||
          axis.get<std::uint64_t>() >= rank)
        throw_bad_config("transpose", fmt::format("\"order\" entry {} is not an axis of a rank {} array", axis.dump(), rank));
      order.push_back(axis.get<std::size_t>());
    }
    std::vector<std::size_t> sorted = order;
    std::sort(sorted.begin(), sorted.end());
    if (order.size() != rank || std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
      throw_bad_config("transpose", fmt::format("\"order\" {} is not a permutation of {} axes", order_json.dump(), rank));
  }
  return std::make_unique<TransposeCodec>(decoded, std::move(order));
}

}  // namespace zarrdirect::codec

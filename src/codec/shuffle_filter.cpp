#include "codec/shuffle_filter.hpp"

#include <cstring>

#include <fmt/format.h>

#include "codec/filter_support.hpp"

namespace zarrdirect::codec {
namespace {

constexpr std::string_view kName = "numcodecs.shuffle";

class ShuffleFilter final : public ArrayToArrayCodec {
 public:
  ShuffleFilter(const ArraySpec& decoded, std::size_t element_size) : spec_(decoded), element_size_(element_size) {}
  std::string_view name() const override { return kName; }
  const ArraySpec& encoded_spec() const override { return spec_; }

  void decode(ByteSpan encoded, MutableByteSpan decoded) const override {
    if (element_size_ <= 1) return copy(encoded, decoded);
    const std::size_t count = encoded.size() / element_size_;
    for (std::size_t byte = 0; byte < element_size_; ++byte)
      for (std::size_t i = 0; i < count; ++i) decoded[i * element_size_ + byte] = encoded[byte * count + i];
  }

  void encode(ByteSpan decoded, MutableByteSpan encoded) const override {
    if (element_size_ <= 1) return copy(decoded, encoded);
    const std::size_t count = decoded.size() / element_size_;
    for (std::size_t i = 0; i < count; ++i)
      for (std::size_t byte = 0; byte < element_size_; ++byte) encoded[byte * count + i] = decoded[i * element_size_ + byte];
  }

 private:
  static void copy(ByteSpan from, MutableByteSpan to) {
    if (from.data() != to.data()) std::memcpy(to.data(), from.data(), from.size());
  }

  ArraySpec spec_;  // shuffling changes neither shape nor type
  std::size_t element_size_;
};

}  // namespace

std::unique_ptr<ArrayToArrayCodec> make_shuffle_filter(const nlohmann::json& configuration, const ArraySpec& decoded) {
  std::int64_t element_size = 4;  // numcodecs.Shuffle() default
  if (configuration.contains("elementsize")) element_size = require_integer(configuration, kName, "elementsize");
  if (element_size < 0) throw_bad_config(kName, fmt::format("\"elementsize\" is {}, expected 0 or more", element_size));
  const auto size = static_cast<std::uint64_t>(element_size);
  // numcodecs refuses buffers that are not whole elements; every chunk has the same size, so the
  // configuration either fits all of them or none.
  if (size > 1 && decoded.nbytes() % size != 0)
    throw_bad_config(kName, fmt::format("a {} byte chunk is not a whole number of {} byte elements", decoded.nbytes(),
                                        size));
  return std::make_unique<ShuffleFilter>(decoded, static_cast<std::size_t>(size));
}

}  // namespace zarrdirect::codec

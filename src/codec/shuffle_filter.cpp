#include "codec/shuffle_filter.hpp"

#include <cstring>

#include <fmt/format.h>

#include "codec/filter_support.hpp"

namespace zarrdirect::codec {
namespace {

constexpr std::string_view kName = "numcodecs.shuffle";

void unshuffle(ByteSpan encoded, std::byte* decoded, std::size_t element_size) {
  const std::size_t count = encoded.size() / element_size;
  for (std::size_t byte = 0; byte < element_size; ++byte)
    for (std::size_t i = 0; i < count; ++i) decoded[i * element_size + byte] = encoded[byte * count + i];
}

void shuffle(ByteSpan decoded, std::byte* encoded, std::size_t element_size) {
  const std::size_t count = decoded.size() / element_size;
  for (std::size_t i = 0; i < count; ++i)
    for (std::size_t byte = 0; byte < element_size; ++byte) encoded[byte * count + i] = decoded[i * element_size + byte];
}

void copy(ByteSpan from, std::byte* to) {
  if (!from.empty() && from.data() != to) std::memcpy(to, from.data(), from.size());
}

class ShuffleFilter final : public ArrayToArrayCodec {
 public:
  ShuffleFilter(const ArraySpec& decoded, std::size_t element_size) : spec_(decoded), element_size_(element_size) {}
  std::string_view name() const override { return kName; }
  const ArraySpec& encoded_spec() const override { return spec_; }

  void decode(ByteSpan encoded, MutableByteSpan decoded) const override {
    if (element_size_ <= 1) return copy(encoded, decoded.data());
    unshuffle(encoded, decoded.data(), element_size_);
  }

  void encode(ByteSpan decoded, MutableByteSpan encoded) const override {
    if (element_size_ <= 1) return copy(decoded, encoded.data());
    shuffle(decoded, encoded.data(), element_size_);
  }

 private:
  ArraySpec spec_;  // shuffling changes neither shape nor type
  std::size_t element_size_;
};

class ShuffleBytesCodec final : public BytesToBytesCodec {
 public:
  explicit ShuffleBytesCodec(std::size_t element_size) : element_size_(element_size) {}
  std::string_view name() const override { return kName; }

  void decode(ByteSpan encoded, ByteBuffer& decoded, std::uint64_t max_decoded_size) const override {
    if (encoded.size() > max_decoded_size)
      throw Error(ErrorKind::corrupt_data, fmt::format("codec {}: {} bytes, more than the {} a chunk holds", kName,
                                                       encoded.size(), max_decoded_size));
    require_whole_elements(encoded.size());
    decoded.resize(encoded.size());
    if (element_size_ <= 1) return copy(encoded, decoded.data());
    unshuffle(encoded, decoded.data(), element_size_);
  }

  bool decode_exact(ByteSpan encoded, MutableByteSpan decoded) const override {
    if (encoded.size() != decoded.size()) return false;
    require_whole_elements(encoded.size());
    if (element_size_ <= 1) copy(encoded, decoded.data());
    else unshuffle(encoded, decoded.data(), element_size_);
    return true;
  }

  void encode(ByteSpan decoded, ByteBuffer& encoded) const override {
    require_whole_elements(decoded.size());
    encoded.resize(decoded.size());
    if (element_size_ <= 1) return copy(decoded, encoded.data());
    shuffle(decoded, encoded.data(), element_size_);
  }

  std::uint64_t max_encoded_size(std::uint64_t decoded_size) const override { return decoded_size; }

 private:
  // After a compressor in a hand-written chain the size is not known in advance: checked here.
  void require_whole_elements(std::size_t nbytes) const {
    if (element_size_ > 1 && nbytes % element_size_ != 0)
      throw Error(ErrorKind::corrupt_data, fmt::format("codec {}: {} bytes are not a whole number of {} byte elements",
                                                       kName, nbytes, element_size_));
  }

  std::size_t element_size_;
};

std::size_t read_element_size(const nlohmann::json& configuration, const ArraySpec& decoded) {
  std::int64_t element_size = 4;  // numcodecs.Shuffle() default
  if (configuration.contains("elementsize")) element_size = require_integer(configuration, kName, "elementsize");
  if (element_size < 0) throw_bad_config(kName, fmt::format("\"elementsize\" is {}, expected 0 or more", element_size));
  const auto size = static_cast<std::uint64_t>(element_size);
  // numcodecs refuses buffers that are not whole elements; every chunk has the same size, so the
  // configuration either fits all of them or none.
  if (size > 1 && decoded.nbytes() % size != 0)
    throw_bad_config(kName, fmt::format("a {} byte chunk is not a whole number of {} byte elements", decoded.nbytes(),
                                        size));
  return static_cast<std::size_t>(size);
}

}  // namespace

std::unique_ptr<ArrayToArrayCodec> make_shuffle_filter(const nlohmann::json& configuration, const ArraySpec& decoded) {
  return std::make_unique<ShuffleFilter>(decoded, read_element_size(configuration, decoded));
}

std::unique_ptr<BytesToBytesCodec> make_shuffle_bytes_codec(const nlohmann::json& configuration, const ArraySpec& decoded) {
  return std::make_unique<ShuffleBytesCodec>(read_element_size(configuration, decoded));
}

}  // namespace zarrdirect::codec

#include "codec/packbits_codec.hpp"

#include <fmt/format.h>

namespace zarrdirect::codec {
namespace {

constexpr std::string_view kName = "numcodecs.packbits";

class PackBitsCodec final : public BytesToBytesCodec {
 public:
  std::string_view name() const override { return kName; }

  void decode(ByteSpan encoded, ByteBuffer& decoded, std::uint64_t max_decoded_size) const override {
    const std::uint64_t count = decoded_count(encoded);
    if (count > max_decoded_size)
      throw_corrupt(kName, fmt::format("holds {} elements, more than the {} expected", count, max_decoded_size));
    decoded.resize(static_cast<std::size_t>(count));
    unpack(encoded, decoded);
  }

  bool decode_exact(ByteSpan encoded, MutableByteSpan decoded) const override {
    if (decoded_count(encoded) != decoded.size()) return false;
    unpack(encoded, decoded);
    return true;
  }

  void encode(ByteSpan decoded, ByteBuffer& encoded) const override {
    const std::size_t leftover = decoded.size() % 8;
    encoded.assign(1 + (decoded.size() + 7) / 8, std::byte{0});
    encoded[0] = static_cast<std::byte>(leftover == 0 ? 0 : 8 - leftover);
    for (std::size_t i = 0; i < decoded.size(); ++i)
      if (decoded[i] != std::byte{0}) encoded[1 + i / 8] |= static_cast<std::byte>(0x80u >> (i % 8));
  }

  std::uint64_t max_encoded_size(std::uint64_t decoded_size) const override { return 1 + (decoded_size + 7) / 8; }

 private:
  // The element count `encoded` describes, once its padding count is checked.
  static std::uint64_t decoded_count(ByteSpan encoded) {
    if (encoded.empty()) throw_corrupt(kName, "0 bytes cannot hold the padding count");
    const auto padding = static_cast<unsigned>(encoded[0]);
    const std::uint64_t bits = (encoded.size() - 1) * std::uint64_t{8};
    if (padding > 7 || padding > bits)
      throw_corrupt(kName, fmt::format("{} padding bits, of {} packed bits", padding, bits));
    return bits - padding;
  }

  static void unpack(ByteSpan encoded, MutableByteSpan decoded) {
    for (std::size_t i = 0; i < decoded.size(); ++i)
      decoded[i] = static_cast<std::byte>((static_cast<unsigned>(encoded[1 + i / 8]) >> (7 - i % 8)) & 1u);
  }
};

}  // namespace

std::unique_ptr<BytesToBytesCodec> make_numcodecs_packbits_codec(const nlohmann::json&, const ArraySpec&) {
  return std::make_unique<PackBitsCodec>();
}

}  // namespace zarrdirect::codec

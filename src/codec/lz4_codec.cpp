#include "codec/lz4_codec.hpp"

#include <limits>

#include <fmt/format.h>
#include <lz4.h>

namespace zarrdirect::codec {
namespace {

constexpr std::string_view kName = "numcodecs.lz4";
constexpr std::size_t kHeaderSize = 4;

std::uint32_t read_le32(const std::byte* p) {
  return static_cast<std::uint32_t>(p[0]) | (static_cast<std::uint32_t>(p[1]) << 8) |
         (static_cast<std::uint32_t>(p[2]) << 16) | (static_cast<std::uint32_t>(p[3]) << 24);
}

void write_le32(std::byte* p, std::uint32_t value) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<std::byte>((value >> (8 * i)) & 0xffu);
}

class Lz4Codec final : public BytesToBytesCodec {
 public:
  explicit Lz4Codec(int acceleration) : acceleration_(acceleration) {}
  std::string_view name() const override { return kName; }

  void decode(ByteSpan encoded, ByteBuffer& decoded, std::uint64_t max_decoded_size) const override {
    if (encoded.size() < kHeaderSize)
      throw_corrupt(kName, fmt::format("{} bytes cannot hold the 4-byte size header", encoded.size()));
    const std::uint32_t claimed = read_le32(encoded.data());
    // The header is checked before anything is allocated for it.
    if (claimed > max_decoded_size)
      throw_corrupt(kName, fmt::format("header claims {} bytes, more than the {} this chunk can hold", claimed,
                                       max_decoded_size));
    ByteSpan block = encoded.subspan(kHeaderSize);
    if (claimed > static_cast<std::uint32_t>(LZ4_MAX_INPUT_SIZE) ||
        block.size() > static_cast<std::size_t>(std::numeric_limits<int>::max()))
      throw_corrupt(kName, fmt::format("a {} byte block decoding to {} bytes is beyond LZ4's limits", block.size(),
                                       claimed));
    decoded.resize(claimed);
    const int written = LZ4_decompress_safe(reinterpret_cast<const char*>(block.data()),
                                            reinterpret_cast<char*>(decoded.data()), static_cast<int>(block.size()),
                                            static_cast<int>(claimed));
    if (written < 0) throw_corrupt(kName, "invalid or truncated LZ4 block");
    if (static_cast<std::uint32_t>(written) != claimed)
      throw_corrupt(kName, fmt::format("header claims {} bytes, the block holds {}", claimed, written));
  }

  void encode(ByteSpan decoded, ByteBuffer& encoded) const override {
    if (decoded.size() > static_cast<std::size_t>(LZ4_MAX_INPUT_SIZE))
      throw Error(ErrorKind::unsupported,
                  fmt::format("codec {}: {} bytes exceed LZ4's largest block", kName, decoded.size()));
    const int source_size = static_cast<int>(decoded.size());
    const int capacity = LZ4_compressBound(source_size);
    encoded.resize(kHeaderSize + static_cast<std::size_t>(capacity));
    write_le32(encoded.data(), static_cast<std::uint32_t>(decoded.size()));
    const int written =
        LZ4_compress_fast(reinterpret_cast<const char*>(decoded.data()),
                          reinterpret_cast<char*>(encoded.data() + kHeaderSize), source_size, capacity, acceleration_);
    if (written <= 0) throw Error(ErrorKind::invalid_argument, fmt::format("codec {}: compression failed", kName));
    encoded.resize(kHeaderSize + static_cast<std::size_t>(written));
  }

  std::uint64_t max_encoded_size(std::uint64_t decoded_size) const override {
    // LZ4_compressBound takes an int; its formula, n + n/255 + 16, holds for larger n too.
    return kHeaderSize + decoded_size + decoded_size / 255 + 16;
  }

 private:
  int acceleration_;
};

}  // namespace

std::unique_ptr<BytesToBytesCodec> make_numcodecs_lz4_codec(const nlohmann::json& configuration, const ArraySpec&) {
  std::int64_t acceleration = 1;  // numcodecs.LZ4() default
  if (configuration.contains("acceleration")) acceleration = require_integer(configuration, kName, "acceleration");
  // LZ4 treats values below 1 as 1 and caps large ones itself; only the int range matters here.
  if (acceleration < std::numeric_limits<int>::min() || acceleration > std::numeric_limits<int>::max())
    throw_bad_config(kName, fmt::format("\"acceleration\" {} is out of range", acceleration));
  return std::make_unique<Lz4Codec>(static_cast<int>(acceleration));
}

}  // namespace zarrdirect::codec

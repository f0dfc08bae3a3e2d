#include "codec/checksum32_codec.hpp"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>
#include <zlib.h>

#include "codec/crc32c.hpp"

namespace zarrdirect::codec {
namespace {

using Checksum = std::uint32_t (*)(ByteSpan);

std::uint32_t zlib_crc32(ByteSpan data) {
  return static_cast<std::uint32_t>(
      crc32_z(0, reinterpret_cast<const Bytef*>(data.data()), static_cast<z_size_t>(data.size())));
}

std::uint32_t zlib_adler32(ByteSpan data) {
  return static_cast<std::uint32_t>(
      adler32_z(1, reinterpret_cast<const Bytef*>(data.data()), static_cast<z_size_t>(data.size())));
}

std::uint32_t castagnoli(ByteSpan data) { return crc32c(data); }

std::uint32_t load_le32(const std::byte* p) {
  return static_cast<std::uint32_t>(p[0]) | (static_cast<std::uint32_t>(p[1]) << 8) |
         (static_cast<std::uint32_t>(p[2]) << 16) | (static_cast<std::uint32_t>(p[3]) << 24);
}

void store_le32(std::uint32_t value, std::byte* p) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<std::byte>((value >> (8 * i)) & 0xffu);
}

class Checksum32Codec final : public BytesToBytesCodec {
 public:
  Checksum32Codec(std::string_view name, Checksum checksum, bool at_start)
      : name_(name), checksum_(checksum), at_start_(at_start) {}
  std::string_view name() const override { return name_; }

  void decode(ByteSpan encoded, ByteBuffer& decoded, std::uint64_t max_decoded_size) const override {
    const ByteSpan payload = verified_payload(encoded);
    if (payload.size() > max_decoded_size)
      throw_corrupt(name_, fmt::format("holds {} bytes, more than the {} expected", payload.size(), max_decoded_size));
    decoded.assign(payload.begin(), payload.end());
  }

  bool decode_exact(ByteSpan encoded, MutableByteSpan decoded) const override {
    if (encoded.size() != decoded.size() + 4) return false;
    const ByteSpan payload = verified_payload(encoded);
    std::memcpy(decoded.data(), payload.data(), payload.size());
    return true;
  }

  void encode(ByteSpan decoded, ByteBuffer& encoded) const override {
    encoded.resize(decoded.size() + 4);
    std::byte* payload = encoded.data() + (at_start_ ? 4 : 0);
    if (!decoded.empty()) std::memcpy(payload, decoded.data(), decoded.size());
    store_le32(checksum_(decoded), at_start_ ? encoded.data() : encoded.data() + decoded.size());
  }

  std::uint64_t max_encoded_size(std::uint64_t decoded_size) const override { return decoded_size + 4; }

 private:
  // The payload of `encoded` once its checksum matches.
  ByteSpan verified_payload(ByteSpan encoded) const {
    if (encoded.size() < 4) throw_corrupt(name_, fmt::format("{} bytes cannot hold a 4 byte checksum", encoded.size()));
    const ByteSpan payload = at_start_ ? encoded.subspan(4) : encoded.first(encoded.size() - 4);
    const std::uint32_t stored = load_le32(at_start_ ? encoded.data() : encoded.data() + payload.size());
    const std::uint32_t computed = checksum_(payload);
    if (stored != computed)
      throw_corrupt(name_, fmt::format("checksum mismatch: stored {:08x}, computed {:08x}", stored, computed));
    return payload;
  }

  std::string_view name_;
  Checksum checksum_;
  bool at_start_;
};

// numcodecs' `location`, where the configuration gives one.
bool checksum_at_start(const nlohmann::json& configuration, std::string_view name, bool at_start_by_default) {
  if (!configuration.is_object() || !configuration.contains("location") || configuration["location"].is_null())
    return at_start_by_default;
  const std::string location = require_string(configuration, name, "location");
  if (location != "start" && location != "end")
    throw_bad_config(name, fmt::format("\"location\" is \"{}\", expected \"start\" or \"end\"", location.substr(0, 40)));
  return location == "start";
}

}  // namespace

std::uint32_t fletcher32(ByteSpan data) {
  // Sums kept in 64 bits and reduced every block: the same residues as reducing every step.
  constexpr std::size_t kBlockWords = 1u << 16;
  std::uint64_t sum1 = 0;
  std::uint64_t sum2 = 0;
  const std::size_t words = (data.size() + 1) / 2;
  for (std::size_t first = 0; first < words; first += kBlockWords) {
    const std::size_t last = std::min(words, first + kBlockWords);
    for (std::size_t w = first; w < last; ++w) {
      const auto low = static_cast<std::uint32_t>(data[2 * w]);
      const std::uint32_t high = 2 * w + 1 < data.size() ? static_cast<std::uint32_t>(data[2 * w + 1]) : 0u;
      sum1 += low | (high << 8);
      sum2 += sum1;
    }
    sum1 %= 0xffff;
    sum2 %= 0xffff;
  }
  return static_cast<std::uint32_t>((sum2 << 16) | sum1);
}

std::unique_ptr<BytesToBytesCodec> make_numcodecs_crc32_codec(const nlohmann::json& configuration, const ArraySpec&) {
  constexpr std::string_view kName = "numcodecs.crc32";
  return std::make_unique<Checksum32Codec>(kName, zlib_crc32, checksum_at_start(configuration, kName, true));
}

std::unique_ptr<BytesToBytesCodec> make_numcodecs_adler32_codec(const nlohmann::json& configuration, const ArraySpec&) {
  constexpr std::string_view kName = "numcodecs.adler32";
  return std::make_unique<Checksum32Codec>(kName, zlib_adler32, checksum_at_start(configuration, kName, true));
}

std::unique_ptr<BytesToBytesCodec> make_numcodecs_crc32c_codec(const nlohmann::json& configuration, const ArraySpec&) {
  constexpr std::string_view kName = "numcodecs.crc32c";
  return std::make_unique<Checksum32Codec>(kName, castagnoli, checksum_at_start(configuration, kName, false));
}

std::unique_ptr<BytesToBytesCodec> make_numcodecs_fletcher32_codec(const nlohmann::json&, const ArraySpec&) {
  return std::make_unique<Checksum32Codec>("numcodecs.fletcher32", fletcher32, false);
}

}  // namespace zarrdirect::codec

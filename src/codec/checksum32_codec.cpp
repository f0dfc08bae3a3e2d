#include "codec/checksum32_codec.hpp"

#include <algorithm>
#include <cstring>
#include <functional>

#include <fmt/format.h>
#include <zlib.h>

#include "codec/crc32c.hpp"

namespace zarrdirect::codec {
namespace {

using Checksum = std::function<std::uint32_t(ByteSpan)>;

std::uint32_t zlib_crc32(ByteSpan data) {
  return static_cast<std::uint32_t>(
      crc32_z(0, reinterpret_cast<const Bytef*>(data.data()), static_cast<z_size_t>(data.size())));
}

std::uint32_t zlib_adler32(ByteSpan data) {
  return static_cast<std::uint32_t>(
      adler32_z(1, reinterpret_cast<const Bytef*>(data.data()), static_cast<z_size_t>(data.size())));
}

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
      : name_(name), checksum_(std::move(checksum)), at_start_(at_start) {}
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
  if (!has_setting(configuration, "location")) return at_start_by_default;
  const std::string location = require_string(configuration, name, "location");
  if (location != "start" && location != "end")
    throw_bad_config(name, fmt::format("\"location\" is \"{}\", expected \"start\" or \"end\"", location.substr(0, 40)));
  return location == "start";
}

}  // namespace

std::unique_ptr<BytesToBytesCodec> make_checksum32_codec(std::string_view name, Checksum checksum, bool at_start) {
  return std::make_unique<Checksum32Codec>(name, std::move(checksum), at_start);
}

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

std::uint32_t jenkins_lookup3(ByteSpan data, std::uint32_t initval) {
  auto rotate = [](std::uint32_t x, int k) { return (x << k) | (x >> (32 - k)); };
  const auto* p = reinterpret_cast<const std::uint8_t*>(data.data());
  std::size_t length = data.size();
  // The length enters the seed as a 32-bit count, as in lookup3.c.
  std::uint32_t a = 0xdeadbeefu + static_cast<std::uint32_t>(length) + initval;
  std::uint32_t b = a;
  std::uint32_t c = a;
  auto word = [&](std::size_t at, std::size_t available) {
    std::uint32_t value = 0;
    for (std::size_t i = 0; i < 4 && i < available; ++i) value |= static_cast<std::uint32_t>(p[at + i]) << (8 * i);
    return value;
  };
  while (length > 12) {
    a += word(0, 4);
    b += word(4, 4);
    c += word(8, 4);
    // mix(a, b, c)
    a -= c; a ^= rotate(c, 4);  c += b;
    b -= a; b ^= rotate(a, 6);  a += c;
    c -= b; c ^= rotate(b, 8);  b += a;
    a -= c; a ^= rotate(c, 16); c += b;
    b -= a; b ^= rotate(a, 19); a += c;
    c -= b; c ^= rotate(b, 4);  b += a;
    p += 12;
    length -= 12;
  }
  if (length == 0) return c;  // lookup3.c: a zero-length tail skips the final mix
  a += word(0, length);
  if (length > 4) b += word(4, length - 4);
  if (length > 8) c += word(8, length - 8);
  // final(a, b, c)
  c ^= b; c -= rotate(b, 14);
  a ^= c; a -= rotate(c, 11);
  b ^= a; b -= rotate(a, 25);
  c ^= b; c -= rotate(b, 16);
  a ^= c; a -= rotate(c, 4);
  b ^= a; b -= rotate(a, 14);
  c ^= b; c -= rotate(b, 24);
  return c;
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
  return std::make_unique<Checksum32Codec>(kName, [](ByteSpan data) { return crc32c(data); },
                                           checksum_at_start(configuration, kName, false));
}

std::unique_ptr<BytesToBytesCodec> make_numcodecs_fletcher32_codec(const nlohmann::json&, const ArraySpec&) {
  return std::make_unique<Checksum32Codec>("numcodecs.fletcher32", fletcher32, false);
}

std::unique_ptr<BytesToBytesCodec> make_numcodecs_jenkins_lookup3_codec(const nlohmann::json& configuration,
                                                                       const ArraySpec&) {
  constexpr std::string_view kName = "numcodecs.jenkins_lookup3";
  std::int64_t initval = 0;
  if (has_setting(configuration, "initval")) initval = require_integer(configuration, kName, "initval");
  if (initval < 0 || initval > 0xffffffffLL)
    throw_bad_config(kName, fmt::format("\"initval\" is {}, expected 0 to 4294967295", initval));
  if (has_setting(configuration, "prefix"))
    throw Error(ErrorKind::unsupported, fmt::format("codec {}: a \"prefix\" is not supported", kName));
  const auto seed = static_cast<std::uint32_t>(initval);
  return std::make_unique<Checksum32Codec>(kName, [seed](ByteSpan data) { return jenkins_lookup3(data, seed); },
                                           false);
}

}  // namespace zarrdirect::codec

#include "codec/bitround_filter.hpp"

#include <cstring>

#include <fmt/format.h>

#include "codec/filter_support.hpp"

namespace zarrdirect::codec {
namespace {

constexpr std::string_view kName = "numcodecs.bitround";

// Explicit mantissa bits of IEEE half, single and double precision.
int mantissa_bits(const DataType& type) { return type.size == 2 ? 10 : type.size == 4 ? 23 : 52; }

class BitRoundFilter final : public FilterCodec {
 public:
  BitRoundFilter(const ArraySpec& decoded, int keepbits)
      : FilterCodec(kName, decoded, decoded.dtype), dropped_bits_(mantissa_bits(decoded.dtype) - keepbits) {
    encode_fill_value();
  }

  void decode(ByteSpan encoded, MutableByteSpan decoded) const override {
    if (encoded.data() != decoded.data()) std::memcpy(decoded.data(), encoded.data(), encoded.size());
  }

 protected:
  void encode_elements(const std::byte* decoded, std::byte* encoded, std::size_t count) const override {
    switch (decoded_spec().dtype.size) {
      case 2: round_bits<std::uint16_t>(decoded, encoded, count); break;
      case 4: round_bits<std::uint32_t>(decoded, encoded, count); break;
      default: round_bits<std::uint64_t>(decoded, encoded, count); break;
    }
  }

 private:
  // Rounds on the bit pattern: adding half a unit of the last kept bit (less one, plus that bit,
  // for ties to even) carries into the kept bits exactly when rounding up is due.
  template <class Bits>
  void round_bits(const std::byte* decoded, std::byte* encoded, std::size_t count) const {
    if (dropped_bits_ == 0) {
      std::memcpy(encoded, decoded, count * sizeof(Bits));
      return;
    }
    const auto dropped = static_cast<unsigned>(dropped_bits_);
    const Bits mask = static_cast<Bits>(~Bits{0} << dropped);
    const Bits half_unit_less_one = static_cast<Bits>((Bits{1} << (dropped - 1)) - 1);
    for (std::size_t i = 0; i < count; ++i) {
      Bits bits;
      std::memcpy(&bits, decoded + i * sizeof(Bits), sizeof(Bits));
      const Bits last_kept = static_cast<Bits>((bits >> dropped) & 1u);
      bits = static_cast<Bits>(static_cast<Bits>(bits + last_kept + half_unit_less_one) & mask);
      std::memcpy(encoded + i * sizeof(Bits), &bits, sizeof(Bits));
    }
  }

  int dropped_bits_;
};

}  // namespace

std::unique_ptr<ArrayToArrayCodec> make_bitround_filter(const nlohmann::json& configuration, const ArraySpec& decoded) {
  if (decoded.dtype.kind != ScalarKind::floating)
    throw_bad_config(kName, fmt::format("only float arrays can be bit-rounded, this one holds {}", decoded.dtype.name()));
  const std::int64_t keepbits = require_integer(configuration, kName, "keepbits");
  const int available = mantissa_bits(decoded.dtype);
  if (keepbits < 0 || keepbits > available)
    throw_bad_config(kName, fmt::format("\"keepbits\" is {}, expected 0 to {} for {}", keepbits, available,
                                        decoded.dtype.name()));
  return std::make_unique<BitRoundFilter>(decoded, static_cast<int>(keepbits));
}

}  // namespace zarrdirect::codec

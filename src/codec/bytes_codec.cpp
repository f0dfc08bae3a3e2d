#include "codec/bytes_codec.hpp"

#include <cstring>

#include <fmt/format.h>

namespace zarrdirect::codec {
namespace {

class BytesCodec final : public ArrayToBytesCodec {
 public:
  BytesCodec(ArraySpec spec, ByteOrder order) : spec_(std::move(spec)), order_(order) {}
  std::string_view name() const override { return "bytes"; }

  void decode(ByteSpan encoded, MutableByteSpan decoded) const override {
    if (encoded.size() != decoded.size())
      throw_corrupt("bytes", fmt::format("chunk holds {} bytes, {} expected for {} elements of {}", encoded.size(),
                                         decoded.size(), spec_.num_elements(), spec_.dtype.name()));
    if (encoded.data() != decoded.data()) std::memcpy(decoded.data(), encoded.data(), encoded.size());
    if (needs_swap()) byteswap_in_place(decoded.data(), spec_.num_elements(), spec_.dtype);
  }

  void encode(ByteSpan decoded, ByteBuffer& encoded) const override {
    encoded.assign(decoded.begin(), decoded.end());
    if (needs_swap()) byteswap_in_place(encoded.data(), spec_.num_elements(), spec_.dtype);
  }

  std::uint64_t max_encoded_size() const override { return spec_.nbytes(); }
  bool is_identity() const override { return !needs_swap(); }
  bool decodes_in_place() const override { return true; }

 private:
  bool needs_swap() const { return order_ != ByteOrder::not_applicable && order_ != native_byte_order(); }
  ArraySpec spec_;
  ByteOrder order_;
};

}  // namespace

std::shared_ptr<ArrayToBytesCodec> make_bytes_codec(const nlohmann::json& configuration, const ArraySpec& decoded) {
  ByteOrder order = ByteOrder::not_applicable;
  if (auto it = configuration.find("endian"); it != configuration.end()) {
    if (!it->is_string()) throw_bad_config("bytes", "\"endian\" must be \"little\" or \"big\"");
    auto text = it->get<std::string>();
    if (text == "little") order = ByteOrder::little;
    else if (text == "big") order = ByteOrder::big;
    else throw_bad_config("bytes", fmt::format("\"endian\" is {}, expected \"little\" or \"big\"", it->dump()));
  } else if (decoded.dtype.size > 1) {
    throw_bad_config("bytes", fmt::format("\"endian\" is required for {}", decoded.dtype.name()));
  }
  if (decoded.dtype.size == 1) order = ByteOrder::not_applicable;
  return std::make_shared<BytesCodec>(decoded, order);
}

}  // namespace zarrdirect::codec

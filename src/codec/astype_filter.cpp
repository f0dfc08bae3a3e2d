#include "codec/astype_filter.hpp"

#include <fmt/format.h>

#include "codec/filter_support.hpp"
#include "codec/numpy_cast.hpp"

namespace zarrdirect::codec {
namespace {

constexpr std::string_view kName = "numcodecs.astype";

class AsTypeFilter final : public FilterCodec {
 public:
  AsTypeFilter(const ArraySpec& decoded, const DataType& encode_dtype) : FilterCodec(kName, decoded, encode_dtype) {
    encode_fill_value();
  }

  void decode(ByteSpan encoded, MutableByteSpan decoded) const override {
    cast_elements(kName, encoded, encoded_spec().dtype, decoded, decoded_spec().dtype);
  }

 protected:
  void encode_elements(const std::byte* decoded, std::byte* encoded, std::size_t count) const override {
    cast_elements(kName, ByteSpan(decoded, count * decoded_spec().dtype.size), decoded_spec().dtype,
                  MutableByteSpan(encoded, count * encoded_spec().dtype.size), encoded_spec().dtype);
  }
};

}  // namespace

std::unique_ptr<ArrayToArrayCodec> make_astype_filter(const nlohmann::json& configuration, const ArraySpec& decoded) {
  const DataType encode_dtype = read_filter_dtype(configuration, kName, "encode_dtype");
  const DataType decode_dtype = read_optional_filter_dtype(configuration, kName, "decode_dtype", decoded.dtype);
  require_decoded_dtype(kName, "decode_dtype", decode_dtype, decoded);
  if (encode_dtype.kind == ScalarKind::complex || decode_dtype.kind == ScalarKind::complex)
    throw Error(ErrorKind::unsupported, fmt::format("codec {}: complex types are not supported", kName));
  return std::make_unique<AsTypeFilter>(decoded, encode_dtype);
}

}  // namespace zarrdirect::codec

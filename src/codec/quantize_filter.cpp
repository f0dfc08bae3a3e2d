#include "codec/quantize_filter.hpp"

#include <cmath>

#include "codec/filter_support.hpp"
#include "codec/numpy_cast.hpp"
#include "codec/numpy_scalar.hpp"

namespace zarrdirect::codec {
namespace {

constexpr std::string_view kName = "numcodecs.quantize";

class QuantizeFilter final : public FilterCodec {
 public:
  QuantizeFilter(const ArraySpec& decoded, const DataType& astype, double scale)
      : FilterCodec(kName, decoded, astype), scale_(scale) {
    encode_fill_value();
  }

  void decode(ByteSpan encoded, MutableByteSpan decoded) const override {
    cast_elements(kName, encoded, encoded_spec().dtype, decoded, decoded_spec().dtype);
  }

 protected:
  void encode_elements(const std::byte* decoded, std::byte* encoded, std::size_t count) const override {
    // Only float types get here (checked when the codec is made). Each type is ruled out at its own
    // level: clang checks the inner lambda's body as soon as the outer type is known.
    visit_element_type(decoded_spec().dtype, kName, [&]<class Value>(Value) {
      if constexpr (is_float_element<Value>) {
        visit_element_type(encoded_spec().dtype, kName, [&]<class Stored>(Stored) {
          if constexpr (is_float_element<Stored>) {
            // np.around(scale * arr) / scale, in the array's own type.
            const auto scale = numpy_cast<Value>(scale_);
            for (std::size_t i = 0; i < count; ++i) {
              const Value x = load_element<Value>(decoded, i);
              store_element(encoded, i, numpy_cast<Stored>(numpy_around(scale * x) / scale));
            }
          }
        });
      }
    });
  }

 private:
  double scale_;
};

}  // namespace

double quantize_scale(std::int64_t digits) {
  // The same steps as numcodecs, including Python's math.log(x, base) = log(x) / log(base), so
  // that the floor/ceil land where they do there.
  const double precision = std::pow(10.0, -static_cast<double>(digits));
  double exponent = std::log(precision) / std::log(10.0);
  exponent = exponent < 0 ? std::floor(exponent) : std::ceil(exponent);
  const double bits = std::ceil(std::log(std::pow(10.0, -exponent)) / std::log(2.0));
  return std::pow(2.0, bits);
}

std::unique_ptr<ArrayToArrayCodec> make_quantize_filter(const nlohmann::json& configuration, const ArraySpec& decoded) {
  const std::int64_t digits = require_integer(configuration, kName, "digits");
  const DataType dtype = read_filter_dtype(configuration, kName, "dtype");
  const DataType astype = read_optional_filter_dtype(configuration, kName, "astype", dtype);
  require_decoded_dtype(kName, "dtype", dtype, decoded);
  require_float_type(kName, "dtype", dtype);
  require_float_type(kName, "astype", astype);
  return std::make_unique<QuantizeFilter>(decoded, astype, quantize_scale(digits));
}

}  // namespace zarrdirect::codec

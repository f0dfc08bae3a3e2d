#include "codec/fixed_scale_offset_filter.hpp"

#include "codec/filter_support.hpp"
#include "codec/numpy_scalar.hpp"

namespace zarrdirect::codec {
namespace {

constexpr std::string_view kName = "numcodecs.fixedscaleoffset";

// The type NumPy computes `array <op> python_number` in (NEP 50: Python numbers take the array's
// type): float arrays keep their type, integer arrays stay integer with integer operands and
// become float64 with a fractional one.
template <class T>
using FloatArithmetic = std::conditional_t<is_float_element<T>, T, double>;

class FixedScaleOffsetFilter final : public FilterCodec {
 public:
  FixedScaleOffsetFilter(const ArraySpec& decoded, const DataType& astype, double scale, double offset,
                         bool integer_operands)
      : FilterCodec(kName, decoded, astype), scale_(scale), offset_(offset), integer_operands_(integer_operands) {
    encode_fill_value();
  }

  void decode(ByteSpan encoded, MutableByteSpan decoded) const override {
    with_types([&]<class Value, class Stored>(Value, Stored) {
      // `enc / scale` is true division: float64 for integer astype, astype's own float type otherwise.
      using Compute = FloatArithmetic<Stored>;
      const auto scale = numpy_cast<Compute>(scale_);
      const auto offset = numpy_cast<Compute>(offset_);
      for (std::size_t i = 0; i < element_count(); ++i) {
        const auto x = numpy_cast<Compute>(load_element<Stored>(encoded.data(), i));
        store_element(decoded.data(), i, numpy_cast<Value>(x / scale + offset));
      }
    });
  }

 protected:
  void encode_elements(const std::byte* decoded, std::byte* encoded, std::size_t count) const override {
    with_types([&]<class Value, class Stored>(Value, Stored) {
      if constexpr (is_integer_element<Value>) {
        if (integer_operands_) {
          encode_with<Value, Value, Stored>(decoded, encoded, count);
          return;
        }
      }
      encode_with<Value, FloatArithmetic<Value>, Stored>(decoded, encoded, count);
    });
  }

 private:
  // round((x - offset) * scale) computed in Compute, stored as Stored.
  template <class Value, class Compute, class Stored>
  void encode_with(const std::byte* decoded, std::byte* encoded, std::size_t count) const {
    const auto scale = numpy_cast<Compute>(scale_);
    const auto offset = numpy_cast<Compute>(offset_);
    for (std::size_t i = 0; i < count; ++i) {
      const auto x = numpy_cast<Compute>(load_element<Value>(decoded, i));
      const Compute scaled = numpy_around(numpy_multiply(numpy_subtract(x, offset), scale));
      store_element(encoded, i, numpy_cast<Stored>(scaled));
    }
  }

  template <class Kernel>
  void with_types(Kernel&& kernel) const {
    visit_element_type(decoded_spec().dtype, kName, [&]<class Value>(Value) {
      visit_element_type(encoded_spec().dtype, kName, [&]<class Stored>(Stored) {
        // Refused when the codec is made; ruling them out here keeps bool arithmetic uncompiled.
        if constexpr (!std::is_same_v<Value, Bool8> && !std::is_same_v<Stored, Bool8>) kernel(Value{}, Stored{});
      });
    });
  }

  double scale_;
  double offset_;
  bool integer_operands_;  // both scale and offset are JSON integers
};

}  // namespace

std::unique_ptr<ArrayToArrayCodec> make_fixed_scale_offset_filter(const nlohmann::json& configuration,
                                                                  const ArraySpec& decoded) {
  const DataType dtype = read_filter_dtype(configuration, kName, "dtype");
  const DataType astype = read_optional_filter_dtype(configuration, kName, "astype", dtype);
  require_decoded_dtype(kName, "dtype", dtype, decoded);
  require_real_number_type(kName, "dtype", dtype);
  require_real_number_type(kName, "astype", astype);
  const double scale = require_number(configuration, kName, "scale");
  const double offset = require_number(configuration, kName, "offset");
  if (scale == 0) throw_bad_config(kName, "\"scale\" is 0: every value would decode to infinity");
  const bool integer_operands = configuration["scale"].is_number_integer() && configuration["offset"].is_number_integer();
  return std::make_unique<FixedScaleOffsetFilter>(decoded, astype, scale, offset, integer_operands);
}

}  // namespace zarrdirect::codec

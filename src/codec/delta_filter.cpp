#include "codec/delta_filter.hpp"

#include "codec/filter_support.hpp"
#include "codec/numpy_scalar.hpp"

namespace zarrdirect::codec {
namespace {

constexpr std::string_view kName = "numcodecs.delta";

class DeltaFilter final : public FilterCodec {
 public:
  DeltaFilter(const ArraySpec& decoded, const DataType& astype) : FilterCodec(kName, decoded, astype) {
    encode_fill_value();
  }

  void decode(ByteSpan encoded, MutableByteSpan decoded) const override {
    with_types([&]<class Value, class Stored>(Value, Stored) {
      // NumPy's cumsum with an output array accumulates in the output's type.
      Value sum{};
      for (std::size_t i = 0; i < element_count(); ++i) {
        const Value step = numpy_cast<Value>(load_element<Stored>(encoded.data(), i));
        sum = i == 0 ? step : numpy_add(sum, step);
        store_element(decoded.data(), i, sum);
      }
    });
  }

 protected:
  void encode_elements(const std::byte* decoded, std::byte* encoded, std::size_t count) const override {
    with_types([&]<class Value, class Stored>(Value, Stored) {
      Value previous{};
      for (std::size_t i = 0; i < count; ++i) {
        const Value current = load_element<Value>(decoded, i);
        const Value difference = i == 0 ? current : numpy_subtract(current, previous);
        store_element(encoded, i, numpy_cast<Stored>(difference));
        previous = current;
      }
    });
  }

 private:
  // Calls `kernel(Value{}, Stored{})` with the decoded and encoded element types.
  template <class Kernel>
  void with_types(Kernel&& kernel) const {
    visit_element_type(decoded_spec().dtype, kName, [&]<class Value>(Value) {
      visit_element_type(encoded_spec().dtype, kName, [&]<class Stored>(Stored) {
        // Refused when the codec is made; ruling them out here keeps bool arithmetic uncompiled.
        if constexpr (!std::is_same_v<Value, Bool8> && !std::is_same_v<Stored, Bool8>) kernel(Value{}, Stored{});
      });
    });
  }
};

}  // namespace

std::unique_ptr<ArrayToArrayCodec> make_delta_filter(const nlohmann::json& configuration, const ArraySpec& decoded) {
  const DataType dtype = read_filter_dtype(configuration, kName, "dtype");
  const DataType astype = read_optional_filter_dtype(configuration, kName, "astype", dtype);
  require_decoded_dtype(kName, "dtype", dtype, decoded);
  // NumPy's diff of booleans is "not equal" and its cumsum "or": they do not invert each other.
  require_real_number_type(kName, "dtype", dtype);
  require_real_number_type(kName, "astype", astype);
  return std::make_unique<DeltaFilter>(decoded, astype);
}

}  // namespace zarrdirect::codec

// What the numcodecs filters (v2 `filters`, zarr-python 3's numcodecs.* array->array codecs)
// have in common: dtype fields in NumPy's spellings, a check that the configured dtype is the
// array's, and an encoded spec that differs from the decoded one only in its element type.
//
// The filters see the chunk flattened in memory order and in native byte order on both sides:
// the `bytes` codec after them handles the stored byte order.
#pragma once

#include <string>
#include <string_view>

#include "codec/codec.hpp"

namespace zarrdirect::codec {

// Reads a dtype field: a NumPy typestring ("<i4", "|u1", "i4") or a Zarr v3 name ("int32").
DataType read_filter_dtype(const nlohmann::json& configuration, std::string_view codec, std::string_view field);

// Reads `field` when present, else returns `fallback` (numcodecs' astype defaults to dtype).
DataType read_optional_filter_dtype(const nlohmann::json& configuration, std::string_view codec,
                                    std::string_view field, const DataType& fallback);

// Fails with Error(invalid_metadata) unless the configured `field` is the type of the array the
// filter decodes to.
void require_decoded_dtype(std::string_view codec, std::string_view field, const DataType& configured,
                           const ArraySpec& decoded);

// Fails with Error(invalid_metadata) unless `type` is an integer or floating type.
void require_real_number_type(std::string_view codec, std::string_view field, const DataType& type);
// Fails with Error(invalid_metadata) unless `type` is a floating type.
void require_float_type(std::string_view codec, std::string_view field, const DataType& type);

// A number field (integer or not) as a double.
double require_number(const nlohmann::json& configuration, std::string_view codec, std::string_view field);

// Base of the filters: keeps the name and both specs, and runs the element kernel over a chunk.
class FilterCodec : public ArrayToArrayCodec {
 public:
  std::string_view name() const override { return name_; }
  const ArraySpec& encoded_spec() const override { return encoded_; }
  void encode(ByteSpan decoded, MutableByteSpan encoded) const override {
    encode_elements(decoded.data(), encoded.data(), element_count_);
  }

 protected:
  // The encoded spec is `decoded` with `encoded_type`. A derived filter calls encode_fill_value()
  // at the end of its constructor, once encode_elements() works.
  FilterCodec(std::string_view name, const ArraySpec& decoded, const DataType& encoded_type);
  const ArraySpec& decoded_spec() const { return decoded_; }
  std::size_t element_count() const { return element_count_; }
  // Encodes `count` elements.
  virtual void encode_elements(const std::byte* decoded, std::byte* encoded, std::size_t count) const = 0;
  // Sets the encoded spec's fill value to this filter's encoding of the decoded fill value, so a
  // missing inner chunk (sharding) decodes back to the array's fill value.
  void encode_fill_value();

 private:
  std::string_view name_;  // a literal: codec names live as long as the program
  ArraySpec decoded_;
  ArraySpec encoded_;
  std::size_t element_count_;
};

}  // namespace zarrdirect::codec

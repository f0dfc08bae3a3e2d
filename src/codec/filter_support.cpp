#include "codec/filter_support.hpp"

#include <cctype>

#include <fmt/format.h>

namespace zarrdirect::codec {
namespace {

bool has_byte_order_prefix(std::string_view text) {
  return !text.empty() && (text[0] == '<' || text[0] == '>' || text[0] == '|' || text[0] == '=');
}

}  // namespace

DataType read_filter_dtype(const nlohmann::json& configuration, std::string_view codec, std::string_view field) {
  const std::string text = require_string(configuration, codec, field);
  try {
    if (has_byte_order_prefix(text)) return parse_numpy_typestr(text).type;
    // zarr-python 3 passes what the user wrote to NumPy: "i4" or "int32" as well as "<i4".
    if (text.size() >= 2 && std::isdigit(static_cast<unsigned char>(text[1])))
      return parse_numpy_typestr("=" + text).type;
    return parse_v3_data_type(text);
  } catch (const Error& e) {
    throw Error(e.kind(), fmt::format("codec {} configuration: \"{}\": {}", codec, field, e.what()));
  }
}

DataType read_optional_filter_dtype(const nlohmann::json& configuration, std::string_view codec,
                                    std::string_view field, const DataType& fallback) {
  auto it = configuration.find(field);
  if (it == configuration.end() || it->is_null()) return fallback;
  return read_filter_dtype(configuration, codec, field);
}

void require_decoded_dtype(std::string_view codec, std::string_view field, const DataType& configured,
                           const ArraySpec& decoded) {
  if (configured != decoded.dtype)
    throw_bad_config(codec, fmt::format("\"{}\" is {} but the array it decodes to holds {}", field, configured.name(),
                                        decoded.dtype.name()));
}

void require_real_number_type(std::string_view codec, std::string_view field, const DataType& type) {
  if (type.kind == ScalarKind::boolean || type.kind == ScalarKind::complex)
    throw_bad_config(codec, fmt::format("\"{}\" is {}; only integer and floating types are supported", field,
                                        type.name()));
}

void require_float_type(std::string_view codec, std::string_view field, const DataType& type) {
  if (type.kind != ScalarKind::floating)
    throw_bad_config(codec, fmt::format("\"{}\" is {}; only floating types are supported", field, type.name()));
}

double require_number(const nlohmann::json& configuration, std::string_view codec, std::string_view field) {
  const auto& value = require_member(configuration, codec, field);
  if (!value.is_number()) throw_bad_config(codec, fmt::format("\"{}\" must be a number", field));
  return value.get<double>();
}

FilterCodec::FilterCodec(std::string_view name, const ArraySpec& decoded, const DataType& encoded_type)
    : name_(name), decoded_(decoded), element_count_(static_cast<std::size_t>(decoded.num_elements())) {
  encoded_.shape = decoded.shape;
  encoded_.dtype = encoded_type;
}

void FilterCodec::encode_fill_value() {
  if (decoded_.fill_value.size() != decoded_.dtype.size) return;  // a spec made without one
  encoded_.fill_value.resize(encoded_.dtype.size);
  encode_elements(decoded_.fill_value.data(), encoded_.fill_value.data(), 1);
}

}  // namespace zarrdirect::codec

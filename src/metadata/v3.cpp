// Zarr v3 array metadata (zarr.json), per the v3 core specification.
#include <array>

#include <fmt/format.h>

#include "metadata/fill_value.hpp"
#include "metadata/json_fields.hpp"
#include "metadata/validate.hpp"
#include "zarrdirect/error.hpp"
#include "zarrdirect/metadata.hpp"

namespace zarrdirect {
namespace {

constexpr std::array<std::string_view, 11> kKnownFields{
    "zarr_format", "node_type",  "shape",      "data_type",       "chunk_grid",          "chunk_key_encoding",
    "fill_value",  "codecs",     "attributes", "dimension_names", "storage_transformers"};

// An extension point is either a bare name or {"name": ..., "configuration": {...}}.
struct NamedConfig {
  std::string name;
  nlohmann::json configuration = nlohmann::json::object();
};

NamedConfig parse_named_config(const nlohmann::json& value, std::string_view field, const std::string& where) {
  if (value.is_string()) return {value.get<std::string>()};
  if (!value.is_object()) throw_invalid_field(where, field, "must be a name or an object with \"name\"");
  NamedConfig named{parse_string(required_field(value, "name", where), fmt::format("{}.name", field), where)};
  if (auto it = value.find("configuration"); it != value.end()) {
    if (!it->is_object()) throw_invalid_field(where, fmt::format("{}.configuration", field), "must be an object");
    named.configuration = *it;
  }
  if (auto it = value.find("must_understand"); it != value.end() && !it->is_boolean())
    throw_invalid_field(where, fmt::format("{}.must_understand", field), "must be true or false");
  return named;
}

ChunkKeyEncoding parse_chunk_key_encoding(const nlohmann::json& doc, const std::string& where) {
  auto it = doc.find("chunk_key_encoding");
  if (it == doc.end()) return {};  // the default encoding with '/'
  auto named = parse_named_config(*it, "chunk_key_encoding", where);
  ChunkKeyEncoding encoding;
  if (named.name == "default") {
    encoding.kind = ChunkKeyEncoding::Kind::v3_default;
    encoding.separator = '/';
  } else if (named.name == "v2") {
    encoding.kind = ChunkKeyEncoding::Kind::v2;
    encoding.separator = '.';
  } else {
    throw Error(ErrorKind::unsupported,
                fmt::format("{}: chunk_key_encoding {} is not supported", where, json_quoted(named.name)));
  }
  if (auto sep = named.configuration.find("separator"); sep != named.configuration.end()) {
    auto text = parse_string(*sep, "chunk_key_encoding.configuration.separator", where);
    if (text != "/" && text != ".")
      throw_invalid_field(where, "chunk_key_encoding.configuration.separator", "must be \"/\" or \".\"");
    encoding.separator = text[0];
  }
  return encoding;
}

}  // namespace

ArrayMetadata parse_v3_array_metadata(const nlohmann::json& doc, const std::string& where) {
  const auto& format = required_field(doc, "zarr_format", where);
  if (!format.is_number_integer() || format.get<std::int64_t>() != 3)
    throw_invalid_field(where, "zarr_format", fmt::format("is {}, expected 3", quoted_json(format)));
  auto node_type = parse_string(required_field(doc, "node_type", where), "node_type", where);
  if (node_type != "array")
    throw_invalid_field(where, "node_type", fmt::format("is {}: this is not an array", json_quoted(node_type)));

  // An unknown field must be understood unless it says otherwise (v3 core spec, extensions).
  for (const auto& [key, value] : doc.items()) {
    bool known = std::find(kKnownFields.begin(), kKnownFields.end(), key) != kKnownFields.end();
    if (known) continue;
    bool optional = value.is_object() && value.contains("must_understand") &&
                    value["must_understand"].is_boolean() && !value["must_understand"].get<bool>();
    if (!optional)
      throw Error(ErrorKind::unsupported,
                  fmt::format("{}: unknown field {} without \"must_understand\": false", where, json_quoted(key)));
  }

  ArrayMetadata metadata;
  metadata.zarr_format = 3;
  metadata.shape = parse_extent_list(required_field(doc, "shape", where), "shape", where, false);

  auto data_type = parse_named_config(required_field(doc, "data_type", where), "data_type", where);
  try {
    metadata.dtype = parse_v3_data_type(data_type.name);
  } catch (const Error& e) {
    throw e.with_context(where);
  }

  auto grid = parse_named_config(required_field(doc, "chunk_grid", where), "chunk_grid", where);
  if (grid.name != "regular")
    throw Error(ErrorKind::unsupported, fmt::format("{}: chunk_grid {} is not supported", where, json_quoted(grid.name)));
  metadata.chunk_shape = parse_extent_list(required_field(grid.configuration, "chunk_shape", where),
                                           "chunk_grid.configuration.chunk_shape", where, true);
  metadata.chunk_key_encoding = parse_chunk_key_encoding(doc, where);

  metadata.fill_value_json = required_field(doc, "fill_value", where);
  metadata.fill_value = parse_fill_value(metadata.fill_value_json, metadata.dtype, FillValueDialect::v3, where);

  const auto& codecs = required_field(doc, "codecs", where);
  if (!codecs.is_array() || codecs.empty())
    throw_invalid_field(where, "codecs", "must be a non-empty list (it needs at least an array->bytes codec)");
  for (const auto& codec : codecs) {
    auto named = parse_named_config(codec, "codecs[]", where);
    metadata.codecs.push_back({{"name", named.name}, {"configuration", named.configuration}});
  }

  if (auto it = doc.find("attributes"); it != doc.end()) {
    if (!it->is_object()) throw_invalid_field(where, "attributes", "must be an object");
    metadata.attributes = *it;
  }
  if (auto it = doc.find("dimension_names"); it != doc.end() && !it->is_null()) {
    if (!it->is_array()) throw_invalid_field(where, "dimension_names", "must be a list");
    for (const auto& name : *it) {
      if (name.is_null()) metadata.dimension_names.emplace_back(std::nullopt);
      else metadata.dimension_names.emplace_back(parse_string(name, "dimension_names[]", where));
    }
  }
  if (auto it = doc.find("storage_transformers"); it != doc.end()) {
    if (!it->is_array()) throw_invalid_field(where, "storage_transformers", "must be a list");
    if (!it->empty())
      throw Error(ErrorKind::unsupported, fmt::format("{}: storage_transformers are not supported", where));
  }
  validate_array_metadata(metadata, where);
  return metadata;
}

}  // namespace zarrdirect

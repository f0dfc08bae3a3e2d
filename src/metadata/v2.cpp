// Zarr v2 array metadata (.zarray + .zattrs), converted to the v3 codec model:
//   order 'F'   -> transpose with the dimensions reversed (the chunk is stored column-major)
//   filters     -> numcodecs.<id> array->array codecs, in the order the metadata lists them
//   byte order  -> the bytes codec's endian, taken from the innermost encoded dtype
//   compressor  -> numcodecs.<id> bytes->bytes codec
#include <vector>

#include <fmt/format.h>

#include "metadata/fill_value.hpp"
#include "metadata/json_fields.hpp"
#include "metadata/validate.hpp"
#include "zarrdirect/error.hpp"
#include "zarrdirect/metadata.hpp"

namespace zarrdirect {
namespace {

// {"id": "zlib", "level": 1} -> {"name": "numcodecs.zlib", "configuration": {"level": 1}}
nlohmann::json numcodecs_entry(const nlohmann::json& spec, std::string_view field, const std::string& where) {
  if (!spec.is_object()) throw_invalid_field(where, field, "must be an object with \"id\"");
  auto id = parse_string(required_field(spec, "id", where), fmt::format("{}.id", field), where);
  nlohmann::json configuration = spec;
  configuration.erase("id");
  return {{"name", "numcodecs." + id}, {"configuration", configuration}};
}

std::string_view endian_name(ByteOrder order) { return order == ByteOrder::big ? "big" : "little"; }

// numcodecs filters that see bytes, not values: the shuffle, the checksums and packbits (the codec
// layer's bytes->bytes numcodecs.* names that v2 lists among filters).
bool acts_on_bytes(std::string_view id) {
  return id == "shuffle" || id == "crc32" || id == "adler32" || id == "crc32c" || id == "fletcher32" ||
         id == "jenkins_lookup3" || id == "packbits";
}

}  // namespace

ArrayMetadata parse_v2_array_metadata(const nlohmann::json& doc, const nlohmann::json& attrs,
                                      const std::string& where) {
  const auto& format = required_field(doc, "zarr_format", where);
  if (!format.is_number_integer() || format.get<std::int64_t>() != 2)
    throw_invalid_field(where, "zarr_format", fmt::format("is {}, expected 2", quoted_json(format)));

  ArrayMetadata metadata;
  metadata.zarr_format = 2;
  metadata.shape = parse_extent_list(required_field(doc, "shape", where), "shape", where, false);
  metadata.chunk_shape = parse_extent_list(required_field(doc, "chunks", where), "chunks", where, true);

  const auto& dtype_field = required_field(doc, "dtype", where);
  if (!dtype_field.is_string())
    throw Error(ErrorKind::unsupported, fmt::format("{}: dtype {}: structured dtypes are not supported", where,
                                                    quoted_json(dtype_field)));
  TypestrParts dtype;
  try {
    dtype = parse_numpy_typestr(dtype_field.get<std::string>());
  } catch (const Error& e) {
    throw e.with_context(where);
  }
  metadata.dtype = dtype.type;

  metadata.fill_value_json = doc.contains("fill_value") ? doc["fill_value"] : nlohmann::json();
  metadata.fill_value = parse_fill_value(metadata.fill_value_json, metadata.dtype, FillValueDialect::v2, where);

  std::string order = "C";
  if (auto it = doc.find("order"); it != doc.end()) order = parse_string(*it, "order", where);
  if (order != "C" && order != "F") throw_invalid_field(where, "order", "must be \"C\" or \"F\"");

  char separator = '.';
  if (auto it = doc.find("dimension_separator"); it != doc.end() && !it->is_null()) {
    auto text = parse_string(*it, "dimension_separator", where);
    if (text != "." && text != "/") throw_invalid_field(where, "dimension_separator", "must be \".\" or \"/\"");
    separator = text[0];
  }
  metadata.chunk_key_encoding = {ChunkKeyEncoding::Kind::v2, separator};

  if (order == "F" && metadata.shape.size() > 1) {
    nlohmann::json reversed = nlohmann::json::array();
    for (std::size_t d = metadata.shape.size(); d-- > 0;) reversed.push_back(d);
    metadata.codecs.push_back({{"name", "transpose"}, {"configuration", {{"order", reversed}}}});
  }

  // The bytes on disk hold the innermost filter's encoded type; its byte order is the one to undo.
  ByteOrder stored_order = dtype.order;
  // numcodecs applies filters to buffers in the stored byte order. A shuffle acts on bytes only,
  // and a checksum adds 4 bytes to them: the filters of those kinds that end the list go after
  // the bytes codec, on the stored bytes, exactly as numcodecs runs them. A shuffle followed by
  // an arithmetic filter runs on the array, which matches numcodecs only when the stored order
  // is the machine's (little-endian); a checksum followed by one has no array to run on.
  std::vector<nlohmann::json> byte_filters;
  if (auto it = doc.find("filters"); it != doc.end() && !it->is_null()) {
    if (!it->is_array()) throw_invalid_field(where, "filters", "must be null or a list");
    auto id_of = [](const nlohmann::json& filter) {
      const nlohmann::json id = filter.is_object() ? filter.value("id", nlohmann::json()) : nlohmann::json();
      return id.is_string() ? id.get<std::string>() : std::string();
    };
    std::size_t trailing_byte_filters = 0;
    for (const auto& filter : *it)
      trailing_byte_filters = acts_on_bytes(id_of(filter)) ? trailing_byte_filters + 1 : 0;
    std::size_t index = 0;
    for (const auto& filter : *it) {
      if (index++ >= it->size() - trailing_byte_filters) {
        byte_filters.push_back(numcodecs_entry(filter, "filters[]", where));
        continue;
      }
      const std::string id = id_of(filter);
      if (acts_on_bytes(id) && id != "shuffle")
        throw Error(ErrorKind::unsupported,
                    fmt::format("{}: filters[]: {} is followed by an arithmetic filter, which numcodecs "
                                "would run on the bytes it made (a checksum added, bits packed); not supported",
                                where, quoted_json(filter["id"])));
      if (id == "shuffle" && stored_order == ByteOrder::big)
        throw Error(ErrorKind::unsupported,
                    fmt::format("{}: filters[]: a shuffle before an arithmetic filter on big-endian data is not "
                                "supported",
                                where));
      metadata.codecs.push_back(numcodecs_entry(filter, "filters[]", where));
      // numcodecs views the bytes it is given as the filter's dtype: one whose byte order is not
      // the order of what it receives works on byte-swapped values (Delta(dtype="i4") on a ">i4"
      // array), which the codec chain has no step for. Refused: they were read as garbage.
      for (const char* key : {"dtype", "decode_dtype"}) {
        auto found = filter.find(key);
        if (found == filter.end() || !found->is_string()) continue;
        ByteOrder declared;
        try {
          declared = parse_numpy_typestr(found->get<std::string>()).order;
        } catch (const Error& e) {
          throw e.with_context(where);
        }
        if (declared != ByteOrder::not_applicable && stored_order != ByteOrder::not_applicable &&
            declared != stored_order)
          throw Error(ErrorKind::unsupported,
                      fmt::format("{}: filters[].{} {} is {}-endian but the data it filters is {}-endian: "
                                  "numcodecs would filter byte-swapped values; not supported",
                                  where, key, quoted_json(*found), endian_name(declared), endian_name(stored_order)));
      }
      for (const char* key : {"astype", "encode_dtype"}) {
        auto found = filter.find(key);
        if (found == filter.end()) continue;
        if (!found->is_string()) throw_invalid_field(where, fmt::format("filters[].{}", key), "must be a dtype string");
        try {
          stored_order = parse_numpy_typestr(found->get<std::string>()).order;
        } catch (const Error& e) {
          throw e.with_context(where);
        }
      }
    }
  }
  nlohmann::json bytes = {{"name", "bytes"}, {"configuration", nlohmann::json::object()}};
  if (stored_order != ByteOrder::not_applicable) bytes["configuration"]["endian"] = endian_name(stored_order);
  metadata.codecs.push_back(bytes);
  for (auto& filter : byte_filters) metadata.codecs.push_back(std::move(filter));

  if (auto it = doc.find("compressor"); it != doc.end() && !it->is_null())
    metadata.codecs.push_back(numcodecs_entry(*it, "compressor", where));

  if (attrs.is_object()) metadata.attributes = attrs;
  validate_array_metadata(metadata, where);
  return metadata;
}

}  // namespace zarrdirect

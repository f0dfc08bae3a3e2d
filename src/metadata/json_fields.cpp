#include "metadata/json_fields.hpp"

#include <fmt/format.h>

#include "zarrdirect/error.hpp"

namespace zarrdirect {

void throw_invalid_field(const std::string& where, std::string_view field, const std::string& why) {
  throw Error(ErrorKind::invalid_metadata, fmt::format("{}: field \"{}\" {}", where, field, why));
}

const nlohmann::json& required_field(const nlohmann::json& doc, std::string_view field,
                                     const std::string& where) {
  auto it = doc.find(field);
  if (it == doc.end()) throw_invalid_field(where, field, "is missing");
  return *it;
}

std::vector<std::uint64_t> parse_extent_list(const nlohmann::json& value, std::string_view field,
                                             const std::string& where, bool positive) {
  if (!value.is_array()) throw_invalid_field(where, field, "must be a list of integers");
  // Zarr arrays of more than 32 dimensions exist nowhere; the limit keeps hostile lists bounded.
  if (value.size() > 32) throw_invalid_field(where, field, "has more than 32 dimensions");
  std::vector<std::uint64_t> extents;
  for (const auto& item : value) {
    // Parsed text holds non-negative integers as unsigned; JSON built in code (fixtures, the Python
    // module) holds them as signed: both are extents.
    if (item.is_number_unsigned() || (item.is_number_integer() && item.get<std::int64_t>() >= 0)) {
      extents.push_back(item.get<std::uint64_t>());
    } else if (item.is_number_integer()) {
      throw_invalid_field(where, field, fmt::format("has a negative extent {}", item.dump()));
    } else {
      throw_invalid_field(where, field, fmt::format("has {}, not an integer", item.dump()));
    }
    if (positive && extents.back() == 0) throw_invalid_field(where, field, "has a zero extent");
  }
  return extents;
}

std::string parse_string(const nlohmann::json& value, std::string_view field, const std::string& where) {
  if (!value.is_string()) throw_invalid_field(where, field, fmt::format("must be a string, not {}", value.dump()));
  return value.get<std::string>();
}

std::string json_quoted(std::string_view text) {
  return nlohmann::json(std::string(text)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

nlohmann::json parse_json_document(std::string_view text, const std::string& where) {
  // Parsing is iterative, but copying, comparing and printing a document recurse once per level:
  // a hostile file of a million '[' would overflow the stack there. Real metadata nests a few levels.
  constexpr int kMaxDepth = 512;
  auto limit_depth = [&](int depth, nlohmann::json::parse_event_t, nlohmann::json&) {
    if (depth > kMaxDepth)
      throw Error(ErrorKind::invalid_metadata, fmt::format("{}: JSON nests deeper than {} levels", where, kMaxDepth));
    return true;
  };
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(text, limit_depth);
  } catch (const nlohmann::json::exception& e) {
    throw Error(ErrorKind::invalid_metadata, fmt::format("{}: not valid JSON: {}", where, e.what()));
  }
  if (!doc.is_object()) throw Error(ErrorKind::invalid_metadata, fmt::format("{}: not a JSON object", where));
  return doc;
}

}  // namespace zarrdirect

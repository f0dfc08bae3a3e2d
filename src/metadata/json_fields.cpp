#include "metadata/json_fields.hpp"

#include <cmath>

#include <fmt/format.h>

#include "util/quote.hpp"
#include "zarrdirect/error.hpp"

namespace zarrdirect {

void throw_invalid_field(const std::string& where, std::string_view field, const std::string& why) {
  throw Error(ErrorKind::invalid_metadata, fmt::format("{}: field \"{}\" {}", where, printable(field, 200), why));
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
      throw_invalid_field(where, field, fmt::format("has a negative extent {}", quoted_json(item)));
    } else {
      throw_invalid_field(where, field, fmt::format("has {}, not an integer", quoted_json(item)));
    }
    if (positive && extents.back() == 0) throw_invalid_field(where, field, "has a zero extent");
  }
  return extents;
}

std::string parse_string(const nlohmann::json& value, std::string_view field, const std::string& where) {
  if (!value.is_string()) throw_invalid_field(where, field, fmt::format("must be a string, not {}", quoted_json(value)));
  return value.get<std::string>();
}

std::string json_quoted(std::string_view text) { return quote(text); }

namespace {

// Appends `value` as JSON until `out` passes `max` bytes; false once it has stopped there.
bool append_json(const nlohmann::json& value, std::string& out, std::size_t max, int depth) {
  if (out.size() > max || depth > 8) return false;
  switch (value.type()) {
    case nlohmann::json::value_t::string:
      out += quote(value.get_ref<const std::string&>(), max);
      return true;
    case nlohmann::json::value_t::number_float: {
      // nlohmann writes non-finite numbers as null; the message should say what the value is.
      const double number = value.get<double>();
      if (std::isnan(number)) out += "NaN";
      else if (std::isinf(number)) out += number > 0 ? "Infinity" : "-Infinity";
      else out += value.dump();
      return true;
    }
    case nlohmann::json::value_t::array: {
      out += '[';
      bool first = true;
      for (const auto& item : value) {
        if (!first) out += ", ";
        first = false;
        if (!append_json(item, out, max, depth + 1)) return false;
      }
      out += ']';
      return true;
    }
    case nlohmann::json::value_t::object: {
      out += '{';
      bool first = true;
      for (const auto& [name, item] : value.items()) {
        if (!first) out += ", ";
        first = false;
        out += quote(name, max);
        out += ": ";
        if (!append_json(item, out, max, depth + 1)) return false;
      }
      out += '}';
      return true;
    }
    case nlohmann::json::value_t::binary:
      out += "<binary>";
      return true;
    default:  // null, booleans, integers: short
      out += value.dump();
      return true;
  }
}

}  // namespace

std::string quoted_json(const nlohmann::json& value, std::size_t max) {
  std::string out;
  if (append_json(value, out, max, 0)) return out;
  out += "...";
  if (value.is_array()) out += fmt::format(" (a list of {} items)", value.size());
  else if (value.is_object()) out += fmt::format(" (an object of {} members)", value.size());
  return out;
}

}  // namespace zarrdirect

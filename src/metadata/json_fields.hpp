// Typed access to metadata JSON fields, failing with the file and the field named.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace zarrdirect {

[[noreturn]] void throw_invalid_field(const std::string& where, std::string_view field,
                                      const std::string& why);

const nlohmann::json& required_field(const nlohmann::json& doc, std::string_view field,
                                     const std::string& where);

// A list of non-negative integers ("shape", "chunk_shape"); `positive` refuses zeros too.
std::vector<std::uint64_t> parse_extent_list(const nlohmann::json& value, std::string_view field,
                                             const std::string& where, bool positive);

std::string parse_string(const nlohmann::json& value, std::string_view field, const std::string& where);

// `text` as a JSON string literal, quotes included: names taken from metadata go into messages this
// way, so a newline or control character in them cannot forge a second line of output.
std::string json_quoted(std::string_view text);

// Parses metadata text, failing with the file named when it is not JSON or not an object.
nlohmann::json parse_json_document(std::string_view text, const std::string& where);

}  // namespace zarrdirect

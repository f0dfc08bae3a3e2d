// Typed access to metadata JSON fields, failing with the file and the field named.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "metadata/json_document.hpp"

namespace zarrdirect {

[[noreturn]] void throw_invalid_field(const std::string& where, std::string_view field,
                                      const std::string& why);

const nlohmann::json& required_field(const nlohmann::json& doc, std::string_view field,
                                     const std::string& where);

// A list of non-negative integers ("shape", "chunk_shape"); `positive` refuses zeros too.
std::vector<std::uint64_t> parse_extent_list(const nlohmann::json& value, std::string_view field,
                                             const std::string& where, bool positive);

std::string parse_string(const nlohmann::json& value, std::string_view field, const std::string& where);

// `text` quoted for a message (util/quote.hpp): names taken from metadata go into messages this
// way, so a newline or control character in them cannot forge a second line of output, and a long
// one is shortened.
std::string json_quoted(std::string_view text);

// A JSON value from metadata for a message: written as JSON, strings quoted as above, cut after
// about `max` bytes with the size of what was cut (a 40 MB fill value stays a short message).
std::string quoted_json(const nlohmann::json& value, std::size_t max = 80);

}  // namespace zarrdirect

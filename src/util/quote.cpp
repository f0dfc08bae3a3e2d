#include "util/quote.hpp"

#include <cstdint>

#include <fmt/format.h>

namespace zarrdirect {
namespace {

// Length of the valid UTF-8 sequence starting at text[i] (2 to 4), or 0 when it is not one
// (overlong forms, surrogates and code points past U+10FFFF are not valid either).
std::size_t utf8_sequence_length(std::string_view text, std::size_t i, char32_t& code_point) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char lead = byte(i);
  std::size_t length;
  char32_t value;
  if (lead >= 0xc2 && lead <= 0xdf) { length = 2; value = lead & 0x1fu; }
  else if (lead >= 0xe0 && lead <= 0xef) { length = 3; value = lead & 0x0fu; }
  else if (lead >= 0xf0 && lead <= 0xf4) { length = 4; value = lead & 0x07u; }
  else return 0;
  if (text.size() - i < length) return 0;
  for (std::size_t k = 1; k < length; ++k) {
    if ((byte(i + k) & 0xc0u) != 0x80u) return 0;
    value = (value << 6) | (byte(i + k) & 0x3fu);
  }
  const bool overlong = (length == 3 && value < 0x800) || (length == 4 && value < 0x10000);
  if (overlong || (value >= 0xd800 && value <= 0xdfff) || value > 0x10ffff) return 0;
  code_point = value;
  return length;
}

// Valid characters that still act on a terminal or reorder what is shown.
bool is_hidden_control(char32_t c) {
  return (c >= 0x80 && c <= 0x9f) || (c >= 0x202a && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069) ||
         c == 0x200e || c == 0x200f || c == 0x061c;
}

// Appends text[i...] escaped until `max` bytes of it are taken; returns how many were taken.
std::size_t append_escaped(std::string& out, std::string_view text, std::size_t max, bool quoting) {
  std::size_t i = 0;
  while (i < text.size()) {
    const auto c = static_cast<unsigned char>(text[i]);
    std::size_t length = 1;
    if (c < 0x80) {
      if (i + 1 > max) break;
      if (c == '\n') out += "\\n";
      else if (c == '\r') out += "\\r";
      else if (c == '\t') out += "\\t";
      else if (c < 0x20 || c == 0x7f) out += fmt::format("\\x{:02x}", c);
      else if (quoting && (c == '"' || c == '\\')) (out += '\\') += static_cast<char>(c);
      else out += static_cast<char>(c);
    } else {
      char32_t code_point = 0;
      length = utf8_sequence_length(text, i, code_point);
      if (length == 0) {
        if (i + 1 > max) break;
        out += fmt::format("\\x{:02x}", c);
        length = 1;
      } else {
        if (i + length > max) break;
        if (is_hidden_control(code_point)) out += fmt::format("\\u{:04x}", static_cast<std::uint32_t>(code_point));
        else out.append(text.substr(i, length));
      }
    }
    i += length;
  }
  return i;
}

std::string shortened(std::string_view text, std::size_t max, bool quoting) {
  std::string out;
  out.reserve(std::min(text.size(), max) + 16);
  if (quoting) out += '"';
  const std::size_t taken = append_escaped(out, text, max, quoting);
  if (taken < text.size()) {
    out += "...";
    if (quoting) out += '"';
    out += fmt::format(" ({} bytes)", text.size());
  } else if (quoting) {
    out += '"';
  }
  return out;
}

}  // namespace

std::string quote(std::string_view text, std::size_t max) { return shortened(text, max, true); }

std::string printable(std::string_view text, std::size_t max) { return shortened(text, max, false); }

bool is_printable(std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      if (c < 0x20 || c == 0x7f) return false;
      ++i;
      continue;
    }
    char32_t code_point = 0;
    const std::size_t length = utf8_sequence_length(text, i, code_point);
    if (length == 0 || is_hidden_control(code_point)) return false;
    i += length;
  }
  return true;
}

}  // namespace zarrdirect

#include "cli/printable.hpp"

#include <algorithm>
#include <cstdint>

#include <fmt/format.h>

namespace zarrdirect::cli {
namespace {

// The code point of the UTF-8 sequence at the front of `text` and its length; length 0 when the
// bytes there are not valid UTF-8 (overlong forms, surrogates and values past U+10FFFF included).
std::pair<char32_t, std::size_t> decode(std::string_view text) {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char lead = byte(0);
  std::size_t length = lead < 0x80 ? 1 : lead >= 0xc2 && lead < 0xe0 ? 2 : lead >= 0xe0 && lead < 0xf0 ? 3
                                      : lead >= 0xf0 && lead < 0xf5   ? 4
                                                                      : 0;
  if (length == 0 || length > text.size()) return {0, 0};
  char32_t point = length == 1 ? lead : lead & (0x7f >> length);
  for (std::size_t i = 1; i < length; ++i) {
    if ((byte(i) & 0xc0) != 0x80) return {0, 0};
    point = (point << 6) | (byte(i) & 0x3f);
  }
  const char32_t smallest[] = {0, 0, 0x80, 0x800, 0x10000};
  if (point < smallest[length] || (point >= 0xd800 && point < 0xe000) || point > 0x10ffff) return {0, 0};
  return {point, length};
}

// Code points a terminal acts on instead of showing: C0 and C1 controls, DEL, the Unicode line
// and paragraph separators, and the bidirectional embeddings, overrides and isolates.
bool is_control(char32_t point) {
  return point < 0x20 || (point >= 0x7f && point < 0xa0) || point == 0x2028 || point == 0x2029 ||
         (point >= 0x202a && point <= 0x202e) || (point >= 0x2066 && point <= 0x2069) || point == 0x200e ||
         point == 0x200f || point == 0x061c;
}

// Escapes characters of `text` from its start while the result stays within `limit` bytes;
// `consumed` gets how many bytes of `text` that took.
std::string escape_prefix(std::string_view text, std::size_t limit, std::size_t& consumed) {
  std::string out;
  std::size_t i = 0;
  while (i < text.size()) {
    auto [point, length] = decode(text.substr(i));
    std::string piece;
    if (length == 0) {
      piece = fmt::format("\\x{:02x}", static_cast<unsigned char>(text[i]));
      length = 1;
    } else if (point == '\n') {
      piece = "\\n";
    } else if (point == '\r') {
      piece = "\\r";
    } else if (point == '\t') {
      piece = "\\t";
    } else if (is_control(point)) {
      piece = point < 0x80 ? fmt::format("\\x{:02x}", static_cast<unsigned>(point))
                           : fmt::format("\\u{:04x}", static_cast<unsigned>(point));
    } else {
      piece = std::string(text.substr(i, length));
    }
    if (out.size() + piece.size() > limit) break;
    out += piece;
    i += length;
  }
  consumed = i;
  return out;
}

// Moves `start` forward past UTF-8 continuation bytes, to the start of a character.
std::size_t align(std::string_view text, std::size_t start) {
  for (int step = 0; step < 3 && start < text.size() && (static_cast<unsigned char>(text[start]) & 0xc0) == 0x80; ++step)
    ++start;
  return start;
}

}  // namespace

std::string printable_line(std::string_view text, std::size_t max_bytes) {
  std::size_t consumed = 0;
  std::string whole = escape_prefix(text, max_bytes, consumed);
  if (consumed == text.size()) return whole;
  // Too long: two thirds of the room for the start, the rest (less the marker) for the end.
  const std::size_t marker_room = 40;
  const std::size_t head_room = max_bytes * 2 / 3;
  const std::size_t tail_room = max_bytes > head_room + marker_room ? max_bytes - head_room - marker_room : 0;
  std::size_t head_consumed = 0;
  std::string head = escape_prefix(text, head_room, head_consumed);
  std::size_t start = align(text, text.size() - std::min(text.size() - head_consumed, tail_room));
  std::string tail;
  while (true) {
    std::size_t unused = 0;
    tail = escape_prefix(text.substr(start), SIZE_MAX, unused);
    if (tail.size() <= tail_room) break;
    start = align(text, start + (tail.size() - tail_room));  // escapes grew it: take fewer bytes
  }
  return fmt::format("{} ... [{} bytes left out] ... {}", head, start - head_consumed, tail);
}

}  // namespace zarrdirect::cli

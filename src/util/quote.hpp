// Untrusted text (names, values and paths taken from metadata or the folder) made safe to put in
// a one-line message: escaped, so it can neither break the line nor reach a terminal as control
// sequences, and shortened, so a 40 MB value does not become a 40 MB message.
//
// Escaped: '"' and '\\' (quote() only), \n \r \t, other control bytes (C0, DEL) and bytes that
// are not valid UTF-8 as \xNN, C1 controls and bidirectional overrides (valid UTF-8, but acted
// on by terminals and editors) as \uNNNN. Other UTF-8 is kept as it is.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace zarrdirect {

// `text` in double quotes, escaped; more than `max` bytes of it are cut at a character boundary
// and followed by `..." (N bytes)`, N being the length of the whole text.
std::string quote(std::string_view text, std::size_t max = 80);

// The same escaping without the quotes, for text that already reads as itself in a message (a
// file path, another library's message); quotes and backslashes are left as they are. Cut the
// same way past `max` bytes.
std::string printable(std::string_view text, std::size_t max = 1024);

// True when `text` needs none of the escaping above (the fast path for messages).
bool is_printable(std::string_view text);

}  // namespace zarrdirect

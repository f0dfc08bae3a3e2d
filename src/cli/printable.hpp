// Text from outside (file names, metadata, library messages quoting them) made safe to print on
// one terminal line: nothing in it can start a new line, move the cursor, recolour the terminal
// or reverse the text, and a huge message does not flood the screen.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace zarrdirect::cli {

// `text` with control characters escaped ("\n", "\t", "\x1b", C1 controls, line separators and
// bidirectional overrides as "\u202e"), bytes that are not UTF-8 as "\xff", and, when the
// result would be longer than `max_bytes`, its middle replaced by " ... [N bytes left out] ... "
// (the start usually names the file, the end says what is wrong).
std::string printable_line(std::string_view text, std::size_t max_bytes = 1000);

}  // namespace zarrdirect::cli

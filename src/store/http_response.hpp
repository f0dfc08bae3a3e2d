// The pure parts of talking HTTP: what a status means to a store, and the response headers the
// store checks (status line, Content-Length, Content-Range). No network here (unit-tested alone).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace zarrdirect {

enum class HttpOutcome {
  ok,            // 2xx
  missing,       // 404 and 410: no such key (a missing chunk, or no metadata there)
  refused,       // 401 and 403: access refused
  client_error,  // other 4xx (and 3xx left after redirects): the request is wrong, retrying won't help
  retry,         // 5xx, 408 and 429: the server may answer next time
};

HttpOutcome classify_status(long status);

// "HTTP/1.1 206 Partial Content" -> 206; nullopt for any other line.
std::optional<long> parse_status_line(std::string_view line);

// The value of header `name` (compared without case) in one header line "Name: value\r\n",
// trimmed; nullopt when the line is another header.
std::optional<std::string_view> header_value(std::string_view line, std::string_view name);

// A Content-Length value: digits only, no overflow.
std::optional<std::uint64_t> parse_content_length(std::string_view value);

// "bytes 0-99/1000" or "bytes 0-99/*". `total` unset for "*".
struct ContentRange {
  std::uint64_t first = 0;
  std::uint64_t last = 0;  // inclusive
  std::optional<std::uint64_t> total;
};
std::optional<ContentRange> parse_content_range(std::string_view value);

}  // namespace zarrdirect

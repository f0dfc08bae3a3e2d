// What a hostile server or a mistyped URL can hand the HTTP store: every line of the input goes
// through the status-line and header parsers (Content-Length, Content-Range), and the whole input
// through the URL functions. Parsed values must be coherent (a range's first byte at or before its
// last, inside its total), and the only exceptions are zarrdirect::Error of the kinds documented.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_support.hpp"
#include "store/http_response.hpp"
#include "store/url.hpp"
#include "zarrdirect/error.hpp"

namespace {

void parse_line(std::string_view line) {
  if (auto status = zarrdirect::parse_status_line(line)) {
    if (*status < 0) zarrdirect::fuzz::violated("negative status");
    (void)zarrdirect::classify_status(*status);
  }
  if (auto length = zarrdirect::header_value(line, "content-length")) (void)zarrdirect::parse_content_length(*length);
  if (auto value = zarrdirect::header_value(line, "content-range")) {
    if (auto range = zarrdirect::parse_content_range(*value)) {
      if (range->first > range->last) zarrdirect::fuzz::violated("content range first after last");
      if (range->total && range->last >= *range->total) zarrdirect::fuzz::violated("content range past its total");
    }
  }
}

void parse_url(std::string_view text) {
  (void)zarrdirect::url_scheme(text);
  const std::string shown = zarrdirect::url_for_messages(text);
  if (shown.size() > text.size()) zarrdirect::fuzz::violated("message form longer than the URL");
  try {
    const std::string base = zarrdirect::normalize_base_url(text);
    (void)zarrdirect::join_url(base, "c/0/0");
  } catch (const zarrdirect::Error& e) {
    if (e.kind() != zarrdirect::ErrorKind::invalid_argument && e.kind() != zarrdirect::ErrorKind::unsupported)
      zarrdirect::fuzz::violated("URL error of another kind");
  }
  (void)zarrdirect::percent_encode_key(text);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    parse_line(text.substr(start, end - start + (end < text.size() ? 1 : 0)));
    start = end + 1;
  }
  parse_url(text);
  return 0;
}

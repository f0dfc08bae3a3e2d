#include "store/http_options.hpp"

#include <charconv>
#include <cstdlib>

#include <fmt/format.h>

#include "zarrdirect/error.hpp"

namespace zarrdirect {
namespace {

void read_unsigned(const char* variable, unsigned& target, unsigned low, unsigned high) {
  const char* text = std::getenv(variable);
  if (!text || !*text) return;
  unsigned value = 0;
  std::string_view view(text);
  auto [end, ec] = std::from_chars(view.data(), view.data() + view.size(), value);
  if (ec != std::errc() || end != view.data() + view.size() || value < low || value > high)
    throw Error(ErrorKind::invalid_argument,
                fmt::format("environment variable {} must be a whole number from {} to {}", variable, low, high));
  target = value;
}

bool is_token_char(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

}  // namespace

std::vector<std::string> parse_header_lines(std::string_view text, std::string_view variable) {
  std::vector<std::string> headers;
  std::size_t number = 0;
  while (!text.empty()) {
    ++number;
    auto end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.find_first_not_of(" \t") == std::string_view::npos) continue;
    auto colon = line.find(':');
    bool valid = colon != std::string_view::npos && colon > 0;
    for (std::size_t i = 0; valid && i < colon; ++i) valid = is_token_char(line[i]);
    for (char c : line) valid = valid && (static_cast<unsigned char>(c) >= 0x20 || c == '\t') && c != 0x7f;
    if (!valid)
      throw Error(ErrorKind::invalid_argument,
                  fmt::format("{}: line {} is not a \"Name: value\" header (its text is not shown: it may hold a secret)",
                              variable, number));
    headers.emplace_back(line);
  }
  return headers;
}

HttpOptions HttpOptions::from_environment() {
  HttpOptions options;
  read_unsigned("ZARRDIRECT_HTTP_CONCURRENCY", options.concurrency, 1, 1024);
  read_unsigned("ZARRDIRECT_HTTP_RETRIES", options.retries, 0, 100);
  read_unsigned("ZARRDIRECT_HTTP_RETRY_DELAY_MS", options.retry_delay_ms, 0, 600000);
  read_unsigned("ZARRDIRECT_HTTP_CONNECT_TIMEOUT_S", options.connect_timeout_s, 1, 3600);
  read_unsigned("ZARRDIRECT_HTTP_LOW_SPEED_TIME_S", options.low_speed_time_s, 1, 3600);
  read_unsigned("ZARRDIRECT_HTTP_MAX_REDIRECTS", options.max_redirects, 0, 100);
  if (const char* token = std::getenv("ZARRDIRECT_HTTP_BEARER_TOKEN"); token && *token) {
    for (const char* c = token; *c; ++c)
      if (static_cast<unsigned char>(*c) < 0x21 || *c == 0x7f)
        throw Error(ErrorKind::invalid_argument,
                    "ZARRDIRECT_HTTP_BEARER_TOKEN holds a space or control character (its text is not shown)");
    options.bearer_token = token;
  }
  if (const char* text = std::getenv("ZARRDIRECT_HTTP_HEADERS"); text && *text)
    options.headers = parse_header_lines(text, "ZARRDIRECT_HTTP_HEADERS");
  return options;
}

}  // namespace zarrdirect

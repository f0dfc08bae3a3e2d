#include "store/http_options.hpp"

#include <algorithm>
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

void check_token(std::string_view token, std::string_view source) {
  for (char c : token)
    if (static_cast<unsigned char>(c) < 0x21 || c == 0x7f)
      throw Error(ErrorKind::invalid_argument,
                  fmt::format("{} holds a space or control character (its text is not shown)", source));
}

// The name of a "Name: value" line, lower-cased (header names are case-insensitive).
std::string header_name(std::string_view line) {
  std::string name(line.substr(0, line.find(':')));
  for (char& c : name) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  return name;
}

// Headers that frame each request or response, which the HTTP client sets itself: one given by
// the caller would replace libcurl's (a Range on a whole-object GET returns a part as if whole).
bool is_reserved_header(const std::string& lower_name) {
  return lower_name == "range" || lower_name == "content-length" || lower_name == "transfer-encoding";
}

bool sets_authorization(const std::string& line) { return header_name(line) == "authorization"; }

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
    const std::string name = header_name(line);
    if (is_reserved_header(name))
      throw Error(ErrorKind::invalid_argument,
                  fmt::format("{}: line {} sets {}, which zarrdirect sets itself for each request", variable, number,
                              name));
    // Two values for one name: which one a server takes is up to it (two Authorization lines).
    for (const std::string& earlier : headers)
      if (header_name(earlier) == name)
        throw Error(ErrorKind::invalid_argument,
                    fmt::format("{}: line {} repeats the name of an earlier header (names compare without case)",
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
  read_unsigned("ZARRDIRECT_HTTP_MERGE_GAP_BYTES", options.merge_gap_bytes, 0, 1u << 30);
  if (const char* token = std::getenv("ZARRDIRECT_HTTP_BEARER_TOKEN"); token && *token) {
    check_token(token, "ZARRDIRECT_HTTP_BEARER_TOKEN");
    options.bearer_token = token;
  }
  if (const char* text = std::getenv("ZARRDIRECT_HTTP_HEADERS"); text && *text)
    options.headers = parse_header_lines(text, "ZARRDIRECT_HTTP_HEADERS");
  if (!options.bearer_token.empty() && std::any_of(options.headers.begin(), options.headers.end(), sets_authorization))
    throw Error(ErrorKind::invalid_argument,
                "ZARRDIRECT_HTTP_HEADERS sets Authorization and ZARRDIRECT_HTTP_BEARER_TOKEN sets it too: give one");
  return options;
}

HttpOptions HttpOptions::resolve(const StoreOptions& explicit_options) {
  HttpOptions options = from_environment();
  if (explicit_options.http_concurrency != 0) {
    if (explicit_options.http_concurrency > 1024)
      throw Error(ErrorKind::invalid_argument,
                  fmt::format("StoreOptions::http_concurrency must be from 1 to 1024, not {}",
                              explicit_options.http_concurrency));
    options.concurrency = explicit_options.http_concurrency;
  }
  if (explicit_options.http_retries >= 0) {
    if (explicit_options.http_retries > 100)
      throw Error(ErrorKind::invalid_argument,
                  fmt::format("StoreOptions::http_retries must be from 0 to 100, not {}", explicit_options.http_retries));
    options.retries = static_cast<unsigned>(explicit_options.http_retries);
  }
  if (!explicit_options.http_bearer_token.empty()) {
    check_token(explicit_options.http_bearer_token, "StoreOptions::http_bearer_token");
    options.bearer_token = explicit_options.http_bearer_token;
    // It takes the place of the environment's Authorization header too.
    std::erase_if(options.headers, sets_authorization);
  }
  if (!explicit_options.http_headers.empty()) {
    std::vector<std::string> given;
    for (std::size_t i = 0; i < explicit_options.http_headers.size(); ++i) {
      const std::string& line = explicit_options.http_headers[i];
      // One header per entry: a newline inside would smuggle a second one in.
      auto parsed = line.find_first_of("\r\n") == std::string::npos
                        ? parse_header_lines(line, fmt::format("StoreOptions::http_headers[{}]", i))
                        : std::vector<std::string>{};
      if (parsed.size() != 1)
        throw Error(ErrorKind::invalid_argument,
                    fmt::format("StoreOptions::http_headers[{}] is not one \"Name: value\" header (its text is not "
                                "shown: it may hold a secret)",
                                i));
      for (std::size_t j = 0; j < given.size(); ++j)
        if (header_name(given[j]) == header_name(parsed.front()))
          throw Error(ErrorKind::invalid_argument,
                      fmt::format("StoreOptions::http_headers[{}] repeats the name of http_headers[{}] (names compare "
                                  "without case)",
                                  i, j));
      if (sets_authorization(parsed.front())) {
        if (!explicit_options.http_bearer_token.empty())
          throw Error(ErrorKind::invalid_argument,
                      fmt::format("StoreOptions::http_headers[{}] sets Authorization and StoreOptions::"
                                  "http_bearer_token sets it too: give one",
                                  i));
        options.bearer_token.clear();  // it takes the place of the environment's token
      }
      given.push_back(std::move(parsed.front()));
    }
    std::erase_if(options.headers, [&](const std::string& line) {
      return std::any_of(given.begin(), given.end(),
                         [&](const std::string& mine) { return header_name(mine) == header_name(line); });
    });
    options.headers.insert(options.headers.end(), given.begin(), given.end());
  }
  return options;
}

}  // namespace zarrdirect

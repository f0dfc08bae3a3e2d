#include "store/http_response.hpp"

#include <cctype>
#include <charconv>

namespace zarrdirect {
namespace {

std::string_view trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\r' || text.back() == '\n'))
    text.remove_suffix(1);
  return text;
}

std::optional<std::uint64_t> parse_digits(std::string_view text) {
  if (text.empty() || text.size() > 19) return std::nullopt;
  std::uint64_t value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

}  // namespace

HttpOutcome classify_status(long status) {
  if (status >= 200 && status < 300) return HttpOutcome::ok;
  if (status == 404 || status == 410) return HttpOutcome::missing;
  if (status == 401 || status == 403) return HttpOutcome::refused;
  if (status == 408 || status == 429 || status >= 500) return HttpOutcome::retry;
  return HttpOutcome::client_error;
}

std::optional<long> parse_status_line(std::string_view line) {
  if (!line.starts_with("HTTP/")) return std::nullopt;
  auto space = line.find(' ');
  if (space == std::string_view::npos) return std::nullopt;
  auto code = line.substr(space + 1, 3);
  if (code.size() != 3) return std::nullopt;
  for (char c : code)
    if (std::isdigit(static_cast<unsigned char>(c)) == 0) return std::nullopt;
  if (line.size() > space + 4 && line[space + 4] != ' ' && line[space + 4] != '\r' && line[space + 4] != '\n')
    return std::nullopt;
  return static_cast<long>(*parse_digits(code));
}

std::optional<std::string_view> header_value(std::string_view line, std::string_view name) {
  auto colon = line.find(':');
  if (colon == std::string_view::npos || colon != name.size()) return std::nullopt;
  for (std::size_t i = 0; i < name.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(line[i])) != std::tolower(static_cast<unsigned char>(name[i])))
      return std::nullopt;
  return trim(line.substr(colon + 1));
}

std::optional<std::uint64_t> parse_content_length(std::string_view value) { return parse_digits(trim(value)); }

std::optional<ContentRange> parse_content_range(std::string_view value) {
  value = trim(value);
  if (!value.starts_with("bytes ")) return std::nullopt;
  value.remove_prefix(6);
  auto dash = value.find('-');
  auto slash = value.find('/');
  if (dash == std::string_view::npos || slash == std::string_view::npos || dash > slash) return std::nullopt;
  auto first = parse_digits(value.substr(0, dash));
  auto last = parse_digits(value.substr(dash + 1, slash - dash - 1));
  if (!first || !last || *last < *first) return std::nullopt;
  ContentRange range{*first, *last, std::nullopt};
  auto total_text = value.substr(slash + 1);
  if (total_text != "*") {
    range.total = parse_digits(total_text);
    if (!range.total || *range.total <= *last) return std::nullopt;
  }
  return range;
}

}  // namespace zarrdirect

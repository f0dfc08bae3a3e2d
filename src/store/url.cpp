#include "store/url.hpp"

#include <cctype>

#include <fmt/format.h>

#include "util/quote.hpp"
#include "zarrdirect/error.hpp"

namespace zarrdirect {
namespace {

bool is_scheme_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '+' || c == '-' || c == '.';
}

bool is_unreserved(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '.' || c == '_' || c == '~';
}

}  // namespace

std::optional<std::string> url_scheme(std::string_view text) {
  const auto colon = text.find("://");
  if (colon == std::string_view::npos || colon == 0) return std::nullopt;
  if (std::isalpha(static_cast<unsigned char>(text[0])) == 0) return std::nullopt;
  std::string scheme;
  for (char c : text.substr(0, colon)) {
    if (!is_scheme_char(c)) return std::nullopt;
    scheme += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return scheme;
}

std::string normalize_base_url(std::string_view base) {
  const auto scheme = url_scheme(base);
  if (!scheme)
    throw Error(ErrorKind::invalid_argument, fmt::format("{}: not a URL", quote(url_for_messages(base), 200)));
  if (*scheme != "http" && *scheme != "https")
    throw Error(ErrorKind::unsupported,
                fmt::format("{}: URL scheme \"{}\" is not supported (zarrdirect reads local folders and http(s) URLs)",
                            quote(url_for_messages(base), 200), printable(*scheme)));
  std::string url(base.substr(0, base.find_first_of("?#")));
  const std::size_t host_start = scheme->size() + 3;
  const std::size_t host_end = std::min(url.find('/', host_start), url.size());
  if (host_end == host_start)
    throw Error(ErrorKind::invalid_argument, fmt::format("{}: the URL names no host", quote(url_for_messages(base), 200)));
  // Credentials in the URL would travel into every message naming a chunk: refused, unshown.
  if (url.substr(host_start, host_end - host_start).find('@') != std::string::npos)
    throw Error(ErrorKind::invalid_argument,
                fmt::format("{}: user name or password in the URL: pass credentials in ZARRDIRECT_HTTP_HEADERS "
                            "(Authorization: ...) or ZARRDIRECT_HTTP_BEARER_TOKEN instead",
                            quote(url_for_messages(base), 200)));
  for (char c : url)
    if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7f)
      throw Error(ErrorKind::invalid_argument,
                  fmt::format("{}: the URL holds a space or control character", quote(url_for_messages(base), 200)));
  while (url.size() > host_end && url.back() == '/') url.pop_back();
  return url;
}

std::string percent_encode_key(std::string_view key) {
  std::string out;
  out.reserve(key.size());
  for (char c : key) {
    if (is_unreserved(c) || c == '/') out += c;
    else out += fmt::format("%{:02X}", static_cast<unsigned char>(c));
  }
  return out;
}

std::string join_url(std::string_view base, std::string_view key) {
  std::string url(base);
  while (!url.empty() && url.back() == '/') url.pop_back();
  if (key.empty()) return url;
  url += '/';
  url += percent_encode_key(key);
  return url;
}

std::string url_for_messages(std::string_view url) {
  const auto separator = url.find("://");
  if (separator == std::string_view::npos) return std::string(url);
  const std::size_t host_start = separator + 3;
  const std::size_t authority_end = std::min(url.find_first_of("/?#", host_start), url.size());
  const auto at = url.substr(host_start, authority_end - host_start).rfind('@');
  if (at == std::string_view::npos) return std::string(url);
  return std::string(url.substr(0, host_start)) + std::string(url.substr(host_start + at + 1));
}

}  // namespace zarrdirect

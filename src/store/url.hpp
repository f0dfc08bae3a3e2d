// URL text handling for the HTTP store: schemes, joining keys, percent-encoding, and the form of
// a URL that may appear in messages (without credentials).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace zarrdirect {

// The scheme of `text` in lower case ("http", "s3") when it starts with "<scheme>://", where the
// scheme is a letter followed by letters, digits, '+', '-' or '.'; nullopt otherwise.
std::optional<std::string> url_scheme(std::string_view text);

// `base` without a query or fragment and without trailing slashes, checked to be an http(s) URL
// with a host and without "user:password@". Throws Error(invalid_argument) naming the URL
// (without credentials) otherwise (Error(unsupported) naming
// the scheme for another scheme).
std::string normalize_base_url(std::string_view base);

// `key` with every byte outside RFC 3986's unreserved set and '/' percent-encoded.
std::string percent_encode_key(std::string_view key);

// base + "/" + the encoded key. `key` must already be a checked store key.
std::string join_url(std::string_view base, std::string_view key);

// The URL with any "user:password@" removed, for messages and logs.
std::string url_for_messages(std::string_view url);

}  // namespace zarrdirect

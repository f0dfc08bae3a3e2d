// How the HTTP store talks to servers, from ZARRDIRECT_HTTP_* environment variables (read when a
// store is opened, so a process can change them between opens).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "zarrdirect/store_options.hpp"

namespace zarrdirect {

struct HttpOptions {
  unsigned concurrency = 32;           // ZARRDIRECT_HTTP_CONCURRENCY: requests in flight per read
  unsigned retries = 4;                // ZARRDIRECT_HTTP_RETRIES: extra attempts after a 5xx, reset or timeout
  unsigned retry_delay_ms = 100;       // ZARRDIRECT_HTTP_RETRY_DELAY_MS: first backoff, doubled each time
  unsigned connect_timeout_s = 10;     // ZARRDIRECT_HTTP_CONNECT_TIMEOUT_S
  unsigned low_speed_time_s = 30;      // ZARRDIRECT_HTTP_LOW_SPEED_TIME_S: a transfer under 1 byte/s this long is cut
  unsigned max_redirects = 8;          // ZARRDIRECT_HTTP_MAX_REDIRECTS
  // ZARRDIRECT_HTTP_MERGE_GAP_BYTES: ranges of one shard at most this far apart share one
  // request (as zarr-python merges across gaps up to 1 MiB); 0 merges only touching ranges.
  unsigned merge_gap_bytes = 1u << 20;
  std::string bearer_token;            // ZARRDIRECT_HTTP_BEARER_TOKEN: sent, never logged
  std::vector<std::string> headers;    // ZARRDIRECT_HTTP_HEADERS: "Name: value" lines, sent, never logged

  static HttpOptions from_environment();
  // The environment's options with those `explicit_options` sets in their place (checked as the
  // variables are; errors name the StoreOptions field, never a header's or token's text). A
  // bearer token and an Authorization header take each other's place too; both given in one
  // place, or two headers of one name, are Error(invalid_argument).
  static HttpOptions resolve(const StoreOptions& explicit_options);
};

// Extra headers from text of "Name: value" lines (newline-separated; empty lines skipped).
// Throws Error(invalid_argument) for a line without a name and colon or holding control bytes,
// a name given twice (names compare without case), or a header the client sets itself for each
// request (Range, Content-Length, Transfer-Encoding); the message names the variable and the line
// number, never the value.
std::vector<std::string> parse_header_lines(std::string_view text, std::string_view variable);

}  // namespace zarrdirect

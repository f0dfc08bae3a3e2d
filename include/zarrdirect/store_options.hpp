// How a store is reached, beyond its path or URL: given to Array::open, Group::open and
// Multiscale::open (and kept by a group for the arrays and groups opened through it).
//
// Only HTTP(S) stores use these fields today; a folder ignores them. Each field set here takes
// the place of its ZARRDIRECT_HTTP_* environment variable for this store; fields left empty or 0
// fall back to the environment, then to the defaults.
#pragma once

#include <string>
#include <vector>

namespace zarrdirect {

struct StoreOptions {
  // Extra request headers, "Name: value" each, sent with every request after those of
  // ZARRDIRECT_HTTP_HEADERS (a header named here replaces one of the same name from there).
  // Never shown in messages or errors. A line without a valid name and colon, or with control
  // characters, is Error(invalid_argument) naming its position, not its text.
  std::vector<std::string> http_headers;
  // Sent as "Authorization: Bearer <token>" (replaces ZARRDIRECT_HTTP_BEARER_TOKEN). Never shown.
  // A token with spaces or control characters is Error(invalid_argument).
  std::string http_bearer_token;
  // Requests in flight per read (ZARRDIRECT_HTTP_CONCURRENCY, default 32); 0: from there. At most 1024.
  unsigned http_concurrency = 0;
  // Extra attempts after a 5xx, a reset or a timeout (ZARRDIRECT_HTTP_RETRIES, default 4);
  // negative: from there. At most 100.
  int http_retries = -1;

  bool operator==(const StoreOptions&) const = default;
};

}  // namespace zarrdirect

// Blocking HTTP(S) requests on libcurl, checked and retried, for the HTTP store.
//
// Every request runs on a fresh easy handle attached to one process-wide share handle, so the
// connection cache (keep-alive connections), DNS cache and TLS sessions are reused across requests,
// threads, stores and reads. Safe to call from many threads at once.
//
// Responses are written straight into the caller's buffer, and checked, not trusted: a 206 must
// cover exactly the range asked for; a 200 to a range request (a server that ignores Range) is
// streamed and only the asked slice kept, refused past kIgnoredRangeLimit bytes; a body longer
// than the buffer, or shorter than its Content-Length or the range, is an error (a short one is
// retried). 5xx, 408, 429, resets and timeouts are retried with exponential backoff
// (HttpOptions::retries, retry_delay_ms), then fail naming the URL and the last status. Messages
// name the URL without credentials and never the token or extra headers.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "store/http_options.hpp"
#include "store/store.hpp"

namespace zarrdirect {

class HttpClient {
 public:
  // The most bytes read from a server that ignores Range to keep one slice of the object.
  static constexpr std::uint64_t kIgnoredRangeLimit = std::uint64_t{256} << 20;

  explicit HttpClient(HttpOptions options);

  const HttpOptions& options() const { return options_; }

  // HEAD: the size of the object at `url`; nullopt on 404/410. Error(io) for refusals, other
  // errors and a response without a length.
  std::optional<std::uint64_t> size_of(const std::string& url) const;

  // GET of the whole object into destination(size) (at most `max_size` bytes, else
  // Error(corrupt_data)); returns its size, nullopt on 404/410.
  std::optional<std::uint64_t> get(const std::string& url, const DestinationFor& destination,
                                   std::uint64_t max_size) const;

  // GET of bytes [offset, offset + buffer.size()) into `buffer`; false on 404/410. An object that
  // ends before the range is Error(corrupt_data).
  bool get_range(const std::string& url, std::uint64_t offset, std::span<std::byte> buffer) const;

 private:
  struct Request;
  std::optional<std::uint64_t> perform(Request& request) const;

  HttpOptions options_;
};

}  // namespace zarrdirect

// HTTP(S) requests on libcurl, checked and retried, for the HTTP store: single requests, and
// batches that run at once on the calling thread (http_multi.hpp).
//
// Every request runs on an easy handle of the process-wide handle pool (http_handle_pool.hpp), so
// keep-alive connections, DNS answers and TLS sessions are reused across requests, stores and
// reads. Safe to call from many threads at once (each call borrows its own handles).
//
// Responses are written straight into the caller's buffers and checked, not trusted
// (http_transfer.hpp). 5xx, 408, 429, resets, timeouts and short bodies are retried with
// exponential backoff (HttpOptions::retries, retry_delay_ms), then fail naming the URL and the
// last status. Messages name the URL without credentials and never the token or extra headers.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "store/http_options.hpp"
#include "store/http_transfer.hpp"
#include "store/store.hpp"

struct curl_slist;

namespace zarrdirect {

class HttpClient {
 public:
  // The most bytes read from a server that ignores Range to keep one slice of the object.
  static constexpr std::uint64_t kIgnoredRangeLimit = HttpTransfer::kIgnoredRangeLimit;

  explicit HttpClient(HttpOptions options);
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

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

  // Runs `transfers` at once, at most `in_flight` at a time (0: options().concurrency), on the
  // calling thread. Each ends done, missing or failed; after the first failure the others may be
  // left waiting (http_multi.hpp). `on_finished`, when given, is called as each ends done or
  // missing. Throws only when libcurl itself fails, or what `on_finished` throws.
  void run(std::span<HttpTransfer* const> transfers, unsigned in_flight = 0,
           const std::function<void(HttpTransfer&)>* on_finished = nullptr) const;

 private:
  // One transfer, alone: its error rethrown; false when missing.
  bool run_one(HttpTransfer& transfer) const;

  HttpOptions options_;
  struct HeaderList;
  std::unique_ptr<HeaderList> headers_;  // token and extra headers, built once
};

}  // namespace zarrdirect

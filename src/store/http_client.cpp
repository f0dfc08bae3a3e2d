#include "store/http_client.hpp"

#include <curl/curl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "store/http_response.hpp"
#include "store/url.hpp"
#include "util/quote.hpp"
#include "zarrdirect/error.hpp"

namespace zarrdirect {
namespace {

// The process-wide share handle: DNS answers and TLS sessions reused by every request.
// Connections are not shared through it: libcurl documents its shared connection cache as unsafe
// between concurrent threads (it crashed here under parallel retries), so each thread keeps its
// own easy handle, whose connections stay alive from one request to the next (thread_easy_handle).
class SharedConnections {
 public:
  static SharedConnections& instance() {
    static SharedConnections shared;
    return shared;
  }
  CURLSH* handle() const { return share_; }

 private:
  SharedConnections() {
    curl_global_init(CURL_GLOBAL_DEFAULT);
    share_ = curl_share_init();
    if (!share_) throw Error(ErrorKind::io, "libcurl: cannot create a share handle");
    curl_share_setopt(share_, CURLSHOPT_LOCKFUNC, &SharedConnections::lock);
    curl_share_setopt(share_, CURLSHOPT_UNLOCKFUNC, &SharedConnections::unlock);
    curl_share_setopt(share_, CURLSHOPT_USERDATA, this);
    curl_share_setopt(share_, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
    curl_share_setopt(share_, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
  }
  // Never destroyed: requests may still run on other threads while statics are torn down.
  ~SharedConnections() = default;

  static void lock(CURL*, curl_lock_data data, curl_lock_access, void* self) {
    static_cast<SharedConnections*>(self)->mutexes_[index(data)].lock();
  }
  static void unlock(CURL*, curl_lock_data data, void* self) {
    static_cast<SharedConnections*>(self)->mutexes_[index(data)].unlock();
  }
  static std::size_t index(curl_lock_data data) {
    return std::min<std::size_t>(static_cast<std::size_t>(data), kLocks - 1);
  }

  static constexpr std::size_t kLocks = CURL_LOCK_DATA_LAST + 1;
  CURLSH* share_ = nullptr;
  std::array<std::mutex, kLocks> mutexes_;
};

struct EasyDeleter {
  void operator()(CURL* easy) const { curl_easy_cleanup(easy); }
};
// The calling thread's easy handle, reset for each request (curl_easy_reset keeps the handle's
// live connections, so keep-alive works across requests and reads on the kept reader threads).
// A forked child does not use its parent's handle: the sockets would be shared with the parent.
CURL* thread_easy_handle() {
  thread_local std::unique_ptr<CURL, EasyDeleter> easy;
  thread_local pid_t owner = 0;
  if (easy && owner != ::getpid()) (void)easy.release();  // the parent's connections: left alone
  if (!easy) {
    easy.reset(curl_easy_init());
    owner = ::getpid();
  } else {
    curl_easy_reset(easy.get());
  }
  return easy.get();
}

struct ListDeleter {
  void operator()(curl_slist* list) const { curl_slist_free_all(list); }
};

constexpr long kReceiveBufferBytes = 512L << 10;

// libcurl failures worth another attempt: the connection broke, stalled or was refused.
bool transient(CURLcode code) {
  switch (code) {
    case CURLE_COULDNT_CONNECT:
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
    case CURLE_COULDNT_RESOLVE_HOST:
      return true;
    default:
      return false;
  }
}

}  // namespace

struct HttpClient::Request {
  std::string url;
  std::string shown;  // the URL for messages
  bool head = false;
  // A range request when set: bytes [offset, offset + range.size()) into `range`.
  std::optional<std::uint64_t> offset;
  std::span<std::byte> range;
  // A whole-object GET otherwise.
  const DestinationFor* destination = nullptr;
  std::uint64_t max_size = 0;

  // The response of the current attempt.
  long status = 0;
  std::optional<std::uint64_t> content_length;
  std::optional<ContentRange> content_range;
  bool body_started = false;
  std::span<std::byte> target;       // where body bytes go
  std::uint64_t expected = 0;        // bytes the body must deliver into target
  std::uint64_t written = 0;
  std::uint64_t skip = 0;            // a full body for a range request: bytes before the range
  bool spilling = false;             // a whole GET without Content-Length: collected here first
  std::vector<std::byte> spill;
  bool complete_early = false;       // everything needed arrived; the rest was cut off on purpose
  std::exception_ptr error;          // a check that failed inside a callback

  void reset_response() {
    status = 0;
    content_length.reset();
    content_range.reset();
    body_started = false;
    target = {};
    expected = written = skip = 0;
    spilling = false;
    spill.clear();
    complete_early = false;
    error = nullptr;
  }

  [[noreturn]] void fail(ErrorKind kind, std::string_view what) const {
    throw Error(kind, fmt::format("{}: {}", shown, what));
  }

  // The first body bytes of a 2xx response: decide where the body goes.
  void start_body() {
    body_started = true;
    if (offset) {
      const std::uint64_t wanted = range.size();
      if (status == 206) {
        if (!content_range)
          fail(ErrorKind::io, "the server answered a range request with 206 but no valid Content-Range");
        if (content_range->first != *offset)
          fail(ErrorKind::io, fmt::format("asked for bytes from {}, the server sent bytes from {}", *offset,
                                          content_range->first));
        const std::uint64_t sent = content_range->last - content_range->first + 1;
        if (sent < wanted)
          fail(ErrorKind::corrupt_data, fmt::format("expected {} bytes at offset {}, the object ends after {}", wanted,
                                                    *offset, *offset + sent));
        target = range;
        expected = wanted;
        return;
      }
      // 200: the server ignored Range and sends the whole object; keep the slice asked for.
      if (content_length && *content_length < *offset + wanted)
        fail(ErrorKind::corrupt_data, fmt::format("expected {} bytes at offset {}, the object ends after {}", wanted,
                                                  *offset, *content_length));
      if (*offset + wanted > kIgnoredRangeLimit)
        fail(ErrorKind::io, fmt::format("the server ignores Range requests (answered 200 with the whole object), and "
                                        "bytes up to {} are past the {} bytes zarrdirect reads to skip to them",
                                        *offset + wanted, kIgnoredRangeLimit));
      skip = *offset;
      target = range;
      expected = wanted;
      return;
    }
    if (content_length) {
      if (*content_length > max_size)
        fail(ErrorKind::corrupt_data,
             fmt::format("the object is {} bytes, more than the {} it may hold", *content_length, max_size));
      target = (*destination)(*content_length);
      if (target.size() < *content_length) fail(ErrorKind::io, "internal: destination smaller than the object");
      target = target.first(static_cast<std::size_t>(*content_length));
      expected = *content_length;
      return;
    }
    spilling = true;
  }

  // Body bytes; returns false to cut the transfer (done, or an error recorded).
  bool take(const char* data, std::size_t size) {
    if (!body_started) start_body();
    if (spilling) {
      if (spill.size() + size > max_size)
        fail(ErrorKind::corrupt_data, fmt::format("the object is more than the {} bytes it may hold", max_size));
      spill.insert(spill.end(), reinterpret_cast<const std::byte*>(data), reinterpret_cast<const std::byte*>(data) + size);
      return true;
    }
    if (skip) {
      const std::size_t skipped = static_cast<std::size_t>(std::min<std::uint64_t>(skip, size));
      skip -= skipped;
      data += skipped;
      size -= skipped;
      if (size == 0) return true;
    }
    if (offset && status == 200) {
      // Past the slice there is nothing more to keep: cut the transfer once it is complete.
      const std::size_t kept = static_cast<std::size_t>(std::min<std::uint64_t>(size, expected - written));
      std::memcpy(target.data() + written, data, kept);
      written += kept;
      if (written == expected) {
        complete_early = true;
        return false;
      }
      return true;
    }
    if (written + size > expected)
      fail(ErrorKind::corrupt_data,
           fmt::format("the response is longer than the {} bytes asked for{}", expected,
                       offset ? "" : " (its Content-Length)"));
    std::memcpy(target.data() + written, data, size);
    written += size;
    return true;
  }

  static std::size_t on_header(char* data, std::size_t size, std::size_t count, void* self) {
    auto& request = *static_cast<Request*>(self);
    const std::string_view line(data, size * count);
    if (auto status = parse_status_line(line)) {
      // A new response (after a redirect or a 100 Continue): forget the previous one's headers.
      request.status = *status;
      request.content_length.reset();
      request.content_range.reset();
    } else if (auto length = header_value(line, "Content-Length")) {
      request.content_length = parse_content_length(*length);
    } else if (auto range = header_value(line, "Content-Range")) {
      request.content_range = parse_content_range(*range);
    }
    return size * count;
  }

  static std::size_t on_body(char* data, std::size_t size, std::size_t count, void* self) {
    auto& request = *static_cast<Request*>(self);
    const std::size_t bytes = size * count;
    // Bodies of errors and redirects are not kept.
    if (request.status < 200 || request.status >= 300) return bytes;
    try {
      return request.take(data, bytes) ? bytes : 0;
    } catch (...) {
      request.error = std::current_exception();
      return 0;
    }
  }
};

HttpClient::HttpClient(HttpOptions options) : options_(std::move(options)) {
  SharedConnections::instance();
}

std::optional<std::uint64_t> HttpClient::perform(Request& request) const {
  CURL* handle = thread_easy_handle();
  if (!handle) request.fail(ErrorKind::io, "libcurl: cannot create a request");
  std::unique_ptr<curl_slist, ListDeleter> headers;
  auto add_header = [&](const std::string& line) {
    curl_slist* grown = curl_slist_append(headers.get(), line.c_str());
    if (!grown) request.fail(ErrorKind::io, "libcurl: out of memory");
    (void)headers.release();
    headers.reset(grown);
  };
  for (const auto& line : options_.headers) add_header(line);
  // A custom Authorization header is not sent on to another host after a redirect (libcurl).
  if (!options_.bearer_token.empty()) add_header("Authorization: Bearer " + options_.bearer_token);
  std::string range_text;
  if (request.offset) {
    range_text = fmt::format("{}-{}", *request.offset, *request.offset + request.range.size() - 1);
  }

  curl_easy_setopt(handle, CURLOPT_SHARE, SharedConnections::instance().handle());
  curl_easy_setopt(handle, CURLOPT_URL, request.url.c_str());
  curl_easy_setopt(handle, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(handle, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(handle, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(handle, CURLOPT_FOLLOWLOCATION, 1L);
  curl_easy_setopt(handle, CURLOPT_MAXREDIRS, static_cast<long>(options_.max_redirects));
  curl_easy_setopt(handle, CURLOPT_CONNECTTIMEOUT, static_cast<long>(options_.connect_timeout_s));
  curl_easy_setopt(handle, CURLOPT_LOW_SPEED_LIMIT, 1L);
  curl_easy_setopt(handle, CURLOPT_LOW_SPEED_TIME, static_cast<long>(options_.low_speed_time_s));
  curl_easy_setopt(handle, CURLOPT_USERAGENT, "zarrdirect");
  // Fewer, larger writes into the destination (the default is 16 KiB per callback).
  curl_easy_setopt(handle, CURLOPT_BUFFERSIZE, kReceiveBufferBytes);
  curl_easy_setopt(handle, CURLOPT_HEADERFUNCTION, &Request::on_header);
  curl_easy_setopt(handle, CURLOPT_HEADERDATA, &request);
  curl_easy_setopt(handle, CURLOPT_WRITEFUNCTION, &Request::on_body);
  curl_easy_setopt(handle, CURLOPT_WRITEDATA, &request);
  if (headers) curl_easy_setopt(handle, CURLOPT_HTTPHEADER, headers.get());
  if (request.head) curl_easy_setopt(handle, CURLOPT_NOBODY, 1L);
  if (request.offset) curl_easy_setopt(handle, CURLOPT_RANGE, range_text.c_str());

  std::string last_failure;
  const unsigned attempts = options_.retries + 1;
  for (unsigned attempt = 0; attempt < attempts; ++attempt) {
    if (attempt > 0) {
      const unsigned shift = std::min(attempt - 1, 16u);
      std::this_thread::sleep_for(std::chrono::milliseconds(std::uint64_t{options_.retry_delay_ms} << shift));
    }
    request.reset_response();
    const CURLcode code = curl_easy_perform(handle);
    if (request.error) std::rethrow_exception(request.error);
    if (code != CURLE_OK && !(code == CURLE_WRITE_ERROR && request.complete_early)) {
      if (code == CURLE_TOO_MANY_REDIRECTS)
        request.fail(ErrorKind::io, fmt::format("more than {} redirects (ZARRDIRECT_HTTP_MAX_REDIRECTS)",
                                                options_.max_redirects));
      last_failure = curl_easy_strerror(code);
      if (code == CURLE_OPERATION_TIMEDOUT)
        last_failure += fmt::format(" (no progress for {} s or no connection within {} s)", options_.low_speed_time_s,
                                    options_.connect_timeout_s);
      if (transient(code)) continue;
      request.fail(ErrorKind::io, last_failure);
    }
    long status = 0;
    curl_easy_getinfo(handle, CURLINFO_RESPONSE_CODE, &status);
    switch (classify_status(status)) {
      case HttpOutcome::missing:
        return std::nullopt;
      case HttpOutcome::refused:
        request.fail(ErrorKind::io, fmt::format("access refused (HTTP {}): check ZARRDIRECT_HTTP_BEARER_TOKEN or "
                                                "ZARRDIRECT_HTTP_HEADERS",
                                                status));
      case HttpOutcome::client_error:
        request.fail(ErrorKind::io, fmt::format("the server refused the request (HTTP {})", status));
      case HttpOutcome::retry:
        last_failure = fmt::format("HTTP {}", status);
        continue;
      case HttpOutcome::ok:
        break;
    }
    if (request.head) {
      if (!request.content_length) request.fail(ErrorKind::io, "the server states no Content-Length for HEAD");
      return request.content_length;
    }
    if (!request.body_started) request.start_body();  // an empty body
    if (request.spilling) {
      std::span<std::byte> target = (*request.destination)(request.spill.size());
      if (target.size() < request.spill.size()) request.fail(ErrorKind::io, "internal: destination too small");
      std::copy(request.spill.begin(), request.spill.end(), target.begin());
      return request.spill.size();
    }
    if (request.written != request.expected) {
      // Cut short (a Content-Length larger than the body sent, or a range not delivered): retried.
      last_failure = fmt::format("the response ended after {} of {} bytes", request.written, request.expected);
      continue;
    }
    return request.written;
  }
  request.fail(ErrorKind::io, fmt::format("failed after {} attempt{} (ZARRDIRECT_HTTP_RETRIES={}): {}", attempts,
                                          attempts == 1 ? "" : "s", options_.retries, last_failure));
}

std::optional<std::uint64_t> HttpClient::size_of(const std::string& url) const {
  Request request;
  request.url = url;
  request.shown = printable(url_for_messages(url));
  request.head = true;
  return perform(request);
}

std::optional<std::uint64_t> HttpClient::get(const std::string& url, const DestinationFor& destination,
                                             std::uint64_t max_size) const {
  Request request;
  request.url = url;
  request.shown = printable(url_for_messages(url));
  request.destination = &destination;
  request.max_size = max_size;
  return perform(request);
}

bool HttpClient::get_range(const std::string& url, std::uint64_t offset, std::span<std::byte> buffer) const {
  if (buffer.empty()) return true;
  Request request;
  request.url = url;
  request.shown = printable(url_for_messages(url));
  request.offset = offset;
  request.range = buffer;
  return perform(request).has_value();
}

}  // namespace zarrdirect

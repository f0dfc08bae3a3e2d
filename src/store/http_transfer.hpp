// One HTTP request of the HTTP store and the checks on its response, apart from any network code:
// the transfer driver (http_multi.hpp) feeds it libcurl's header lines and body bytes and asks it,
// when an attempt ends, whether the request is done, missing, worth another attempt or failed.
//
// Three kinds of request:
//   head    HEAD: the object's size from Content-Length
//   whole   GET of the whole object into destination(size), called once the size is known
//   pieces  one byte-range GET covering several pieces of one object (sorted, not overlapping);
//           the body is split back into the pieces' own buffers as it arrives, the bytes between
//           pieces dropped, so nothing is copied twice
//
// Responses are checked, not trusted: a 206 must start at the first piece and cover the last; a
// 200 to a range request (a server that ignores Range) is streamed and only the pieces kept,
// refused past kIgnoredRangeLimit bytes, and cut once the last piece arrived; a body longer than
// asked for is an error; one shorter than its Content-Length or the range is worth another
// attempt. Messages name the URL without credentials, never a token or header.
#pragma once

#include <cstdint>
#include <exception>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "store/http_response.hpp"
#include "store/store.hpp"
#include "zarrdirect/error.hpp"

namespace zarrdirect {

// A part of a range request: bytes [offset, offset + buffer.size()) of the object into `buffer`.
struct HttpPiece {
  std::uint64_t offset = 0;
  std::span<std::byte> buffer;
};

class HttpTransfer {
 public:
  // The most bytes read from a server that ignores Range to keep pieces of the object.
  static constexpr std::uint64_t kIgnoredRangeLimit = std::uint64_t{256} << 20;

  enum class State {
    waiting,  // not started, or waiting for its next attempt
    done,     // succeeded: size() holds the object's size (head, whole) or the bytes kept (pieces)
    missing,  // 404 or 410
    failed,   // error() holds why
  };

  // What the driver does after an attempt.
  enum class Next { finished, retry };

  static HttpTransfer head(std::string url);
  // `destination` must outlive the transfer; at most `max_size` bytes (else Error corrupt_data).
  static HttpTransfer whole(std::string url, const DestinationFor& destination, std::uint64_t max_size);
  // `pieces`: sorted by offset, not overlapping, none empty, and at least one.
  static HttpTransfer pieces(std::string url, std::vector<HttpPiece> pieces);

  const std::string& url() const { return url_; }
  // The URL for messages (no user or password).
  const std::string& shown() const { return shown_; }
  bool is_head() const { return head_; }
  // "first-last" for the Range header of a pieces request, empty otherwise.
  const std::string& range_text() const { return range_text_; }

  State state() const { return state_; }
  std::uint64_t size() const { return size_; }
  std::exception_ptr error() const { return error_; }
  unsigned attempts() const { return attempts_; }
  const std::string& last_failure() const { return last_failure_; }

  // libcurl's callbacks, for the driver: a header line; body bytes (returns false to cut the
  // transfer: everything needed arrived, or an error was recorded).
  void on_header_line(std::string_view line);
  bool on_body(const char* data, std::size_t size);

  // Before each attempt.
  void begin_attempt();
  // After an attempt ended with libcurl's `code` (CURLcode as int: this file has no libcurl) and
  // HTTP `status`, its text `curl_message`. Records the outcome (done, missing, failed), or a
  // failure worth another attempt (Next::retry) while `attempts_left` allows; otherwise fails
  // naming the URL, the attempts made and the last failure.
  Next finish_attempt(int code, long status, std::string_view curl_message, unsigned retries,
                      unsigned max_redirects, unsigned connect_timeout_s, unsigned low_speed_time_s);
  // Marks the transfer failed with `error` (the driver stopped it).
  void fail_with(std::exception_ptr error);

  // The bytes of pieces the body delivered (for tests).
  std::uint64_t written() const { return written_; }

 private:
  HttpTransfer() = default;
  [[noreturn]] void fail(ErrorKind kind, std::string_view what) const;
  void start_body();
  bool take(const char* data, std::size_t size);
  void deliver(const char* data, std::size_t size);

  std::string url_;
  std::string shown_;
  bool head_ = false;
  std::vector<HttpPiece> pieces_;  // a range request when not empty
  std::uint64_t first_ = 0;        // the range: [first_, end_)
  std::uint64_t end_ = 0;
  std::string range_text_;
  const DestinationFor* destination_ = nullptr;
  std::uint64_t max_size_ = 0;

  State state_ = State::waiting;
  std::uint64_t size_ = 0;
  std::exception_ptr error_;
  unsigned attempts_ = 0;
  std::string last_failure_;

  // The response of the current attempt.
  long status_ = 0;
  std::optional<std::uint64_t> content_length_;
  std::optional<ContentRange> content_range_;
  bool body_started_ = false;
  std::span<std::byte> target_;  // a whole GET: where the body goes
  std::uint64_t position_ = 0;   // object offset of the next body byte (range requests)
  std::size_t piece_ = 0;        // the first piece not yet complete
  std::uint64_t expected_ = 0;   // bytes of pieces (or the whole object) the body must deliver
  std::uint64_t written_ = 0;
  bool spilling_ = false;        // a whole GET without Content-Length: collected here first
  std::vector<std::byte> spill_;
  bool complete_early_ = false;  // everything needed arrived; the rest was cut off on purpose
  std::exception_ptr attempt_error_;  // a check that failed inside a callback
};

}  // namespace zarrdirect

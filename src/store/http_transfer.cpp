#include "store/http_transfer.hpp"

#include <curl/curl.h>

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "store/url.hpp"
#include "util/quote.hpp"
#include "zarrdirect/error.hpp"

namespace zarrdirect {
namespace {

// libcurl failures worth another attempt: the connection broke, stalled or was refused.
bool transient(int code) {
  switch (static_cast<CURLcode>(code)) {
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

HttpTransfer HttpTransfer::head(std::string url) {
  HttpTransfer transfer;
  transfer.shown_ = printable(url_for_messages(url));
  transfer.url_ = std::move(url);
  transfer.head_ = true;
  return transfer;
}

HttpTransfer HttpTransfer::whole(std::string url, const DestinationFor& destination, std::uint64_t max_size) {
  HttpTransfer transfer;
  transfer.shown_ = printable(url_for_messages(url));
  transfer.url_ = std::move(url);
  transfer.destination_ = &destination;
  transfer.max_size_ = max_size;
  return transfer;
}

HttpTransfer HttpTransfer::pieces(std::string url, std::vector<HttpPiece> pieces) {
  HttpTransfer transfer;
  transfer.shown_ = printable(url_for_messages(url));
  transfer.url_ = std::move(url);
  if (pieces.empty()) throw Error(ErrorKind::invalid_argument, fmt::format("{}: internal: no pieces", transfer.shown_));
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    const bool ordered = i == 0 || pieces[i].offset >= pieces[i - 1].offset + pieces[i - 1].buffer.size();
    if (pieces[i].buffer.empty() || !ordered)
      throw Error(ErrorKind::invalid_argument,
                  fmt::format("{}: internal: range pieces empty, unsorted or overlapping", transfer.shown_));
  }
  transfer.first_ = pieces.front().offset;
  transfer.end_ = pieces.back().offset + pieces.back().buffer.size();
  transfer.range_text_ = fmt::format("{}-{}", transfer.first_, transfer.end_ - 1);
  transfer.pieces_ = std::move(pieces);
  return transfer;
}

void HttpTransfer::fail(ErrorKind kind, std::string_view what) const {
  throw Error(kind, fmt::format("{}: {}", shown_, what));
}

void HttpTransfer::begin_attempt() {
  ++attempts_;
  status_ = 0;
  content_length_.reset();
  content_range_.reset();
  body_started_ = false;
  target_ = {};
  position_ = 0;
  piece_ = 0;
  expected_ = written_ = 0;
  spilling_ = false;
  spill_.clear();
  complete_early_ = false;
  attempt_error_ = nullptr;
}

void HttpTransfer::on_header_line(std::string_view line) {
  if (auto status = parse_status_line(line)) {
    // A new response (after a redirect or a 100 Continue): forget the previous one's headers.
    status_ = *status;
    content_length_.reset();
    content_range_.reset();
  } else if (auto length = header_value(line, "Content-Length")) {
    content_length_ = parse_content_length(*length);
  } else if (auto range = header_value(line, "Content-Range")) {
    content_range_ = parse_content_range(*range);
  }
}

// The first body bytes of a 2xx response (or its end, for an empty one): decide where the body goes.
void HttpTransfer::start_body() {
  body_started_ = true;
  if (!pieces_.empty()) {
    expected_ = 0;
    for (const HttpPiece& piece : pieces_) expected_ += piece.buffer.size();
    const std::uint64_t span = end_ - first_;
    if (status_ == 206) {
      if (!content_range_) fail(ErrorKind::io, "the server answered a range request with 206 but no valid Content-Range");
      if (content_range_->first != first_)
        fail(ErrorKind::io,
             fmt::format("asked for bytes from {}, the server sent bytes from {}", first_, content_range_->first));
      const std::uint64_t sent = content_range_->last - content_range_->first + 1;
      if (sent < span)
        fail(ErrorKind::corrupt_data,
             fmt::format("expected {} bytes at offset {}, the object ends after {}", span, first_, first_ + sent));
      position_ = first_;
      return;
    }
    // 200: the server ignored Range and sends the whole object; keep the pieces asked for.
    if (content_length_ && *content_length_ < end_)
      fail(ErrorKind::corrupt_data,
           fmt::format("expected {} bytes at offset {}, the object ends after {}", span, first_, *content_length_));
    if (end_ > kIgnoredRangeLimit)
      fail(ErrorKind::io, fmt::format("the server ignores Range requests (answered 200 with the whole object), and "
                                      "bytes up to {} are past the {} bytes zarrdirect reads to skip to them",
                                      end_, kIgnoredRangeLimit));
    position_ = 0;
    return;
  }
  if (content_length_) {
    if (*content_length_ > max_size_)
      fail(ErrorKind::corrupt_data,
           fmt::format("the object is {} bytes, more than the {} it may hold", *content_length_, max_size_));
    target_ = (*destination_)(*content_length_);
    if (target_.size() < *content_length_) fail(ErrorKind::io, "internal: destination smaller than the object");
    target_ = target_.first(static_cast<std::size_t>(*content_length_));
    expected_ = *content_length_;
    return;
  }
  spilling_ = true;
}

// Body bytes of a range request at object offset position_: into the pieces they belong to,
// the bytes between pieces dropped.
void HttpTransfer::deliver(const char* data, std::size_t size) {
  while (size > 0 && piece_ < pieces_.size()) {
    const HttpPiece& piece = pieces_[piece_];
    if (position_ < piece.offset) {
      const std::size_t gap = static_cast<std::size_t>(std::min<std::uint64_t>(piece.offset - position_, size));
      position_ += gap;
      data += gap;
      size -= gap;
      continue;
    }
    const std::uint64_t into = position_ - piece.offset;
    const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(piece.buffer.size() - into, size));
    std::memcpy(piece.buffer.data() + into, data, n);
    position_ += n;
    written_ += n;
    data += n;
    size -= n;
    if (into + n == piece.buffer.size()) ++piece_;
  }
  if (size > 0) {
    // Past the last piece: a 200 (the whole object) is cut here on purpose; a 206 sent more
    // than asked for.
    if (status_ == 200) {
      complete_early_ = true;
      return;
    }
    fail(ErrorKind::corrupt_data, fmt::format("the response is longer than the {} bytes asked for", end_ - first_));
  }
  if (status_ == 200 && piece_ == pieces_.size()) complete_early_ = true;
}

bool HttpTransfer::take(const char* data, std::size_t size) {
  if (!body_started_) start_body();
  if (!pieces_.empty()) {
    deliver(data, size);
    return !complete_early_;
  }
  if (spilling_) {
    if (spill_.size() + size > max_size_)
      fail(ErrorKind::corrupt_data, fmt::format("the object is more than the {} bytes it may hold", max_size_));
    spill_.insert(spill_.end(), reinterpret_cast<const std::byte*>(data), reinterpret_cast<const std::byte*>(data) + size);
    return true;
  }
  if (written_ + size > expected_)
    fail(ErrorKind::corrupt_data,
         fmt::format("the response is longer than the {} bytes asked for (its Content-Length)", expected_));
  std::memcpy(target_.data() + written_, data, size);
  written_ += size;
  return true;
}

bool HttpTransfer::on_body(const char* data, std::size_t size) {
  // Bodies of errors and redirects are not kept.
  if (status_ < 200 || status_ >= 300) return true;
  try {
    return take(data, size);
  } catch (...) {
    attempt_error_ = std::current_exception();
    return false;
  }
}

void HttpTransfer::fail_with(std::exception_ptr error) {
  state_ = State::failed;
  error_ = std::move(error);
}

HttpTransfer::Next HttpTransfer::finish_attempt(int code, long status, std::string_view curl_message, unsigned retries,
                                                unsigned max_redirects, unsigned connect_timeout_s,
                                                unsigned low_speed_time_s) {
  const unsigned attempts = retries + 1;
  auto retry = [&]() {
    if (attempts_ < attempts) return Next::retry;
    fail_with(std::make_exception_ptr(
        Error(ErrorKind::io, fmt::format("{}: failed after {} attempt{} (ZARRDIRECT_HTTP_RETRIES={}): {}", shown_,
                                         attempts, attempts == 1 ? "" : "s", retries, last_failure_))));
    return Next::finished;
  };
  try {
    if (attempt_error_) std::rethrow_exception(attempt_error_);
    if (code != CURLE_OK && !(code == CURLE_WRITE_ERROR && complete_early_)) {
      if (code == CURLE_TOO_MANY_REDIRECTS)
        fail(ErrorKind::io, fmt::format("more than {} redirects (ZARRDIRECT_HTTP_MAX_REDIRECTS)", max_redirects));
      last_failure_ = std::string(curl_message);
      if (code == CURLE_OPERATION_TIMEDOUT)
        last_failure_ += fmt::format(" (no progress for {} s or no connection within {} s)", low_speed_time_s,
                                     connect_timeout_s);
      if (transient(code)) return retry();
      fail(ErrorKind::io, last_failure_);
    }
    switch (classify_status(status)) {
      case HttpOutcome::missing:
        state_ = State::missing;
        return Next::finished;
      case HttpOutcome::refused:
        fail(ErrorKind::io, fmt::format("access refused (HTTP {}): check ZARRDIRECT_HTTP_BEARER_TOKEN or "
                                        "ZARRDIRECT_HTTP_HEADERS",
                                        status));
      case HttpOutcome::client_error:
        fail(ErrorKind::io, fmt::format("the server refused the request (HTTP {})", status));
      case HttpOutcome::retry:
        last_failure_ = fmt::format("HTTP {}", status);
        return retry();
      case HttpOutcome::ok:
        break;
    }
    if (head_) {
      if (!content_length_) fail(ErrorKind::io, "the server states no Content-Length for HEAD");
      size_ = *content_length_;
      state_ = State::done;
      return Next::finished;
    }
    if (!body_started_) start_body();  // an empty body
    if (spilling_) {
      std::span<std::byte> target = (*destination_)(spill_.size());
      if (target.size() < spill_.size()) fail(ErrorKind::io, "internal: destination too small");
      std::copy(spill_.begin(), spill_.end(), target.begin());
      size_ = spill_.size();
      state_ = State::done;
      return Next::finished;
    }
    if (written_ != expected_) {
      // Cut short (a Content-Length larger than the body sent, or a range not delivered).
      last_failure_ = fmt::format("the response ended after {} of {} bytes", written_, expected_);
      return retry();
    }
    size_ = written_;
    state_ = State::done;
    return Next::finished;
  } catch (...) {
    fail_with(std::current_exception());
    return Next::finished;
  }
}

}  // namespace zarrdirect

#include "store/http_multi.hpp"

#include <curl/curl.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <vector>

#include <fmt/format.h>

#include "store/http_handle_pool.hpp"
#include "zarrdirect/error.hpp"

namespace zarrdirect {
namespace {

using Clock = std::chrono::steady_clock;

// libcurl's receive buffer: fewer, larger reads from the socket and writes into the destination
// (the default is 16 KiB). libcurl 7.88 allocates it for each transfer and frees it after.
constexpr long kReceiveBufferBytes = 512L << 10;
// Longest wait in curl_multi_poll before looking at the clock again (retries due).
constexpr int kPollMs = 100;

std::atomic<std::uint64_t> connections_opened{0};

std::size_t on_header(char* data, std::size_t size, std::size_t count, void* self) {
  static_cast<HttpTransfer*>(self)->on_header_line(std::string_view(data, size * count));
  return size * count;
}

std::size_t on_body(char* data, std::size_t size, std::size_t count, void* self) {
  const std::size_t bytes = size * count;
  return static_cast<HttpTransfer*>(self)->on_body(data, bytes) ? bytes : 0;
}

// Every option of a request, set in full (the easy handle keeps the previous request's).
void configure(CURL* easy, HttpTransfer& transfer, const HttpOptions& options, const curl_slist* headers,
               bool fresh) {
  if (fresh) {
    curl_easy_setopt(easy, CURLOPT_SHARE, HttpHandlePool::instance().share());
    curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(easy, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(easy, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(easy, CURLOPT_FOLLOWLOCATION, 1L);
    curl_easy_setopt(easy, CURLOPT_LOW_SPEED_LIMIT, 1L);
    curl_easy_setopt(easy, CURLOPT_USERAGENT, "zarrdirect");
    curl_easy_setopt(easy, CURLOPT_BUFFERSIZE, kReceiveBufferBytes);
    curl_easy_setopt(easy, CURLOPT_HEADERFUNCTION, &on_header);
    curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, &on_body);
  }
  curl_easy_setopt(easy, CURLOPT_URL, transfer.url().c_str());
  curl_easy_setopt(easy, CURLOPT_MAXREDIRS, static_cast<long>(options.max_redirects));
  curl_easy_setopt(easy, CURLOPT_CONNECTTIMEOUT, static_cast<long>(options.connect_timeout_s));
  curl_easy_setopt(easy, CURLOPT_LOW_SPEED_TIME, static_cast<long>(options.low_speed_time_s));
  curl_easy_setopt(easy, CURLOPT_HEADERDATA, &transfer);
  curl_easy_setopt(easy, CURLOPT_WRITEDATA, &transfer);
  curl_easy_setopt(easy, CURLOPT_PRIVATE, &transfer);
  // libcurl does not change the list: it only reads it while the request runs.
  curl_easy_setopt(easy, CURLOPT_HTTPHEADER, const_cast<curl_slist*>(headers));
  if (transfer.is_head()) {
    curl_easy_setopt(easy, CURLOPT_NOBODY, 1L);
  } else {
    curl_easy_setopt(easy, CURLOPT_HTTPGET, 1L);  // also undoes an earlier NOBODY
  }
  curl_easy_setopt(easy, CURLOPT_RANGE, transfer.range_text().empty() ? nullptr : transfer.range_text().c_str());
}

// The batch's state; on any exit the running easy handles leave the multi handle and the set
// goes back to the pool.
class Batch {
 public:
  Batch(const HttpOptions& options, const curl_slist* headers, unsigned in_flight, const HttpFinished* on_finished)
      : options_(options),
        headers_(headers),
        in_flight_(std::max(in_flight, 1u)),
        on_finished_(on_finished),
        set_(HttpHandlePool::instance().take()) {}

  ~Batch() {
    for (CURL* easy : running_) {
      curl_multi_remove_handle(set_->multi(), easy);
      set_->give_easy(easy);
    }
    HttpHandlePool::instance().give(std::move(set_));
  }

  void run(std::span<HttpTransfer* const> transfers) {
    std::size_t next = 0;
    bool failed = false;
    while (!failed) {
      const Clock::time_point now = Clock::now();
      // Start what may start: retries that are due first, then new transfers.
      while (running_.size() < in_flight_) {
        auto due = std::find_if(retries_.begin(), retries_.end(), [&](const auto& r) { return r.first <= now; });
        if (due != retries_.end()) {
          HttpTransfer* transfer = due->second;
          retries_.erase(due);
          start(*transfer);
        } else if (next < transfers.size()) {
          start(*transfers[next++]);
        } else {
          break;
        }
      }
      if (running_.empty() && retries_.empty()) break;
      int still_running = 0;
      check(curl_multi_perform(set_->multi(), &still_running));
      int queued = 0;
      bool ended = false;
      while (CURLMsg* message = curl_multi_info_read(set_->multi(), &queued)) {
        if (message->msg != CURLMSG_DONE) continue;
        ended = true;
        failed = !finish(message->easy_handle, message->data.result) || failed;
      }
      if (failed) break;
      // Something ended: start the next ones, or leave once none is left, without waiting (a
      // poll now could watch no socket at all and sleep its whole kPollMs: the last transfer of
      // each batch cost 100 ms that way, halving the throughput of a raw read).
      if (ended) continue;
      // Sleep until a response moves, a retry falls due or kPollMs passes.
      int wait_ms = kPollMs;
      for (const auto& r : retries_) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(r.first - Clock::now()).count();
        wait_ms = static_cast<int>(std::clamp<long long>(left, 0, wait_ms));
      }
      if (wait_ms == 0) {
        if (running_.size() < in_flight_) continue;  // a retry is due and may start now
        wait_ms = kPollMs;
      }
      check(curl_multi_poll(set_->multi(), nullptr, 0, wait_ms, nullptr));
    }
  }

 private:
  void check(CURLMcode code) const {
    if (code != CURLM_OK) throw Error(ErrorKind::io, fmt::format("libcurl: {}", curl_multi_strerror(code)));
  }

  void start(HttpTransfer& transfer) {
    CURL* easy = set_->take_easy();
    // A fresh handle has no private pointer yet: its fixed options are set once.
    char* previous = nullptr;
    curl_easy_getinfo(easy, CURLINFO_PRIVATE, &previous);
    configure(easy, transfer, options_, headers_, previous == nullptr);
    transfer.begin_attempt();
    const CURLMcode code = curl_multi_add_handle(set_->multi(), easy);
    if (code != CURLM_OK) {
      set_->give_easy(easy);
      check(code);
    }
    running_.push_back(easy);
  }

  // Returns false when the transfer failed (the batch stops).
  bool finish(CURL* easy, CURLcode code) {
    HttpTransfer* transfer = nullptr;
    curl_easy_getinfo(easy, CURLINFO_PRIVATE, reinterpret_cast<char**>(&transfer));
    long status = 0;
    curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
    long connects = 0;
    curl_easy_getinfo(easy, CURLINFO_NUM_CONNECTS, &connects);
    connections_opened += static_cast<std::uint64_t>(std::max(connects, 0L));
    curl_multi_remove_handle(set_->multi(), easy);
    running_.erase(std::find(running_.begin(), running_.end(), easy));
    set_->give_easy(easy);
    const HttpTransfer::Next next =
        transfer->finish_attempt(code, status, curl_easy_strerror(code), options_.retries, options_.max_redirects,
                                 options_.connect_timeout_s, options_.low_speed_time_s);
    if (next == HttpTransfer::Next::retry) {
      const unsigned shift = std::min(transfer->attempts() - 1, 16u);
      retries_.emplace_back(Clock::now() + std::chrono::milliseconds(std::uint64_t{options_.retry_delay_ms} << shift),
                            transfer);
      return true;
    }
    if (transfer->state() == HttpTransfer::State::failed) return false;
    if (on_finished_ && *on_finished_) (*on_finished_)(*transfer);
    return true;
  }

  const HttpOptions& options_;
  const curl_slist* headers_;
  const std::size_t in_flight_;
  const HttpFinished* on_finished_;
  std::unique_ptr<HttpHandleSet> set_;
  std::vector<CURL*> running_;
  std::vector<std::pair<Clock::time_point, HttpTransfer*>> retries_;
};

}  // namespace

void run_transfers(const HttpOptions& options, const curl_slist* headers, std::span<HttpTransfer* const> transfers,
                   unsigned in_flight, const HttpFinished* on_finished) {
  if (transfers.empty()) return;
  Batch batch(options, headers, in_flight, on_finished);
  batch.run(transfers);
}

std::uint64_t http_connections_opened() { return connections_opened.load(); }

}  // namespace zarrdirect

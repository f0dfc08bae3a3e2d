#include "store/http_handle_pool.hpp"

#include <curl/curl.h>
#include <unistd.h>

#include <algorithm>
#include <array>

#include "zarrdirect/error.hpp"

namespace zarrdirect {
namespace {

// Connections a set keeps open between batches: a batch's requests in flight, with room to spare.
constexpr long kConnectionsPerSet = 64;

constexpr std::size_t kLocks = CURL_LOCK_DATA_LAST + 1;
std::array<std::mutex, kLocks> share_mutexes;

std::size_t lock_index(curl_lock_data data) { return std::min<std::size_t>(static_cast<std::size_t>(data), kLocks - 1); }
void lock_share(CURL*, curl_lock_data data, curl_lock_access, void*) { share_mutexes[lock_index(data)].lock(); }
void unlock_share(CURL*, curl_lock_data data, void*) { share_mutexes[lock_index(data)].unlock(); }

}  // namespace

HttpHandleSet::HttpHandleSet() : multi_(curl_multi_init()), owner_(::getpid()) {
  if (!multi_) throw Error(ErrorKind::io, "libcurl: cannot create a multi handle");
  curl_multi_setopt(multi_, CURLMOPT_MAXCONNECTS, kConnectionsPerSet);
}

HttpHandleSet::~HttpHandleSet() {
  if (owner_ != ::getpid()) return;  // a forked child: the handles and sockets are the parent's
  for (CURL* easy : idle_) curl_easy_cleanup(easy);
  curl_multi_cleanup(multi_);
}

CURL* HttpHandleSet::take_easy() {
  if (!idle_.empty()) {
    CURL* easy = idle_.back();
    idle_.pop_back();
    return easy;
  }
  CURL* easy = curl_easy_init();
  if (!easy) throw Error(ErrorKind::io, "libcurl: cannot create a request");
  return easy;
}

void HttpHandleSet::give_easy(CURL* easy) { idle_.push_back(easy); }

HttpHandlePool& HttpHandlePool::instance() {
  static HttpHandlePool* pool = new HttpHandlePool();
  return *pool;
}

HttpHandlePool::HttpHandlePool() : owner_(::getpid()) {
  curl_global_init(CURL_GLOBAL_DEFAULT);
  share_ = curl_share_init();
  if (!share_) throw Error(ErrorKind::io, "libcurl: cannot create a share handle");
  curl_share_setopt(share_, CURLSHOPT_LOCKFUNC, &lock_share);
  curl_share_setopt(share_, CURLSHOPT_UNLOCKFUNC, &unlock_share);
  // Connections are not shared this way (libcurl's shared connection cache is unsafe between
  // concurrent threads): each set's multi handle keeps its own.
  curl_share_setopt(share_, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
  curl_share_setopt(share_, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
}

void HttpHandlePool::drop_if_forked() {
  if (owner_ == ::getpid()) return;
  // The sets' destructors leave the parent's handles alone (their owner differs).
  sets_.clear();
  owner_ = ::getpid();
}

std::unique_ptr<HttpHandleSet> HttpHandlePool::take() {
  {
    std::lock_guard lock(mutex_);
    drop_if_forked();
    if (!sets_.empty()) {
      auto set = std::move(sets_.back());
      sets_.pop_back();
      return set;
    }
  }
  return std::make_unique<HttpHandleSet>();
}

void HttpHandlePool::give(std::unique_ptr<HttpHandleSet> set) {
  if (!set || set->owner_ != ::getpid()) return;
  std::lock_guard lock(mutex_);
  drop_if_forked();
  if (sets_.size() < kKeptSets) sets_.push_back(std::move(set));
}

std::size_t HttpHandlePool::kept() const {
  std::lock_guard lock(mutex_);
  return sets_.size();
}

}  // namespace zarrdirect

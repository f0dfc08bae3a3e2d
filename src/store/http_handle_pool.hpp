// The process-wide pool of libcurl handles behind the HTTP store, so that keep-alive connections
// outlive a read: each transfer driver (http_multi.hpp) borrows one set (a multi handle, whose
// connection cache holds the set's open connections, and the easy handles that ran on it) and
// gives it back when its batch is done; the next batch, of this read or a later one, finds the
// connections still open. DNS answers and TLS sessions are shared by every set (a share handle).
//
// A set is used by one thread at a time (libcurl's rule for a multi handle); sets are handed out
// last-in first-out, so a thread that reads again tends to get the connections it just used.
// A forked child never uses its parent's sets (their sockets are the parent's): the pool starts
// empty in the child, leaving the parent's handles untouched.
#pragma once

#include <sys/types.h>

#include <memory>
#include <mutex>
#include <vector>

typedef void CURL;
typedef void CURLM;
typedef void CURLSH;

namespace zarrdirect {

class HttpHandleSet {
 public:
  HttpHandleSet();
  ~HttpHandleSet();
  HttpHandleSet(const HttpHandleSet&) = delete;
  HttpHandleSet& operator=(const HttpHandleSet&) = delete;

  CURLM* multi() const { return multi_; }
  // An easy handle that is not running (one the set kept, else a new one); Error(io) when
  // libcurl cannot make one. Its options are the last request's: the caller sets every one.
  CURL* take_easy();
  // Back to the set (after curl_multi_remove_handle).
  void give_easy(CURL* easy);
  // Easy handles the set keeps.
  std::size_t idle() const { return idle_.size(); }

 private:
  friend class HttpHandlePool;
  CURLM* multi_ = nullptr;
  std::vector<CURL*> idle_;
  pid_t owner_ = 0;
};

class HttpHandlePool {
 public:
  // Sets kept when given back; more are freed (their connections closed).
  static constexpr std::size_t kKeptSets = 16;

  static HttpHandlePool& instance();

  // The share handle every easy handle uses (DNS and TLS sessions).
  CURLSH* share() const { return share_; }
  // A set for this thread's batch: the one given back last, else a new one.
  std::unique_ptr<HttpHandleSet> take();
  // Back for the next batch (kept up to kKeptSets).
  void give(std::unique_ptr<HttpHandleSet> set);
  // Sets waiting in the pool (for tests).
  std::size_t kept() const;

 private:
  HttpHandlePool();
  // Never destroyed: transfers may still run on other threads while statics are torn down.
  ~HttpHandlePool() = delete;
  void drop_if_forked();  // with mutex_ held

  CURLSH* share_ = nullptr;
  mutable std::mutex mutex_;
  std::vector<std::unique_ptr<HttpHandleSet>> sets_;
  pid_t owner_ = 0;
};

}  // namespace zarrdirect

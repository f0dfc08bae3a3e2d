// Reader threads kept for the life of the process.
//
// A read runs one task per worker. Creating and joining those threads for every read cost more
// than a small read itself: 30 thread starts took 5-6 ms on the development VM, against 15 ms
// for a whole 256^3 region read there. The pool starts threads on demand and keeps them.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <sys/types.h>

#include <algorithm>

#include "zarrdirect/settings.hpp"

namespace zarrdirect {

class WorkerPool {
 public:
  // The process's pool. A child process made by fork() gets a pool of its own (the parent's
  // threads do not exist there).
  static WorkerPool& shared();

  // Runs task(w) for every w in [0, min(workers, max_workers())): w = 0 on the calling thread,
  // the others on pool threads (a larger request is clamped, so callers size per-worker state
  // from the clamped count); returns when every one has returned, rethrowing the first exception a task threw.
  // Several calls may run at once (from several threads, or from inside a task): a thread is
  // started whenever a task would otherwise wait for an idle one, so tasks never wait on each
  // other's threads.
  void run(unsigned workers, const std::function<void(unsigned)>& task);

  // Threads started so far (for tests).
  std::size_t threads() const;

  // The most workers one run() gets: every caller's tasks pull work from a shared counter, so
  // fewer workers only means less parallelism, never lost work.
  unsigned max_workers() const { return max_workers_; }

  explicit WorkerPool(unsigned max_workers = kMaxReaderThreads) : max_workers_(std::max(1u, max_workers)) {}
  // Stops the pool's threads once they are idle; no call may be running.
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

 private:
  struct Call;
  struct Job {
    Call* call;
    unsigned worker;
  };
  void thread_main();

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable exited_;
  bool stopping_ = false;
  std::deque<Job> queue_;
  std::size_t threads_ = 0;
  std::size_t idle_ = 0;
  const unsigned max_workers_;
};

}  // namespace zarrdirect

#include "engine/worker_pool.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <system_error>
#include <thread>

namespace zarrdirect {

// One run(): its task, how many of its jobs are unfinished, and the first failure.
struct WorkerPool::Call {
  const std::function<void(unsigned)>* task = nullptr;
  std::mutex mutex;
  std::condition_variable finished;
  std::size_t pending = 0;
  std::exception_ptr error;

  void execute(unsigned worker) {
    std::exception_ptr failure;
    try {
      (*task)(worker);
    } catch (...) {
      failure = std::current_exception();
    }
    std::lock_guard lock(mutex);
    if (failure && !error) error = failure;
    if (--pending == 0) finished.notify_all();
  }
};

WorkerPool& WorkerPool::shared() {
  // Never destroyed: its threads wait on its members until the process ends, and destroying it
  // from a static destructor would race with reads still running in other threads.
  static std::atomic<WorkerPool*> pool{nullptr};
  static std::atomic<pid_t> owner{0};
  static std::mutex creating;
  const pid_t self = ::getpid();
  WorkerPool* current = pool.load(std::memory_order_acquire);
  if (current && owner.load(std::memory_order_acquire) == self) return *current;
  std::lock_guard lock(creating);
  current = pool.load(std::memory_order_acquire);
  if (!current || owner.load(std::memory_order_acquire) != self) {
    // First use, or first use in a forked child: the old pool's threads are not in this
    // process and its mutex may have been held at the fork, so it is abandoned, not reused.
    current = new WorkerPool();
    owner.store(self, std::memory_order_release);
    pool.store(current, std::memory_order_release);
  }
  return *current;
}

void WorkerPool::run(unsigned workers, const std::function<void(unsigned)>& task) {
  if (workers == 0) return;
  workers = std::min(workers, max_workers_);
  Call call;
  call.task = &task;
  call.pending = workers;
  if (workers > 1) {
    std::lock_guard lock(mutex_);
    for (unsigned w = 1; w < workers; ++w) queue_.push_back({&call, w});
    // Every queued job needs a thread that is idle now (each takes one job); start the rest.
    // Threads busy with other calls are not waited for: a task may itself wait for a call it
    // started, and a job must never queue behind it.
    for (std::size_t n = idle_; n < queue_.size(); ++n) {
      try {
        std::thread(&WorkerPool::thread_main, this).detach();
      } catch (const std::system_error&) {
        break;  // out of threads: the caller runs what no thread takes (below)
      }
      ++threads_;
      ++idle_;  // idle from birth: it takes a job as soon as it runs
    }
  }
  wake_.notify_all();
  call.execute(0);
  // Run this call's jobs that no thread has taken yet, rather than wait for one to take them.
  for (;;) {
    std::unique_lock lock(mutex_);
    auto mine = std::find_if(queue_.begin(), queue_.end(), [&](const Job& job) { return job.call == &call; });
    if (mine == queue_.end()) break;
    const unsigned worker = mine->worker;
    queue_.erase(mine);
    lock.unlock();
    call.execute(worker);
  }
  std::unique_lock lock(call.mutex);
  call.finished.wait(lock, [&] { return call.pending == 0; });
  if (call.error) std::rethrow_exception(call.error);
}

std::size_t WorkerPool::threads() const {
  std::lock_guard lock(mutex_);
  return threads_;
}

WorkerPool::~WorkerPool() {
  std::unique_lock lock(mutex_);
  stopping_ = true;
  wake_.notify_all();
  exited_.wait(lock, [&] { return threads_ == 0; });
}

void WorkerPool::thread_main() {
  std::unique_lock lock(mutex_);
  for (;;) {
    wake_.wait(lock, [&] { return !queue_.empty() || stopping_; });
    if (queue_.empty()) {  // stopping, and nothing left to run
      --idle_;
      --threads_;
      exited_.notify_all();
      return;
    }
    Job job = queue_.front();
    queue_.pop_front();
    --idle_;
    lock.unlock();
    job.call->execute(job.worker);
    lock.lock();
    ++idle_;
  }
}

}  // namespace zarrdirect

// Array::read_async, read_many_async, read_many_into_async and ReadHandle.
//
// A few library threads (kDrivers) take queued reads in order and run them; each read spreads
// its chunks over the shared worker pool as a read on the caller's thread would, so the drivers
// only bound how many reads run at once. Cancelling sets a flag that the read's progress callback
// reports (the reader stops between chunks) and that a queued read checks before it starts.
#include <atomic>
#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>

#include <unistd.h>

#include <fmt/format.h>

#include "engine/batch_upload.hpp"
#include "engine/array_state.hpp"

namespace zarrdirect {

struct ReadHandle::State {
  std::mutex mutex;
  std::condition_variable finished_changed;
  bool finished = false;
  std::vector<NDArray> result;
  ReadStats stats;
  std::exception_ptr error;
  std::atomic<bool> cancelled{false};

  void finish(std::vector<NDArray> arrays, ReadStats what_it_did, std::exception_ptr failure) {
    {
      std::lock_guard lock(mutex);
      result = std::move(arrays);
      stats = std::move(what_it_did);
      error = std::move(failure);
      finished = true;
    }
    finished_changed.notify_all();
  }
};

namespace {

// The threads that run background reads. Never destroyed (a static destructor would have to
// join threads that may be inside a read at exit); idle ones wait on the queue. A child made by
// fork() (a data loader's worker) gets drivers of its own, as WorkerPool::shared() does: the
// parent's threads do not exist there and its mutex may have been held at the fork.
class AsyncDrivers {
 public:
  static AsyncDrivers& instance() {
    static std::atomic<AsyncDrivers*> drivers{nullptr};
    static std::atomic<pid_t> owner{0};
    static std::mutex creating;
    const pid_t self = ::getpid();
    AsyncDrivers* current = drivers.load(std::memory_order_acquire);
    if (current && owner.load(std::memory_order_acquire) == self) return *current;
    std::lock_guard lock(creating);
    current = drivers.load(std::memory_order_acquire);
    if (!current || owner.load(std::memory_order_acquire) != self) {
      current = new AsyncDrivers();
      owner.store(self, std::memory_order_release);
      drivers.store(current, std::memory_order_release);
    }
    return *current;
  }

  void submit(std::function<void()> job) {
    {
      std::lock_guard lock(mutex_);
      queue_.push_back(std::move(job));
      if (started_ < kDrivers && idle_ == 0) {
        ++started_;
        std::thread([this] { loop(); }).detach();
      }
    }
    wake_.notify_one();
  }

 private:
  static constexpr unsigned kDrivers = 8;

  void loop() {
    std::unique_lock lock(mutex_);
    for (;;) {
      ++idle_;
      wake_.wait(lock, [&] { return !queue_.empty(); });
      --idle_;
      auto job = std::move(queue_.front());
      queue_.pop_front();
      lock.unlock();
      job();  // jobs catch their own errors
      lock.lock();
    }
  }

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> queue_;
  unsigned started_ = 0;
  unsigned idle_ = 0;
};

// What a background read hands back: its arrays (none for a read into the caller's memory) and
// what it did.
struct Finished {
  std::vector<NDArray> arrays;
  ReadStats stats;
};
using ReadBody = std::function<Finished(const Settings&)>;

Finished with_stats(std::vector<NDArray> arrays) {
  ReadStats stats = arrays.empty() ? ReadStats{} : arrays.front().stats();
  return {std::move(arrays), std::move(stats)};
}

ReadHandle start(ReadBody body, Device device, const Settings& settings) {
  auto state = std::make_shared<ReadHandle::State>();
  const int cuda_device = device == Device::cuda ? current_cuda_device() : -1;
  AsyncDrivers::instance().submit([state, body = std::move(body), settings, cuda_device] {
    if (state->cancelled) {
      state->finish({}, {}, std::make_exception_ptr(Error(ErrorKind::cancelled, "read cancelled before it started")));
      return;
    }
    try {
      set_cuda_device(cuda_device);
      Settings with_cancel = settings;
      with_cancel.progress = [state, user = settings.progress](std::size_t done, std::size_t total) {
        if (state->cancelled) return false;
        return user ? user(done, total) : true;
      };
      Finished finished = body(with_cancel);
      state->finish(std::move(finished.arrays), std::move(finished.stats), nullptr);
    } catch (...) {
      state->finish({}, {}, std::current_exception());
    }
  });
  return ReadHandle(state);
}

}  // namespace

bool ReadHandle::done() const {
  if (!state_) return true;
  std::lock_guard lock(state_->mutex);
  return state_->finished;
}

bool ReadHandle::wait_for(std::chrono::nanoseconds timeout) const {
  if (!state_) return true;
  std::unique_lock lock(state_->mutex);
  return state_->finished_changed.wait_for(lock, timeout, [&] { return state_->finished; });
}

namespace {
// Waits for the read to finish and rethrows its error; the lock returned guards its results.
std::unique_lock<std::mutex> finished(const std::shared_ptr<ReadHandle::State>& state) {
  if (!state) throw Error(ErrorKind::invalid_argument, "ReadHandle: no read (a default-constructed handle)");
  std::unique_lock lock(state->mutex);
  state->finished_changed.wait(lock, [&] { return state->finished; });
  if (state->error) std::rethrow_exception(state->error);
  return lock;
}
}  // namespace

std::vector<NDArray> ReadHandle::get() const {
  auto lock = finished(state_);
  return state_->result;
}

ReadStats ReadHandle::stats() const {
  auto lock = finished(state_);
  return state_->stats;
}

bool ReadHandle::cancel() const {
  if (!state_) return false;
  std::lock_guard lock(state_->mutex);
  if (state_->finished) return false;
  state_->cancelled = true;
  return true;
}

ReadHandle Array::read_async(const Region& region, Device device, const Settings& settings) const {
  Region resolved = resolve_region(region, impl_->metadata.shape);  // a bad region fails here, at once
  Array self = *this;
  return start([self, resolved, device](const Settings& s) { return with_stats({self.read(resolved, device, s)}); },
               device, settings);
}

ReadHandle Array::read_many_async(std::vector<Region> regions, Device device, bool stack, const Settings& settings) const {
  for (auto& region : regions) region = resolve_region(region, impl_->metadata.shape);
  Array self = *this;
  return start(
      [self, regions = std::move(regions), device, stack](const Settings& s) {
        if (stack) return with_stats({self.read_batch(regions, device, s)});
        return with_stats(self.read_many(regions, device, s));
      },
      device, settings);
}

ReadHandle Array::read_many_into_async(std::vector<Region> regions, std::vector<Destination> destinations,
                                       const Settings& settings) const {
  if (regions.size() != destinations.size())
    throw Error(ErrorKind::invalid_argument, fmt::format("read_many_into_async: {} regions but {} destinations",
                                                         regions.size(), destinations.size()));
  for (auto& region : regions) region = resolve_region(region, impl_->metadata.shape);
  const Device device = destinations.empty() ? Device::cpu : destinations.front().device;
  Array self = *this;
  return start(
      [self, regions = std::move(regions), destinations = std::move(destinations)](const Settings& s) {
        return Finished{{}, self.read_many_into(regions, destinations, s)};
      },
      device, settings);
}

}  // namespace zarrdirect

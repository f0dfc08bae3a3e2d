#include "engine/worker_scratch.hpp"

#include <atomic>
#include <mutex>
#include <utility>
#include <vector>

namespace zarrdirect {
namespace {

std::atomic<std::size_t> cap_bytes{std::size_t{64} << 20};

// Sets left by threads that exited, for the next threads to start: Python runs each read on a
// new helper thread (worker 0 of the read), whose buffers would otherwise die with it.
constexpr std::size_t kMaxParked = 8;

struct Parked {
  std::mutex mutex;
  std::vector<std::unique_ptr<WorkerScratch>> sets;  // the last parked at the back
};

Parked& parked() {
  static Parked* instance = new Parked();  // never destroyed: threads may exit during static teardown
  return *instance;
}

void park(std::unique_ptr<WorkerScratch> scratch) {
  if (scratch->capacity() > cap_bytes.load(std::memory_order_relaxed)) return;
  Parked& p = parked();
  std::lock_guard lock(p.mutex);
  if (p.sets.size() < kMaxParked) p.sets.push_back(std::move(scratch));
}

std::unique_ptr<WorkerScratch> unpark() {
  Parked& p = parked();
  std::lock_guard lock(p.mutex);
  if (p.sets.empty()) return nullptr;
  auto scratch = std::move(p.sets.back());
  p.sets.pop_back();
  return scratch;
}

// What this thread keeps between leases; parked when the thread exits.
struct Kept {
  std::unique_ptr<WorkerScratch> scratch;
  bool used = false;  // the thread has had a lease (only its first may take a parked set)
  ~Kept() {
    if (scratch) park(std::move(scratch));
  }
};

Kept& kept() {
  thread_local Kept slot;
  return slot;
}

}  // namespace

std::size_t WorkerScratch::capacity() const {
  std::size_t bytes = stored.capacity() + codec.a.capacity() + codec.b.capacity() + codec.c.capacity();
  for (const auto& slot : slots) bytes += slot.capacity();
  return bytes;
}

WorkerScratchLease::WorkerScratchLease() {
  Kept& slot = kept();
  scratch_ = std::exchange(slot.scratch, nullptr);
  if (!scratch_ && !slot.used) scratch_ = unpark();
  slot.used = true;
  if (!scratch_) scratch_ = std::make_unique<WorkerScratch>();
}

WorkerScratchLease::~WorkerScratchLease() {
  auto& slot = kept().scratch;
  if (scratch_->capacity() > cap_bytes.load(std::memory_order_relaxed)) return;  // freed here
  // A nested lease may have returned first: the thread keeps the larger of the two.
  if (!slot || slot->capacity() < scratch_->capacity()) slot = std::move(scratch_);
}

std::size_t worker_scratch_cap() { return cap_bytes.load(std::memory_order_relaxed); }

void set_worker_scratch_cap(std::size_t bytes) { cap_bytes.store(bytes, std::memory_order_relaxed); }

std::size_t worker_scratch_kept_bytes() {
  const auto& slot = kept().scratch;
  return slot ? slot->capacity() : 0;
}

}  // namespace zarrdirect

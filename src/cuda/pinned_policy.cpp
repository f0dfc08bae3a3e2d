#include "cuda/pinned_policy.hpp"

#include <algorithm>

namespace zarrdirect::cuda {
namespace {

std::size_t minus(std::size_t a, std::size_t b) { return a > b ? a - b : 0; }

}  // namespace

bool slot_fits(std::size_t capacity, std::size_t asked) { return capacity >= asked && capacity - asked <= asked; }

AcquirePlan plan_acquire(std::span<const IdleSlotInfo> idle, std::size_t in_use, std::size_t budget,
                         const PinnedRequest& request) {
  AcquirePlan plan;
  if (request.want == 0 || request.capacity == 0) return plan;

  // The fair share (see the header), in slots.
  std::size_t share = request.want;
  if (in_use > 0) {
    const std::size_t half_room = minus(budget, in_use) / 2;
    share = std::min(request.want, std::max(std::min(request.at_least, request.want), half_room / request.capacity));
  }

  // Reuse, newest first.
  std::vector<bool> taken(idle.size(), false);
  for (std::size_t i = idle.size(); i-- > 0 && plan.take.size() < share;) {
    if (idle[i].device == request.device && slot_fits(idle[i].capacity, request.capacity)) {
      plan.take.push_back(i);
      taken[i] = true;
    }
  }
  const std::size_t need = share - plan.take.size();
  if (need == 0) return plan;

  // New slots within the budget, freeing idle ones (oldest first) only as far as that needs.
  std::size_t idle_bytes = 0;
  std::size_t evictable = 0;
  for (std::size_t i = 0; i < idle.size(); ++i) {
    idle_bytes += idle[i].capacity;
    if (!taken[i]) evictable += idle[i].capacity;
  }
  const std::size_t free_now = minus(budget, in_use + idle_bytes);
  plan.allocate = std::min(need, (free_now + evictable) / request.capacity);
  std::size_t free_bytes = free_now;
  for (std::size_t i = 0; i < idle.size() && free_bytes < plan.allocate * request.capacity; ++i) {
    if (taken[i]) continue;
    plan.evict.push_back(i);
    free_bytes += idle[i].capacity;
  }
  return plan;
}

std::vector<std::size_t> plan_trim(std::span<const IdleSlotInfo> idle, std::size_t in_use, std::size_t budget) {
  std::size_t total = in_use;
  for (const auto& slot : idle) total += slot.capacity;
  std::vector<std::size_t> evict;
  for (std::size_t i = 0; i < idle.size() && total > budget; ++i) {
    evict.push_back(i);
    total -= idle[i].capacity;
  }
  return evict;
}

std::vector<std::size_t> share_slots(std::size_t granted, std::size_t workers) {
  std::vector<std::size_t> per_worker(workers, 0);
  if (workers == 0) return per_worker;
  for (std::size_t w = 0; w < workers; ++w) per_worker[w] = granted / workers + (w < granted % workers ? 1 : 0);
  return per_worker;
}

}  // namespace zarrdirect::cuda

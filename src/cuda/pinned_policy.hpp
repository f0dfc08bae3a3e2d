// The accounting of the process-wide pool of pinned staging slots (device_pool.hpp): which idle
// slots a read reuses, how many new ones it may allocate, which idle ones are freed, all within
// one budget of pinned bytes for the whole process (Settings::pinned_pool_bytes). No CUDA here:
// DevicePool applies these plans to real slots, and the arithmetic is tested without a GPU.
//
// Why a process-wide budget: pinned memory is expensive to get (cudaHostAlloc costs milliseconds
// per MiB) and cannot be paged out, so the pool keeps what reads returned for the next reads,
// but not without bound. Sized for one read (Settings::staging_bytes), the pool thrashed when
// many reads ran at once (Dask's threads, issue 14): every release freed the slots beyond one
// read's budget and every acquire allocated them again.
//
// The rules:
// - Bytes counted: in use (handed out to reads) + idle (kept for the next read) <= budget.
// - Reuse first: idle slots of the device with a capacity from the size asked for up to twice
//   it, newest first (the likeliest to be warm).
// - Fair share: a read alone (nothing in use) may take all it wants within the budget; while
//   other reads hold slots, at most half of the room they leave (budget - in use), but at least
//   `at_least` slots (one per worker) where those fit. Half, not all: whatever is left, a read
//   that starts next still finds room.
// - New slots only within the budget. Idle slots of other sizes or devices are freed, oldest
//   first, only as far as needed to make room for the new ones, never all of them on principle.
// - A read that gets fewer slots than it wanted stages the rest in ordinary (pageable) memory
//   (device_sink.hpp): it never waits for another read's slots, so reads cannot deadlock on the
//   pool, whatever they wait on otherwise.
// - On release, idle slots are kept while the total fits the budget (the budget of the read that
//   returns them: the oldest are freed when it is smaller than the one they were taken under).
#pragma once

#include <cstddef>
#include <span>
#include <vector>

namespace zarrdirect::cuda {

// An idle slot, as the policy sees it. The pool's idle list is oldest first.
struct IdleSlotInfo {
  int device = 0;
  std::size_t capacity = 0;
};

struct PinnedRequest {
  int device = 0;
  std::size_t capacity = 0;  // bytes each slot must hold
  std::size_t want = 0;      // slots the read would like
  std::size_t at_least = 0;  // slots it gets ahead of the fair share, where the budget holds them
};

struct AcquirePlan {
  std::vector<std::size_t> take;   // indices into the idle list: reused
  std::vector<std::size_t> evict;  // indices into the idle list: freed to make room
  std::size_t allocate = 0;        // new slots of the asked capacity
  std::size_t granted() const { return take.size() + allocate; }
};

// Whether an idle slot of `capacity` bytes serves a request for `asked` bytes: large enough, and
// at most twice the size (larger ones would waste pinned memory).
bool slot_fits(std::size_t capacity, std::size_t asked);

// The slots a request gets. `in_use`: pinned bytes handed out to reads now; `idle`: the pool's
// idle slots, oldest first. `take` and `evict` never overlap. Asking for zero slots (or zero
// bytes each) gets nothing.
AcquirePlan plan_acquire(std::span<const IdleSlotInfo> idle, std::size_t in_use, std::size_t budget,
                         const PinnedRequest& request);

// The idle slots to free (indices, oldest first) so that in use + idle fits the budget.
std::vector<std::size_t> plan_trim(std::span<const IdleSlotInfo> idle, std::size_t in_use, std::size_t budget);

// How `granted` pinned slots are spread over `workers` workers: every worker gets
// granted / workers, the first granted % workers one more. Fewer slots than workers: the first
// `granted` workers get one each, the others none (they stage in ordinary memory).
std::vector<std::size_t> share_slots(std::size_t granted, std::size_t workers);

}  // namespace zarrdirect::cuda

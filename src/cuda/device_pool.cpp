#include "cuda/device_pool.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <mutex>
#include <new>
#include <string>
#include <string_view>

#include "cuda/cuda_check.hpp"
#include "cuda/cufile.hpp"
#include "cuda/pinned_policy.hpp"
#include "zarrdirect/error.hpp"

namespace zarrdirect::cuda {
namespace {
constexpr std::size_t kPage = 4096;
}  // namespace

StagingSlot::StagingSlot(int device_id, std::size_t bytes, bool is_pinned)
    : device(device_id), capacity(bytes), pinned(is_pinned) {
  if (pinned) {
    // Portable: usable from every device's context. One page more than needed, so that the
    // buffer can start on a page boundary (O_DIRECT reads land in it) whatever the allocator's
    // alignment.
    check_cuda(cudaHostAlloc(&pinned_allocation, capacity + kPage, cudaHostAllocPortable),
               "cudaHostAlloc (pinned staging)");
    const auto at = reinterpret_cast<std::uintptr_t>(pinned_allocation);
    host = static_cast<std::byte*>(pinned_allocation) + (kPage - at % kPage) % kPage;
  } else {
    host = static_cast<std::byte*>(std::aligned_alloc(4096, capacity));
    if (!host) throw std::bad_alloc();
  }
  cudaError_t status = cudaEventCreateWithFlags(&done, cudaEventDisableTiming);
  if (status != cudaSuccess) {
    if (pinned) cudaFreeHost(pinned_allocation);
    else std::free(host);
    throw cuda_error(status, "cudaEventCreateWithFlags");
  }
}

StagingSlot::~StagingSlot() {
  // Errors are ignored: nothing can be done about them here, and a failed free leaks at worst.
  if (gds_registered) CuFile::instance().buf_deregister(device_scratch);
  if (device_scratch) cudaFree(device_scratch);
  if (done) cudaEventDestroy(done);
  if (pinned) cudaFreeHost(pinned_allocation);
  else std::free(host);
}

std::byte* StagingSlot::scratch() {
  if (!device_scratch)
    check_cuda(cudaMalloc(reinterpret_cast<void**>(&device_scratch), capacity), "cudaMalloc (device scratch)");
  return device_scratch;
}

DeviceBlock::DeviceBlock(int device_id, std::size_t bytes) : device(device_id), capacity(bytes) {
  check_cuda(cudaMalloc(reinterpret_cast<void**>(&data), std::max<std::size_t>(capacity, 1)),
             "cudaMalloc (device work buffer)");
}

DeviceBlock::~DeviceBlock() {
  if (data) cudaFree(data);  // an error leaks at worst
}

struct DevicePool::Impl {
  mutable std::mutex mutex;
  std::vector<SlotPtr> idle;  // pinned, all devices, oldest first
  std::vector<DeviceBlockPtr> idle_blocks;  // all devices, oldest first
  std::map<int, std::size_t> idle_block_bytes;
  std::map<int, std::size_t> block_limits;  // idle_device_limit's, once per device
  std::uint64_t block_allocations = 0;
  std::map<int, std::vector<cudaStream_t>> streams;
  std::map<int, std::vector<cudaEvent_t>> events;
  std::size_t idle_pinned = 0;  // bytes
  std::size_t in_use = 0;       // pinned bytes handed out
  std::size_t budget = 0;       // the last one asked with
  std::uint64_t allocations = 0;
  std::uint64_t frees = 0;

  std::vector<IdleSlotInfo> idle_info() const {
    std::vector<IdleSlotInfo> info;
    info.reserve(idle.size());
    for (const auto& slot : idle) info.push_back({slot->device, slot->capacity});
    return info;
  }

  // Moves the idle slots at `indices` out (for the caller to keep or free), keeping the order of
  // the rest.
  std::vector<SlotPtr> take_idle(const std::vector<std::size_t>& indices) {
    std::vector<SlotPtr> out;
    for (std::size_t i : indices) {
      idle_pinned -= idle[i]->capacity;
      out.push_back(std::move(idle[i]));
    }
    std::erase_if(idle, [](const SlotPtr& slot) { return slot == nullptr; });
    return out;
  }
};

DevicePool& DevicePool::instance() {
  static DevicePool* pool = new DevicePool();  // never destroyed (see the header)
  return *pool;
}

DevicePool::Impl& DevicePool::impl() const {
  static Impl* state = new Impl();
  return *state;
}

namespace {

// Frees slots (their destructors call CUDA on the slot's device), outside the pool's lock.
void free_slots(std::vector<SlotPtr>& slots) {
  int current = 0;
  const bool have_current = cudaGetDevice(&current) == cudaSuccess;
  bool switched = false;
  for (auto& slot : slots) {
    if (!slot) continue;
    if (have_current && slot->device != current) {
      cudaSetDevice(slot->device);
      switched = true;
    }
    slot.reset();
  }
  if (switched) cudaSetDevice(current);
  slots.clear();
}

// Frees device blocks on their own devices, outside the pool's lock.
void free_blocks(std::vector<DeviceBlockPtr>& blocks) {
  int current = 0;
  const bool have_current = cudaGetDevice(&current) == cudaSuccess;
  bool switched = false;
  for (auto& block : blocks) {
    if (!block) continue;
    if (have_current && block->device != current) {
      cudaSetDevice(block->device);
      switched = true;
    }
    block.reset();
  }
  if (switched) cudaSetDevice(current);
  blocks.clear();
}

}  // namespace

std::vector<SlotPtr> DevicePool::acquire_slots(int device, std::size_t capacity, std::size_t want, std::size_t budget,
                                               std::size_t at_least, std::size_t* allocated) {
  auto& state = impl();
  std::vector<SlotPtr> taken;
  std::vector<SlotPtr> evicted;  // freed after the lock is released
  std::size_t to_allocate = 0;
  {
    std::lock_guard lock(state.mutex);
    state.budget = budget;
    const AcquirePlan plan = plan_acquire(state.idle_info(), state.in_use, budget, {device, capacity, want, at_least});
    // Both lists index the idle slots as they are now: take them out in one pass.
    std::vector<std::size_t> all = plan.take;
    all.insert(all.end(), plan.evict.begin(), plan.evict.end());
    auto out = state.take_idle(all);
    for (std::size_t k = 0; k < out.size(); ++k) {
      if (k < plan.take.size()) {
        state.in_use += out[k]->capacity;
        taken.push_back(std::move(out[k]));
      } else {
        evicted.push_back(std::move(out[k]));
      }
    }
    state.frees += evicted.size();
    // The new slots count as in use from now, so that reads acquiring at the same time see them.
    to_allocate = plan.allocate;
    state.in_use += to_allocate * capacity;
  }
  free_slots(evicted);
  std::size_t made = 0;
  try {
    for (; made < to_allocate; ++made) taken.push_back(std::make_unique<StagingSlot>(device, capacity, true));
  } catch (...) {
    {
      std::lock_guard lock(state.mutex);
      state.in_use -= (to_allocate - made) * capacity;  // never made
      state.allocations += made;
    }
    release_slots(std::move(taken), budget);
    throw;
  }
  {
    std::lock_guard lock(state.mutex);
    state.allocations += made;
  }
  if (allocated) *allocated += made;
  for (auto& slot : taken) slot->in_flight = false;
  return taken;
}

std::vector<SlotPtr> DevicePool::acquire_staging(int device, std::size_t capacity, std::size_t count,
                                                 std::size_t budget, std::size_t* allocated) {
  auto slots = acquire_slots(device, capacity, count, budget, count, allocated);
  try {
    while (slots.size() < count) slots.push_back(std::make_unique<StagingSlot>(device, capacity, false));
  } catch (...) {
    release_slots(std::move(slots), budget);
    throw;
  }
  return slots;
}

void DevicePool::release_slots(std::vector<SlotPtr> slots, std::size_t budget) {
  auto& state = impl();
  std::vector<SlotPtr> evicted;
  {
    std::lock_guard lock(state.mutex);
    state.budget = budget;
    for (auto& slot : slots) {
      if (!slot) continue;
      if (!slot->pinned) {
        evicted.push_back(std::move(slot));
        continue;
      }
      slot->in_flight = false;
      state.in_use -= std::min(state.in_use, slot->capacity);
      state.idle_pinned += slot->capacity;
      state.idle.push_back(std::move(slot));
    }
    auto freed = state.take_idle(plan_trim(state.idle_info(), state.in_use, budget));
    state.frees += freed.size();
    for (auto& slot : freed) evicted.push_back(std::move(slot));
  }
  free_slots(evicted);
}

void DevicePool::forget_slots(std::vector<SlotPtr> slots) {
  auto& state = impl();
  std::lock_guard lock(state.mutex);
  for (auto& slot : slots) {
    if (!slot) continue;
    if (slot->pinned) state.in_use -= std::min(state.in_use, slot->capacity);
    (void)slot.release();
  }
}

cudaEvent_t DevicePool::acquire_event(int device) {
  auto& state = impl();
  {
    std::lock_guard lock(state.mutex);
    auto& idle = state.events[device];
    if (!idle.empty()) {
      cudaEvent_t event = idle.back();
      idle.pop_back();
      return event;
    }
  }
  cudaEvent_t event = nullptr;
  check_cuda(cudaEventCreateWithFlags(&event, cudaEventDisableTiming), "cudaEventCreateWithFlags");
  return event;
}

void DevicePool::release_event(int device, cudaEvent_t event) {
  if (!event) return;
  auto& state = impl();
  std::lock_guard lock(state.mutex);
  state.events[device].push_back(event);
}

bool stream_priority_from_text(const char* text) {
  if (text == nullptr || *text == '\0' || std::string_view(text) == "normal") return false;
  if (std::string_view(text) == "high") return true;
  throw Error(ErrorKind::invalid_argument,
              "ZARRDIRECT_STREAM_PRIORITY: '" + std::string(text) + "' is not one of normal, high");
}

std::vector<cudaStream_t> DevicePool::acquire_streams(int device, std::size_t count) {
  // Read before any stream is taken: an invalid value throws with nothing to give back.
  static const bool high_priority = stream_priority_from_text(std::getenv("ZARRDIRECT_STREAM_PRIORITY"));
  auto& state = impl();
  std::vector<cudaStream_t> streams;
  {
    std::lock_guard lock(state.mutex);
    auto& idle = state.streams[device];
    while (streams.size() < count && !idle.empty()) {
      streams.push_back(idle.back());
      idle.pop_back();
    }
  }
  int priority = 0;
  if (high_priority && streams.size() < count) {
    int least = 0;
    if (cudaError_t status = cudaDeviceGetStreamPriorityRange(&least, &priority); status != cudaSuccess) {
      release_streams(device, std::move(streams));
      throw cuda_error(status, "cudaDeviceGetStreamPriorityRange");
    }
  }
  while (streams.size() < count) {
    cudaStream_t stream = nullptr;
    // Non-blocking: the legacy default stream, which other code in the process may use, does not
    // serialize with them.
    cudaError_t status = cudaStreamCreateWithPriority(&stream, cudaStreamNonBlocking, priority);
    if (status != cudaSuccess) {
      release_streams(device, std::move(streams));
      throw cuda_error(status, "cudaStreamCreateWithPriority");
    }
    streams.push_back(stream);
  }
  return streams;
}

void DevicePool::release_streams(int device, std::vector<cudaStream_t> streams) {
  auto& state = impl();
  std::lock_guard lock(state.mutex);
  auto& idle = state.streams[device];
  idle.insert(idle.end(), streams.begin(), streams.end());
}

DeviceBlockPtr DevicePool::acquire_device_block(int device, std::size_t bytes) {
  auto& state = impl();
  {
    std::lock_guard lock(state.mutex);
    // The smallest idle block that fits, if not more than twice the size asked for.
    auto best = state.idle_blocks.end();
    for (auto it = state.idle_blocks.begin(); it != state.idle_blocks.end(); ++it) {
      const std::size_t capacity = (*it)->capacity;
      if ((*it)->device == device && capacity >= bytes && capacity / 2 <= bytes &&
          (best == state.idle_blocks.end() || capacity < (*best)->capacity))
        best = it;
    }
    if (best != state.idle_blocks.end()) {
      DeviceBlockPtr block = std::move(*best);
      state.idle_blocks.erase(best);
      state.idle_block_bytes[device] -= block->capacity;
      return block;
    }
    ++state.block_allocations;
  }
  return std::make_unique<DeviceBlock>(device, bytes);
}

std::size_t DevicePool::idle_device_limit(int device) {
  auto& state = instance().impl();
  {
    std::lock_guard lock(state.mutex);
    auto it = state.block_limits.find(device);
    if (it != state.block_limits.end()) return it->second;
  }
  constexpr std::size_t kMostIdle = std::size_t{2} << 30;
  std::size_t limit = kMostIdle;
  cudaDeviceProp properties{};
  if (cudaGetDeviceProperties(&properties, device) == cudaSuccess && properties.totalGlobalMem > 0)
    limit = std::min(limit, properties.totalGlobalMem / 16);
  std::lock_guard lock(state.mutex);
  state.block_limits[device] = limit;
  return limit;
}

void DevicePool::release_device_blocks(std::vector<DeviceBlockPtr> blocks) {
  auto& state = impl();
  std::vector<DeviceBlockPtr> freed;
  std::map<int, std::size_t> limits;
  for (const auto& block : blocks)
    if (block && !limits.contains(block->device)) limits[block->device] = idle_device_limit(block->device);
  {
    std::lock_guard lock(state.mutex);
    for (auto& block : blocks) {
      if (!block) continue;
      state.idle_block_bytes[block->device] += block->capacity;
      state.idle_blocks.push_back(std::move(block));
    }
    // Oldest first out, per device, until each device's idle bytes fit its limit.
    for (auto it = state.idle_blocks.begin(); it != state.idle_blocks.end();) {
      const int device = (*it)->device;
      auto limit = limits.find(device);
      if (limit != limits.end() && state.idle_block_bytes[device] > limit->second) {
        state.idle_block_bytes[device] -= (*it)->capacity;
        freed.push_back(std::move(*it));
        it = state.idle_blocks.erase(it);
      } else {
        ++it;
      }
    }
  }
  free_blocks(freed);
}

void DevicePool::trim() {
  auto& state = impl();
  std::vector<SlotPtr> freed;
  std::vector<DeviceBlockPtr> freed_blocks;
  {
    std::lock_guard lock(state.mutex);
    freed = std::move(state.idle);
    state.idle.clear();
    state.idle_pinned = 0;
    state.frees += freed.size();
    freed_blocks = std::move(state.idle_blocks);
    state.idle_blocks.clear();
    state.idle_block_bytes.clear();
  }
  free_slots(freed);
  free_blocks(freed_blocks);
}

std::size_t DevicePool::idle_pinned_bytes() const {
  auto& state = impl();
  std::lock_guard lock(state.mutex);
  return state.idle_pinned;
}

DevicePoolStats DevicePool::stats() const {
  auto& state = impl();
  std::lock_guard lock(state.mutex);
  std::size_t idle_blocks = 0;
  for (const auto& [device, bytes] : state.idle_block_bytes) idle_blocks += bytes;
  return {state.budget, state.in_use, state.idle_pinned, state.allocations, state.frees, idle_blocks,
          state.block_allocations};
}

void use_device(int device) {
  int current = -1;
  if (cudaGetDevice(&current) == cudaSuccess && current == device) return;
  check_cuda(cudaSetDevice(device), "cudaSetDevice");
}

DeviceRestorer::DeviceRestorer() { have_ = cudaGetDevice(&device_) == cudaSuccess; }

DeviceRestorer::~DeviceRestorer() {
  int now = -1;
  if (have_ && cudaGetDevice(&now) == cudaSuccess && now != device_) cudaSetDevice(device_);
}

}  // namespace zarrdirect::cuda

#include "cuda/device_pool.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <mutex>
#include <new>

#include "cuda/cuda_check.hpp"
#include "cuda/cufile.hpp"

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

struct DevicePool::Impl {
  struct PerDevice {
    std::vector<SlotPtr> idle;  // oldest first
    std::vector<cudaStream_t> streams;
  };
  mutable std::mutex mutex;
  std::map<int, PerDevice> devices;
  std::size_t idle_pinned = 0;  // bytes, all devices
};

DevicePool& DevicePool::instance() {
  static DevicePool* pool = new DevicePool();  // never destroyed (see the header)
  return *pool;
}

DevicePool::Impl& DevicePool::impl() const {
  static Impl* state = new Impl();
  return *state;
}

std::vector<SlotPtr> DevicePool::acquire_slots(int device, std::size_t capacity, std::size_t count) {
  auto& state = impl();
  std::vector<SlotPtr> taken;
  std::vector<SlotPtr> evicted;  // freed after the lock is released
  {
    std::lock_guard lock(state.mutex);
    auto& idle = state.devices[device].idle;
    // Newest first: the most recently used slots are the likeliest to be the right size. A slot
    // at most twice the size asked for is good enough; larger ones would waste pinned memory.
    for (std::size_t i = idle.size(); i-- > 0 && taken.size() < count;) {
      if (idle[i]->capacity >= capacity && idle[i]->capacity <= 2 * capacity) {
        state.idle_pinned -= idle[i]->capacity;
        taken.push_back(std::move(idle[i]));
        idle.erase(idle.begin() + static_cast<std::ptrdiff_t>(i));
      }
    }
    // New buffers are needed: the size changed, so idle buffers of other sizes go first.
    if (taken.size() < count) {
      for (auto& slot : idle) {
        state.idle_pinned -= slot->capacity;
        evicted.push_back(std::move(slot));
      }
      idle.clear();
    }
  }
  evicted.clear();
  try {
    while (taken.size() < count) taken.push_back(std::make_unique<StagingSlot>(device, capacity, true));
  } catch (...) {
    release_slots(std::move(taken), ~std::size_t{0});
    throw;
  }
  for (auto& slot : taken) slot->in_flight = false;
  return taken;
}

void DevicePool::release_slots(std::vector<SlotPtr> slots, std::size_t idle_limit) {
  auto& state = impl();
  std::vector<SlotPtr> evicted;
  {
    std::lock_guard lock(state.mutex);
    for (auto& slot : slots) {
      if (!slot) continue;
      if (!slot->pinned) {
        evicted.push_back(std::move(slot));
        continue;
      }
      slot->in_flight = false;
      state.idle_pinned += slot->capacity;
      state.devices[slot->device].idle.push_back(std::move(slot));
    }
    // Oldest first (per device) until the idle staging fits the budget.
    for (auto& [id, per_device] : state.devices) {
      auto& idle = per_device.idle;
      std::size_t drop = 0;
      while (state.idle_pinned > idle_limit && drop < idle.size()) {
        state.idle_pinned -= idle[drop]->capacity;
        evicted.push_back(std::move(idle[drop]));
        ++drop;
      }
      idle.erase(idle.begin(), idle.begin() + static_cast<std::ptrdiff_t>(drop));
    }
  }
  // The slot destructors call CUDA on the slot's device.
  int current = 0;
  bool have_current = cudaGetDevice(&current) == cudaSuccess;
  for (auto& slot : evicted) {
    if (have_current && slot->device != current) cudaSetDevice(slot->device);
    slot.reset();
  }
  if (have_current && !evicted.empty()) cudaSetDevice(current);
}

std::vector<cudaStream_t> DevicePool::acquire_streams(int device, std::size_t count) {
  auto& state = impl();
  std::vector<cudaStream_t> streams;
  {
    std::lock_guard lock(state.mutex);
    auto& idle = state.devices[device].streams;
    while (streams.size() < count && !idle.empty()) {
      streams.push_back(idle.back());
      idle.pop_back();
    }
  }
  while (streams.size() < count) {
    cudaStream_t stream = nullptr;
    // Non-blocking: the legacy default stream, which other code in the process may use, does not
    // serialize with them.
    cudaError_t status = cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
    if (status != cudaSuccess) {
      release_streams(device, std::move(streams));
      throw cuda_error(status, "cudaStreamCreateWithFlags");
    }
    streams.push_back(stream);
  }
  return streams;
}

void DevicePool::release_streams(int device, std::vector<cudaStream_t> streams) {
  auto& state = impl();
  std::lock_guard lock(state.mutex);
  auto& idle = state.devices[device].streams;
  idle.insert(idle.end(), streams.begin(), streams.end());
}

void DevicePool::trim() { release_slots({}, 0); }

std::size_t DevicePool::idle_pinned_bytes() const {
  auto& state = impl();
  std::lock_guard lock(state.mutex);
  return state.idle_pinned;
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

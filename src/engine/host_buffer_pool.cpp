#include "engine/host_buffer_pool.hpp"

#include <sys/mman.h>

#include <cstdlib>
#include <limits>
#include <mutex>
#include <new>
#include <utility>
#include <vector>

namespace zarrdirect {
namespace {

constexpr std::size_t kPage = 4096;
constexpr std::size_t kHugePage = std::size_t{2} << 20;
// Buffers kept for reuse, in bytes; beyond this, returned buffers are freed.
constexpr std::size_t kPoolLimit = std::size_t{1} << 30;

struct Pool {
  std::mutex mutex;
  std::vector<std::pair<std::byte*, std::size_t>> free;
  std::size_t pooled_bytes = 0;

  ~Pool() {
    for (auto& [data, capacity] : free) std::free(data);
  }
};

Pool& pool() {
  static Pool instance;
  return instance;
}

void release(std::byte* data, std::size_t capacity) {
  if (!data) return;
  Pool& p = pool();
  std::lock_guard lock(p.mutex);
  if (p.pooled_bytes + capacity > kPoolLimit) {
    std::free(data);
    return;
  }
  p.free.emplace_back(data, capacity);
  p.pooled_bytes += capacity;
}

}  // namespace

HostBuffer::HostBuffer(HostBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), capacity_(std::exchange(other.capacity_, 0)) {}

HostBuffer& HostBuffer::operator=(HostBuffer&& other) noexcept {
  if (this != &other) {
    release(data_, capacity_);
    data_ = std::exchange(other.data_, nullptr);
    capacity_ = std::exchange(other.capacity_, 0);
  }
  return *this;
}

HostBuffer::~HostBuffer() { release(data_, capacity_); }

HostBuffer acquire_host_buffer(std::size_t nbytes) {
  Pool& p = pool();
  {
    std::lock_guard lock(p.mutex);
    // The smallest pooled buffer that fits.
    std::size_t best = p.free.size();
    for (std::size_t i = 0; i < p.free.size(); ++i)
      if (p.free[i].second >= nbytes && (best == p.free.size() || p.free[i].second < p.free[best].second)) best = i;
    if (best != p.free.size()) {
      auto [data, capacity] = p.free[best];
      p.free.erase(p.free.begin() + static_cast<std::ptrdiff_t>(best));
      p.pooled_bytes -= capacity;
      return HostBuffer(data, capacity);
    }
  }
  std::size_t alignment = nbytes >= kHugePage ? kHugePage : kPage;
  // Rounding up must not wrap to a small capacity (a buffer smaller than asked for).
  if (nbytes > std::numeric_limits<std::size_t>::max() - alignment) throw std::bad_alloc();
  std::size_t capacity = (std::max<std::size_t>(nbytes, 1) + alignment - 1) / alignment * alignment;
  auto* data = static_cast<std::byte*>(std::aligned_alloc(alignment, capacity));
  if (!data) throw std::bad_alloc();
  if (alignment == kHugePage) ::madvise(data, capacity, MADV_HUGEPAGE);
  return HostBuffer(data, capacity);
}

}  // namespace zarrdirect

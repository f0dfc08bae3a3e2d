#include "engine/result_buffer_pool.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>

#include "zarrdirect/error.hpp"

namespace zarrdirect {
namespace {

constexpr std::size_t kPage = 4096;
constexpr std::size_t kHugePage = std::size_t{2} << 20;
constexpr std::size_t kDefaultLimit = std::size_t{2} << 30;

std::size_t rounded_capacity(std::size_t nbytes) {
  const std::size_t alignment = nbytes >= kHugePage ? kHugePage : kPage;
  if (nbytes > std::numeric_limits<std::size_t>::max() - alignment)
    throw std::length_error("result buffer size overflows when rounded up to pages");
  return (std::max<std::size_t>(nbytes, 1) + alignment - 1) / alignment * alignment;
}

void* allocate(std::size_t capacity) {
  const std::size_t alignment = capacity >= kHugePage ? kHugePage : kPage;
  void* data = std::aligned_alloc(alignment, capacity);
  if (data && alignment == kHugePage) ::madvise(data, capacity, MADV_HUGEPAGE);
  return data;
}

std::size_t default_idle_limit() {
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page_size = ::sysconf(_SC_PAGESIZE);
  std::size_t limit = kDefaultLimit;
  if (pages > 0 && page_size > 0)
    limit = std::min<std::size_t>(limit, static_cast<std::size_t>(pages) / 16 * static_cast<std::size_t>(page_size));
  return limit;
}

// ZARRDIRECT_RESULT_POOL_MB in bytes, or the default when unset.
std::size_t idle_limit_from_environment() {
  const char* text = std::getenv("ZARRDIRECT_RESULT_POOL_MB");
  if (!text || !*text) return default_idle_limit();
  std::size_t mib = 0;
  const auto [end, ec] = std::from_chars(text, text + std::strlen(text), mib);
  if (ec != std::errc() || *end != '\0' || mib > (std::numeric_limits<std::size_t>::max() >> 20))
    throw Error(ErrorKind::invalid_argument,
                fmt::format("environment variable ZARRDIRECT_RESULT_POOL_MB=\"{}\" is not a number of MiB", text));
  return mib << 20;
}

}  // namespace

ResultBufferPool::~ResultBufferPool() { trim(); }

std::shared_ptr<void> ResultBufferPool::acquire(std::size_t nbytes) {
  const std::size_t capacity = rounded_capacity(nbytes);
  void* data = nullptr;
  std::size_t found = 0;
  if (capacity >= kHugePage) {
    std::lock_guard lock(mutex_);
    // The most recently returned idle buffer that fits without wasting more than a quarter.
    for (std::size_t i = idle_.size(); i-- > 0;) {
      if (idle_[i].capacity >= capacity && idle_[i].capacity - capacity <= capacity / 4) {
        data = idle_[i].data;
        found = idle_[i].capacity;
        idle_bytes_ -= found;
        idle_.erase(idle_.begin() + static_cast<std::ptrdiff_t>(i));
        ++reuses_;
        break;
      }
    }
  }
  if (!data) {
    data = allocate(capacity);
    found = capacity;
    if (!data) return nullptr;
  }
  if (found < kHugePage) return std::shared_ptr<void>(data, [](void* p) { std::free(p); });
  return std::shared_ptr<void>(data, [this, found](void* p) { give_back(p, found); });
}

void ResultBufferPool::give_back(void* data, std::size_t capacity) {
  {
    std::lock_guard lock(mutex_);
    if (capacity <= idle_limit_) {
      // Room for it: the oldest idle buffers go first (the recent sizes are the likely next ones).
      while (idle_bytes_ + capacity > idle_limit_ && !idle_.empty()) {
        std::free(idle_.front().data);
        idle_bytes_ -= idle_.front().capacity;
        idle_.erase(idle_.begin());
      }
      idle_.push_back({data, capacity});
      idle_bytes_ += capacity;
      return;
    }
  }
  std::free(data);
}

void ResultBufferPool::trim() {
  std::vector<Idle> freed;
  {
    std::lock_guard lock(mutex_);
    freed.swap(idle_);
    idle_bytes_ = 0;
  }
  for (const Idle& buffer : freed) std::free(buffer.data);
}

std::size_t ResultBufferPool::idle_bytes() const {
  std::lock_guard lock(mutex_);
  return idle_bytes_;
}

std::size_t ResultBufferPool::idle_buffers() const {
  std::lock_guard lock(mutex_);
  return idle_.size();
}

std::size_t ResultBufferPool::reuses() const {
  std::lock_guard lock(mutex_);
  return reuses_;
}

ResultBufferPool& result_buffer_pool() {
  // Never destroyed: NumPy arrays over result buffers may be dropped after static destructors ran.
  static ResultBufferPool* pool = new ResultBufferPool(idle_limit_from_environment());
  return *pool;
}

void trim_result_buffers() { result_buffer_pool().trim(); }

}  // namespace zarrdirect

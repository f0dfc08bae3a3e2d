// The public view of the pinned staging pool (zarrdirect/system.hpp) in CUDA builds.
#include "cuda/device_pool.hpp"
#include "engine/result_buffer_pool.hpp"
#include "zarrdirect/system.hpp"

namespace zarrdirect {

PinnedPoolStats pinned_pool_stats() {
  const cuda::DevicePoolStats stats = cuda::DevicePool::instance().stats();
  return {stats.budget_bytes, stats.in_use_bytes, stats.idle_bytes, stats.allocations, stats.frees};
}

void trim_pinned_pool() {
  cuda::DevicePool::instance().trim();
  trim_result_buffers();
}

}  // namespace zarrdirect

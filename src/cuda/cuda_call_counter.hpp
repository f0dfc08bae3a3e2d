// Counting the CUDA runtime calls a device read makes (ReadStats::cuda_calls), so that "how many
// calls per chunk" is measured rather than counted from the code. Each call site in the device
// read path adds one line, `calls.add(CudaCall::...)`, next to its call.
//
// Safe from the read's worker threads at once (relaxed atomics: a count is read after the
// workers have joined). No CUDA here: the counting is tested without a GPU.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>

#include "zarrdirect/array.hpp"

namespace zarrdirect::cuda {

enum class CudaCall : std::size_t {
  copy,          // cudaMemcpyAsync
  memset,        // cudaMemsetAsync
  launch,        // a kernel launch
  event_record,  // cudaEventRecord
  stream_wait,   // cudaStreamWaitEvent
  sync,          // cudaStreamSynchronize, cudaEventSynchronize
  count_,        // the number of kinds, not a kind
};

class CudaCallCounter {
 public:
  void add(CudaCall kind) { counts_[static_cast<std::size_t>(kind)].fetch_add(1, std::memory_order_relaxed); }
  std::uint64_t count(CudaCall kind) const {
    return counts_[static_cast<std::size_t>(kind)].load(std::memory_order_relaxed);
  }
  // The counts so far, as the public ReadStats has them.
  CudaCallStats stats() const;

 private:
  std::array<std::atomic<std::uint64_t>, static_cast<std::size_t>(CudaCall::count_)> counts_{};
};

}  // namespace zarrdirect::cuda

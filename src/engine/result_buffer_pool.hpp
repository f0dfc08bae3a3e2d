// Host memory for read results, kept for the next read of the same size.
//
// A read into host memory returns a new buffer (NDArray), which the caller drops when done. Each
// new large buffer costs the kernel zeroing every page on first touch, and asking for huge pages
// (which page-cache reads need, array.cpp) can make it compact memory as it faults: measured on
// the 2-core development VM, 1 GiB sharded zstd reads gave 0.42-0.55 GB/s into a fresh result
// against 1.16-1.30 into a reused one, raw 4 MiB chunks 2.5-3.5 against 3.9-4.7. Training loops,
// Dask tasks and benchmarks read the same shapes again and again, so a result buffer that comes
// back (its last reference dropped) is kept idle for a read of about its size, within a bound on
// what the process keeps idle.
//
// The bound: ZARRDIRECT_RESULT_POOL_MB, read once (0 keeps nothing); by default 2 GiB, at most a
// sixteenth of physical memory. Buffers under 2 MiB are never kept (malloc serves those well).
// trim_result_buffers() frees every idle buffer.
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <vector>

namespace zarrdirect {

class ResultBufferPool {
 public:
  // A pool keeping at most `idle_limit` idle bytes.
  explicit ResultBufferPool(std::size_t idle_limit) : idle_limit_(idle_limit) {}
  ~ResultBufferPool();
  ResultBufferPool(const ResultBufferPool&) = delete;
  ResultBufferPool& operator=(const ResultBufferPool&) = delete;

  // A page-aligned buffer of at least `nbytes` (huge pages asked for from 2 MiB on): an idle one
  // of at most a quarter more than it needs, else a new one. Its contents are undefined. Dropping
  // the last reference returns it to the pool (or frees it beyond the bound). The pool must
  // outlive its buffers (the process-wide one is never destroyed). Returns null when the memory
  // cannot be had; throws std::length_error for a size that cannot be rounded up to pages.
  std::shared_ptr<void> acquire(std::size_t nbytes);

  // Frees every idle buffer.
  void trim();

  std::size_t idle_bytes() const;
  std::size_t idle_buffers() const;
  // Buffers handed out that were idle ones (for tests and statistics).
  std::size_t reuses() const;

 private:
  struct Idle {
    void* data;
    std::size_t capacity;
  };
  void give_back(void* data, std::size_t capacity);

  const std::size_t idle_limit_;
  mutable std::mutex mutex_;
  std::vector<Idle> idle_;  // most recently returned last
  std::size_t idle_bytes_ = 0;
  std::size_t reuses_ = 0;
};

// The process's pool (bound from ZARRDIRECT_RESULT_POOL_MB, see above).
ResultBufferPool& result_buffer_pool();

// Frees the process pool's idle buffers (zarrdirect::trim_pinned_pool() calls it too).
void trim_result_buffers();

}  // namespace zarrdirect

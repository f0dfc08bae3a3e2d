// A read worker's decode buffers, kept by its thread from one read to the next.
//
// Each worker of a read needs a buffer for a chunk's stored bytes and the codec chain's
// intermediate buffers. Freed at the end of every read, they are allocated and faulted in again
// by the next: glibc serves buffers this large with mmap once MALLOC_TRIM_THRESHOLD_ is set (as
// dask.distributed sets it for its workers), and munmaps them on free, so each read paid a page
// fault per 4 KiB of them (measured: 22,900 minor faults per GiB read, bench/scratch_reuse_bench.py).
// The reader's threads persist (worker_pool.hpp), so each thread keeps one set of buffers for
// its next read, up to a byte cap beyond which they are released. A thread that exits leaves its
// set for the next thread's first lease (up to 8 sets wait so): Python runs each read on a new
// helper thread, which is the read's worker 0. Memory stays bounded at the cap per thread that
// reads, plus 8 sets.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "codec/codec.hpp"
#include "util/default_init_allocator.hpp"

namespace zarrdirect {

// One worker's buffers. Their capacity only grows while a thread keeps them.
struct WorkerScratch {
  UninitializedBytes stored;  // a chunk's (or a run of inner chunks') stored bytes, never zeroed
  codec::Scratch codec;       // the codec chain's intermediate buffers (CodecChain::decode)
  // Remote reads: the stored bytes of each chunk of a batch fetched at once, one buffer each.
  std::vector<UninitializedBytes> slots;

  // Bytes the buffers hold (their capacities).
  std::size_t capacity() const;
};

// The calling thread's kept WorkerScratch, lent for the life of the lease (on a thread's first
// lease, one an exited thread left; a new, empty one when there is none, or when the thread has
// lent its own to an enclosing lease). When the lease ends, the
// scratch goes back to the thread if it holds at most worker_scratch_cap() bytes (a thread keeps
// one: of a nested lease's and its own, the larger); otherwise it is freed. Not copyable or movable: use it on the thread that made it.
class WorkerScratchLease {
 public:
  WorkerScratchLease();
  ~WorkerScratchLease();
  WorkerScratchLease(const WorkerScratchLease&) = delete;
  WorkerScratchLease& operator=(const WorkerScratchLease&) = delete;

  WorkerScratch& get() { return *scratch_; }

 private:
  std::unique_ptr<WorkerScratch> scratch_;
};

// Bytes of scratch one thread keeps between reads, process-wide (default 64 MiB: a worker's
// buffers for chunks of up to about 32 MiB; 0 keeps nothing). A change applies to leases ending
// afterwards.
std::size_t worker_scratch_cap();
void set_worker_scratch_cap(std::size_t bytes);

// Bytes the calling thread keeps now (for tests and diagnostics).
std::size_t worker_scratch_kept_bytes();

}  // namespace zarrdirect

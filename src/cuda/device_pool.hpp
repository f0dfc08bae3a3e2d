// Process-wide cache of the expensive CUDA resources a device read needs: pinned staging
// buffers (cudaHostAlloc costs milliseconds per MiB), their device scratch and events, streams
// and events of the reads themselves.
//
// Reads take resources out and give them back when they finish, so concurrent reads always hold
// disjoint buffers. Pinned bytes in use and idle together stay within one budget for the whole
// process (Settings::pinned_pool_bytes; the rules are in pinned_policy.hpp): a read gets fewer
// pinned slots than it asks for, even none, when the budget is spent, and stages the rest in
// ordinary memory (acquire_staging). The pool lives until the process exits and is never
// destroyed: freeing pinned memory from static destructors would race the CUDA runtime's own
// teardown, and the driver reclaims it all at exit.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace zarrdirect::cuda {

// Host memory a worker reads or decodes a chunk into, the device scratch the chunk is uploaded
// to when it does not land in the destination in one piece, and an event recorded after the last
// GPU work that reads them.
struct StagingSlot {
  StagingSlot(int device, std::size_t capacity, bool pinned);  // allocates host memory and the event
  ~StagingSlot();                                              // frees them (and the scratch)
  StagingSlot(const StagingSlot&) = delete;
  StagingSlot& operator=(const StagingSlot&) = delete;

  // Allocates the device scratch (capacity bytes) the first time it is needed.
  std::byte* scratch();

  const int device;
  const std::size_t capacity;
  const bool pinned;                 // cudaHostAlloc'ed; else ordinary page-aligned memory
  std::byte* host = nullptr;         // page-aligned, capacity bytes
  void* pinned_allocation = nullptr; // what cudaHostAlloc returned (host is inside it)
  std::byte* device_scratch = nullptr;
  cudaEvent_t done = nullptr;
  bool in_flight = false;            // `done` was recorded after the slot's last use
  bool gds_registered = false;       // device_scratch is registered with cuFile
};

using SlotPtr = std::unique_ptr<StagingSlot>;

// Device memory a read uses for its own GPU work (GPU decoding's output and scratch), kept for the
// next read: cudaMalloc and above all cudaFree (which waits for the whole device) cost more per
// read than a batch of decoding.
struct DeviceBlock {
  DeviceBlock(int device, std::size_t capacity);  // cudaMalloc on `device`, which must be current
  ~DeviceBlock();                                 // cudaFree
  DeviceBlock(const DeviceBlock&) = delete;
  DeviceBlock& operator=(const DeviceBlock&) = delete;

  const int device;
  const std::size_t capacity;
  std::byte* data = nullptr;
};

using DeviceBlockPtr = std::unique_ptr<DeviceBlock>;

// What the pool holds now and has done so far (zarrdirect::pinned_pool_stats()).
struct DevicePoolStats {
  std::size_t budget_bytes = 0;  // the budget the last acquire or release ran under (0: none yet)
  std::size_t in_use_bytes = 0;  // pinned slot bytes handed out to reads
  std::size_t idle_bytes = 0;    // pinned slot bytes kept for the next reads
  std::uint64_t allocations = 0; // pinned slots allocated (cudaHostAlloc) since the process started
  std::uint64_t frees = 0;       // pinned slots freed (cudaFreeHost)
  std::size_t idle_device_bytes = 0;       // device blocks kept for the next reads
  std::uint64_t device_allocations = 0;    // device blocks allocated (cudaMalloc)
};

// ZARRDIRECT_STREAM_PRIORITY: "normal" (or unset: nullptr or empty) gives the reader's streams
// the default priority, "high" the device's greatest, so that a read's copies and placement
// kernels are scheduled ahead of other work queued on the GPU (a training step's kernels) as
// soon as a multiprocessor frees up. Returns true for "high"; anything else is an
// Error(invalid_argument) naming the variable and the value. Opt-in: under a training step's
// matmuls it did not speed the PatchDataset up (session 21, docs/TRAINING.md).
bool stream_priority_from_text(const char* text);

class DevicePool {
 public:
  static DevicePool& instance();

  // Up to `want` pinned slots of at least `capacity` bytes for `device` (which must be current),
  // within `budget` pinned bytes for the process (pinned_policy.hpp): fewer, even none, when the
  // budget is spent; `at_least` of them ahead of the fair share where they fit. `allocated`, when
  // given, is increased by the slots that had to be allocated (not reused).
  std::vector<SlotPtr> acquire_slots(int device, std::size_t capacity, std::size_t want, std::size_t budget,
                                     std::size_t at_least = 0, std::size_t* allocated = nullptr);
  // Exactly `count` slots: pinned ones as acquire_slots gives them (at_least = count), ordinary
  // (pageable) memory for the rest, after the pinned ones.
  std::vector<SlotPtr> acquire_staging(int device, std::size_t capacity, std::size_t count, std::size_t budget,
                                       std::size_t* allocated = nullptr);
  // Returns slots whose GPU work has completed (ordinary ones are freed). Idle pinned slots are
  // kept while in use + idle fits `budget`; the oldest are freed beyond it.
  void release_slots(std::vector<SlotPtr> slots, std::size_t budget);
  // Slots that can no longer be returned (the GPU failed while their work was queued): they are
  // leaked, and stop counting as in use.
  void forget_slots(std::vector<SlotPtr> slots);

  // A block of at least `bytes` of `device` (which must be current): an idle one of at most twice
  // that size, else a new one of exactly `bytes`.
  DeviceBlockPtr acquire_device_block(int device, std::size_t bytes);
  // Returns blocks whose GPU work has completed. Idle blocks of a device are kept up to
  // idle_device_limit(device) bytes, the oldest freed beyond.
  void release_device_blocks(std::vector<DeviceBlockPtr> blocks);
  // Idle device bytes kept per device: 2 GiB, at most 1/16 of the device's memory.
  static std::size_t idle_device_limit(int device);

  // An event of `device` (which must be current), timing disabled; reused across reads.
  cudaEvent_t acquire_event(int device);
  // Returns an event whose recorded work has completed (or that is no longer waited on).
  void release_event(int device, cudaEvent_t event);

  // `count` non-blocking streams of `device` (which must be current), created at the priority
  // ZARRDIRECT_STREAM_PRIORITY asks for (stream_priority_from_text; read once per process).
  std::vector<cudaStream_t> acquire_streams(int device, std::size_t count);
  // Returns idle streams (nothing pending on them).
  void release_streams(int device, std::vector<cudaStream_t> streams);

  // Frees every idle slot and device block (streams and events are kept: they are cheap and hold
  // no memory worth having).
  void trim();

  // Idle pinned bytes, for tests.
  std::size_t idle_pinned_bytes() const;
  DevicePoolStats stats() const;

 private:
  DevicePool() = default;
  struct Impl;
  Impl& impl() const;
};

// Makes `device` current on the calling thread if it is not (reader threads start on device 0).
void use_device(int device);

// Restores the calling thread's current device when it goes out of scope: a read or write on
// another device's memory switches to that device for its work, and the caller should not find
// itself switched afterwards (also when the work throws).
class DeviceRestorer {
 public:
  DeviceRestorer();
  ~DeviceRestorer();
  DeviceRestorer(const DeviceRestorer&) = delete;
  DeviceRestorer& operator=(const DeviceRestorer&) = delete;

 private:
  int device_ = 0;
  bool have_ = false;
};

}  // namespace zarrdirect::cuda

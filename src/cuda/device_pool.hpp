// Process-wide cache of the expensive CUDA resources a device read needs: pinned staging
// buffers (cudaHostAlloc costs milliseconds per MiB), their device scratch and events, and
// streams.
//
// Reads take resources out and give them back when they finish, so concurrent reads always hold
// disjoint buffers. Idle staging is kept up to the staging budget of the read that returned it
// and is freed, oldest first, beyond that or when a read needs buffers of another size. The
// pool lives until the process exits and is never destroyed: freeing pinned memory from static
// destructors would race the CUDA runtime's own teardown, and the driver reclaims it all at exit.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
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

class DevicePool {
 public:
  static DevicePool& instance();

  // `count` pinned slots of at least `capacity` bytes for `device` (which must be current).
  std::vector<SlotPtr> acquire_slots(int device, std::size_t capacity, std::size_t count);
  // Returns slots whose GPU work has completed. Idle pinned bytes beyond `idle_limit` are freed.
  void release_slots(std::vector<SlotPtr> slots, std::size_t idle_limit);

  // `count` non-blocking streams of `device` (which must be current).
  std::vector<cudaStream_t> acquire_streams(int device, std::size_t count);
  // Returns idle streams (nothing pending on them).
  void release_streams(int device, std::vector<cudaStream_t> streams);

  // Frees every idle slot (streams are kept: they are cheap and hold no memory worth having).
  void trim();

  // Idle pinned bytes, for tests.
  std::size_t idle_pinned_bytes() const;

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

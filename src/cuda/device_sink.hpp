// The sink for device destinations ("staged" I/O path): workers read or decode each chunk into
// host staging, and the sink uploads it on the worker's own stream, straight into the
// destination when the box lands there in one run, else into device scratch followed by the
// scatter kernel.
//
// Per worker: one non-blocking stream and a ring of staging slots (device_pool.hpp). A slot is
// handed out again only after the event recorded behind its last upload has completed, so the
// reader can fill slot k+1 while slot k is still on its way to the GPU.
//
// Slots per worker: staging_bytes / (workers * slot bytes), at least 1, at most
// slots_per_thread. When even one pinned slot per worker would exceed staging_bytes (huge
// chunks, many workers), only staging_bytes / slot bytes workers get a pinned slot and the others
// stage in ordinary memory (cudaMemcpyAsync then copies it synchronously through the driver's
// own buffers): pinned memory never exceeds the budget, and no worker ever waits for another's.
// The process-wide pool may grant fewer still while other reads hold its pinned memory
// (pinned_policy.hpp): the slots granted are spread over the workers, one each first, and
// workers without one stage in ordinary memory, as above. A read never waits for the pool.
//
// Batched placement (DeviceSinkOptions::batch, for chunks of at most a quarter of a batch):
// instead of a ring of chunk slots, each worker has two batch buffers of
// min(kMaxBatchBytes, staging_bytes / (2 * workers)) pinned bytes. staging() hands out the next
// page-aligned piece of the worker's current batch, place() and fill() only add an entry to the
// batch's descriptor table (batch_table.hpp), and when the batch is full (or at finish()) its
// chunks and table go to the device in one cudaMemcpyAsync and one kernel launch places every
// box: three CUDA calls per batch instead of about three per chunk. The worker fills the other
// buffer meanwhile, waiting only if that one's last batch is still on its way. Boxes a table
// entry cannot describe are placed alone from the uploaded batch, fills larger than a batch are
// written alone, and larger chunks keep the ring of slots above.
#pragma once

#include <cuda_runtime_api.h>

#include <array>
#include <cstddef>
#include <functional>
#include <optional>
#include <span>
#include <vector>

#include "cuda/batch_table.hpp"
#include "cuda/cuda_call_counter.hpp"
#include "cuda/device_pool.hpp"
#include "engine/chunk_sink.hpp"
#include "util/phase_trace.hpp"

namespace zarrdirect::cuda {

struct DeviceSinkOptions {
  int device = 0;                       // the destination's device
  std::size_t slot_bytes = 0;           // decoded bytes of the chunks staged (inner chunks when sharded)
  std::size_t staging_bytes = 256u << 20;
  std::size_t pinned_pool_bytes = 0;    // the process's pinned budget (Settings); 0: its default
  unsigned slots_per_thread = 2;
  cudaStream_t caller_stream = nullptr; // work queued on it before the read comes first; null:
                                        // the legacy default stream's work comes first
  bool host_waits_for_caller = false;   // also wait on the host (cuFile writes outside streams)
  bool batch = false;                   // place small chunks in batches (see above); only for
                                        // sinks that use staging/place/fill alone
};

// The process's pinned budget a read with these options runs under (pinned_pool_bytes, or the
// Settings default when 0).
std::size_t pool_budget(const DeviceSinkOptions& options);

// Pinned bytes of one batch buffer at most: large enough that a batch costs far less than its
// transfer, small enough that transfers of one worker overlap the filling of the next.
inline constexpr std::size_t kMaxBatchBytes = std::size_t{8} << 20;

class DeviceSink final : public ChunkSink {
 public:
  DeviceSink(const DestinationLayout& destination, std::span<const std::byte> fill_value,
             const DeviceSinkOptions& options);
  ~DeviceSink() override;
  DeviceSink(const DeviceSink&) = delete;
  DeviceSink& operator=(const DeviceSink&) = delete;

  std::string_view name() const override { return "staged"; }
  void start(unsigned workers, std::size_t max_chunk_bytes) override;
  std::span<std::byte> staging(unsigned worker, std::size_t nbytes) override;
  void place(unsigned worker, std::span<const std::byte> chunk, const ChunkBox& box) override;
  void fill(unsigned worker, const ChunkBox& box) override;
  void finish() override;

  // For the GDS sink: the worker's next slot, idle (its last GPU work done) and with its device
  // scratch allocated, for a chunk to be read into the scratch outside any stream.
  StagingSlot& idle_slot(unsigned worker);
  // Scatters `box` from `src_origin` (device memory: the box's first element, followed by the
  // chunk's C-order elements up to its last) on the worker's stream, and records the slot's event.
  void scatter_from_device(unsigned worker, StagingSlot& slot, const std::byte* src_origin, const ChunkBox& box);
  // For selection reads (selection_sink.cpp): uploads `bytes` (in this worker's staging slot)
  // to the slot's device scratch and calls launch(scratch, stream) on the worker's stream, then
  // records the slot's event. Without bytes, only calls launch(nullptr, stream) (fills).
  void launch_on_worker(unsigned worker, std::span<const std::byte> bytes,
                        const std::function<cudaError_t(const std::byte*, cudaStream_t)>& launch);
  const DestinationLayout& destination() const { return destination_; }
  int device() const { return options_.device; }

  // Pinned staging slots and workers staging in ordinary memory after start(), for tests.
  std::size_t pinned_slots() const;
  // Pinned slots the pool allocated for this read (ReadStats::pinned_allocations); 0 when its
  // idle slots served.
  std::size_t pinned_allocations() const { return pinned_allocations_; }
  // Whether start() chose batched placement, and the batches uploaded so far, for tests.
  bool batching() const { return batch_bytes_ > 0; }
  std::size_t batches_uploaded() const;
  // The CUDA calls this sink has made (ReadStats::cuda_calls).
  CudaCallStats cuda_calls() const { return calls_.stats(); }

 private:
  struct alignas(64) Worker {
    cudaStream_t stream = nullptr;
    std::vector<SlotPtr> ring;
    std::size_t next = 0;
    StagingSlot* current = nullptr;  // handed out by staging(), not yet placed
    // Batched placement: two buffers, the one being filled is batch[active].
    std::array<SlotPtr, 2> batch;
    std::size_t active = 0;
    std::optional<BatchTable> table;
    std::optional<std::size_t> reserved;  // offset of the chunk staging() handed out of the batch
    std::size_t batches = 0;
  };

  StagingSlot& next_slot(Worker& worker);
  void grow(Worker& worker, std::size_t nbytes);
  // place() for a chunk staged in the worker's batch.
  void place_in_batch(Worker& worker, std::span<const std::byte> chunk, const ChunkBox& box);
  // Uploads the worker's batch and launches its placement, then `alone` (the uploaded batch on
  // the device) for a box placed by itself, and makes the other buffer current.
  void flush(Worker& worker, const std::function<void(const std::byte*)>& alone = {});
  // Returns slots and streams to the pool; `broken`: the GPU failed, keep nothing for reuse.
  void release(bool broken);

  DestinationLayout destination_;
  std::vector<std::byte> fill_value_;
  bool fill_uniform_ = true;  // every byte of the fill value is the same: memset can write it
  DeviceSinkOptions options_;
  std::vector<Worker> workers_;
  std::size_t slot_bytes_ = 0;
  std::size_t batch_bytes_ = 0;  // 0: no batching
  std::size_t pool_budget_ = 0;
  std::size_t pinned_allocations_ = 0;
  cudaEvent_t ready_ = nullptr;  // recorded on the caller's (or legacy) stream before the read
  bool synchronized_ = false;
  CudaCallCounter calls_;
  // ZARRDIRECT_TRACE=1: the read's start, first chunk placed, end of reading, copies done, end;
  // printed at finish() (the CPU-decode path's timeline, beside GpuDecodeSink's).
  PhaseTrace trace_{"staged"};
};

}  // namespace zarrdirect::cuda

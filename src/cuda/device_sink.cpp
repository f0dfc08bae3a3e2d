#include "cuda/device_sink.hpp"

#include <algorithm>
#include <cstdint>
#include <exception>

#include <fmt/format.h>

#include "cuda/batch_kernels.cuh"
#include "cuda/copy_plan.hpp"
#include "cuda/cuda_check.hpp"
#include "cuda/kernels.cuh"
#include "cuda/pinned_policy.hpp"
#include "zarrdirect/settings.hpp"

namespace zarrdirect::cuda {
namespace {

constexpr std::size_t kPage = 4096;
std::size_t round_to_page(std::size_t n) { return (std::max<std::size_t>(n, 1) + kPage - 1) / kPage * kPage; }

std::uintptr_t address(const void* p) { return reinterpret_cast<std::uintptr_t>(p); }

}  // namespace

std::size_t pool_budget(const DeviceSinkOptions& options) {
  return options.pinned_pool_bytes ? options.pinned_pool_bytes : Settings{}.effective_pinned_pool();
}

DeviceSink::DeviceSink(const DestinationLayout& destination, std::span<const std::byte> fill_value,
                       const DeviceSinkOptions& options)
    : destination_(destination), fill_value_(fill_value.begin(), fill_value.end()), options_(options) {
  if (fill_value_.size() != destination_.element_size)
    throw Error(ErrorKind::invalid_argument,
                fmt::format("device read: fill value of {} bytes for {} byte elements", fill_value_.size(),
                            destination_.element_size));
  fill_uniform_ = std::all_of(fill_value_.begin(), fill_value_.end(), [&](std::byte b) { return b == fill_value_[0]; });
  pool_budget_ = pool_budget(options_);
}

DeviceSink::~DeviceSink() {
  bool broken = false;
  try {
    use_device(options_.device);
  } catch (const Error&) {
    broken = true;
  }
  if (!synchronized_ && !broken) {
    // start() or a worker failed before finish(): let queued work drain before anything is reused.
    for (auto& worker : workers_)
      if (worker.stream && cudaStreamSynchronize(worker.stream) != cudaSuccess) broken = true;
  }
  release(broken);
  (void)cudaGetLastError();
}

void DeviceSink::start(unsigned workers, std::size_t max_chunk_bytes) {
  trace_.mark("start", workers);
  use_device(options_.device);
  workers_ = std::vector<Worker>(std::max(workers, 1u));
  const std::size_t count = workers_.size();
  slot_bytes_ = round_to_page(options_.slot_bytes ? options_.slot_bytes : max_chunk_bytes);

  // Batched placement when a batch buffer within the budget holds at least four chunks.
  batch_bytes_ = 0;
  if (options_.batch) {
    const std::size_t bytes = std::min(kMaxBatchBytes, options_.staging_bytes / (2 * count)) / kPage * kPage;
    if (bytes >= 4 * slot_bytes_) batch_bytes_ = bytes;
  }

  auto& pool = DevicePool::instance();
  auto streams = pool.acquire_streams(options_.device, count);
  for (std::size_t w = 0; w < count; ++w) workers_[w].stream = streams[w];

  // Order the read after the caller's earlier work: an event on the caller's stream (or on the
  // legacy default stream, which waits for every blocking stream) that every worker stream waits
  // for. The GDS sink writes with cuFile, outside any stream, so it waits on the host as well.
  cudaStream_t upstream = options_.caller_stream ? options_.caller_stream : cudaStreamLegacy;
  ready_ = pool.acquire_event(options_.device);
  calls_.add(CudaCall::event_record);
  check_cuda(cudaEventRecord(ready_, upstream), "cudaEventRecord (caller's stream)");
  for (auto& worker : workers_) {
    calls_.add(CudaCall::stream_wait);
    check_cuda(cudaStreamWaitEvent(worker.stream, ready_, 0), "cudaStreamWaitEvent");
  }
  if (options_.host_waits_for_caller) {
    calls_.add(CudaCall::sync);
    check_cuda(cudaEventSynchronize(ready_), "cudaEventSynchronize (caller's stream)");
  }

  if (batch_bytes_ > 0) {
    // Two batch buffers per worker, within the budget by construction; no ring (see the header).
    // The pool may grant fewer pinned ones (pinned_policy.hpp): the rest are ordinary memory.
    auto buffers = pool.acquire_staging(options_.device, batch_bytes_, 2 * count, pool_budget_, &pinned_allocations_);
    for (std::size_t w = 0; w < count; ++w) {
      workers_[w].batch[0] = std::move(buffers[2 * w]);
      workers_[w].batch[1] = std::move(buffers[2 * w + 1]);
      workers_[w].table.emplace(batch_bytes_);
    }
    return;
  }

  // Pinned staging within the read's budget (see the header), as far as the pool grants it.
  const std::size_t fit = options_.staging_bytes / slot_bytes_;  // pinned slots the budget holds
  std::size_t want = std::min(fit, count);
  if (fit >= count) want = count * std::clamp<std::size_t>(fit / count, 1, std::max(options_.slots_per_thread, 1u));
  auto pinned = pool.acquire_slots(options_.device, slot_bytes_, want, pool_budget_, std::min(fit, count),
                                   &pinned_allocations_);
  const std::vector<std::size_t> shares = share_slots(pinned.size(), count);
  std::size_t next = 0;
  for (std::size_t w = 0; w < count; ++w) {
    auto& ring = workers_[w].ring;
    for (std::size_t k = 0; k < shares[w]; ++k) ring.push_back(std::move(pinned[next++]));
    if (ring.empty()) ring.push_back(std::make_unique<StagingSlot>(options_.device, slot_bytes_, false));
  }
}

std::size_t DeviceSink::pinned_slots() const {
  std::size_t n = 0;
  for (const auto& worker : workers_)
    for (const auto& slot : worker.ring) n += slot->pinned ? 1 : 0;
  return n;
}

std::size_t DeviceSink::batches_uploaded() const {
  std::size_t n = 0;
  for (const auto& worker : workers_) n += worker.batches;
  return n;
}

StagingSlot& DeviceSink::next_slot(Worker& worker) {
  StagingSlot& slot = *worker.ring[worker.next];
  worker.next = (worker.next + 1) % worker.ring.size();
  return slot;
}

void DeviceSink::grow(Worker& worker, std::size_t nbytes) {
  // Not expected (every chunk of a read has the same decoded size), but correct if it happens:
  // drain this worker's stream and swap its slots for larger ones.
  calls_.add(CudaCall::sync);
  check_cuda(cudaStreamSynchronize(worker.stream), "cudaStreamSynchronize");
  const std::size_t capacity = round_to_page(nbytes);
  std::size_t pinned = 0;
  for (const auto& slot : worker.ring) pinned += slot->pinned ? 1 : 0;
  const std::size_t size = worker.ring.size();
  auto& pool = DevicePool::instance();
  pool.release_slots(std::move(worker.ring), pool_budget_);
  // As many pinned as before where the pool grants them; ordinary memory for the rest.
  worker.ring = pool.acquire_slots(options_.device, capacity, pinned, pool_budget_, pinned, &pinned_allocations_);
  while (worker.ring.size() < size)
    worker.ring.push_back(std::make_unique<StagingSlot>(options_.device, capacity, false));
  worker.next = 0;
  worker.current = nullptr;
}

std::span<std::byte> DeviceSink::staging(unsigned worker_index, std::size_t nbytes) {
  use_device(options_.device);
  Worker& worker = workers_[worker_index];
  worker.reserved.reset();
  worker.current = nullptr;
  if (batch_bytes_ > 0 && nbytes <= batch_bytes_ / 4) {
    auto offset = worker.table->reserve(nbytes);
    if (!offset) {
      flush(worker);
      offset = worker.table->reserve(nbytes);
    }
    if (offset) {
      worker.reserved = offset;
      return {worker.batch[worker.active]->host + *offset, round_to_page(nbytes)};
    }
  }
  // Batching, and a chunk larger than expected: stage it in ordinary memory, as grow() would.
  if (worker.ring.empty())
    worker.ring.push_back(std::make_unique<StagingSlot>(options_.device, round_to_page(nbytes), false));
  if (nbytes > worker.ring.front()->capacity) grow(worker, nbytes);
  StagingSlot& slot = next_slot(worker);
  // A pinned slot's host memory may still be feeding its last upload. Ordinary memory is free
  // again as soon as cudaMemcpyAsync returns, and the scratch is reused in stream order.
  if (slot.in_flight && slot.pinned) {
    calls_.add(CudaCall::sync);
    check_cuda(cudaEventSynchronize(slot.done), "cudaEventSynchronize (staging slot)");
    slot.in_flight = false;
  }
  worker.current = &slot;
  return {slot.host, slot.capacity};
}

void DeviceSink::place(unsigned worker_index, std::span<const std::byte> chunk, const ChunkBox& box) {
  trace_.mark_first("first chunk placed", chunk.size());
  use_device(options_.device);
  Worker& worker = workers_[worker_index];
  if (worker.reserved) return place_in_batch(worker, chunk, box);
  StagingSlot* slot = worker.current;
  worker.current = nullptr;
  if (!slot) throw Error(ErrorKind::invalid_argument, "device sink: place() without staging()");
  if (box.num_elements() == 0) return;
  const ChunkRange range = chunk_range(box, destination_.element_size);
  if (range.first_byte + range.nbytes > chunk.size())
    throw Error(ErrorKind::invalid_argument,
                fmt::format("device sink: box needs {} chunk bytes, the chunk holds {}", range.first_byte + range.nbytes,
                            chunk.size()));
  std::byte* dst = destination_.address_of(box.offset_in_dest);
  const std::byte* src = chunk.data() + range.first_byte;
  // The scratch comes from cudaMalloc (256-byte aligned) and the range is uploaded to its start,
  // so the source origin is aligned for any unit: 0 stands for it.
  const BoxPlan plan = plan_box_copy(box, destination_, 0, address(dst));
  if (plan.contiguous) {
    calls_.add(CudaCall::copy);
    check_cuda(cudaMemcpyAsync(dst, src, range.nbytes, cudaMemcpyDefault, worker.stream),
               "cudaMemcpyAsync (chunk to destination)");
  } else {
    std::byte* scratch = slot->scratch();
    calls_.add(CudaCall::copy);
    check_cuda(cudaMemcpyAsync(scratch, src, range.nbytes, cudaMemcpyDefault, worker.stream),
               "cudaMemcpyAsync (chunk to device scratch)");
    calls_.add(CudaCall::launch);
    check_cuda(launch_copy(plan.plan, scratch, dst, worker.stream), "scatter kernel launch");
  }
  calls_.add(CudaCall::event_record);
  check_cuda(cudaEventRecord(slot->done, worker.stream), "cudaEventRecord (staging slot)");
  slot->in_flight = true;
}

void DeviceSink::place_in_batch(Worker& worker, std::span<const std::byte> chunk, const ChunkBox& box) {
  const std::size_t offset = *worker.reserved;
  worker.reserved.reset();
  const std::byte* host = worker.batch[worker.active]->host;
  if (chunk.data() != host + offset)
    throw Error(ErrorKind::invalid_argument, "device sink: place() of a chunk that is not in the staging handed out");
  if (worker.table->add_copy(offset, chunk.size(), box, destination_)) return;
  // More dims than a table entry holds: upload the batch (this chunk's bytes with it) and
  // scatter this box alone from the device copy.
  const ChunkRange range = chunk_range(box, destination_.element_size);
  const std::size_t source = offset + range.first_byte;
  std::byte* dst = destination_.address_of(box.offset_in_dest);
  // The device copy of the batch starts 256-byte aligned (cudaMalloc): the offset stands for it.
  const BoxPlan plan = plan_box_copy(box, destination_, source, address(dst));
  flush(worker, [&](const std::byte* device) {
    calls_.add(CudaCall::launch);
    check_cuda(launch_copy(plan.plan, device + source, dst, worker.stream), "scatter kernel launch");
  });
}

void DeviceSink::flush(Worker& worker, const std::function<void(const std::byte*)>& alone) {
  BatchTable& table = *worker.table;
  if (table.empty() && !alone) return;
  StagingSlot& slot = *worker.batch[worker.active];
  std::byte* device = slot.scratch();
  table.write_table({slot.host, slot.capacity});
  calls_.add(CudaCall::copy);
  check_cuda(cudaMemcpyAsync(device, slot.host, table.upload_bytes(), cudaMemcpyHostToDevice, worker.stream),
             "cudaMemcpyAsync (batch to device)");
  calls_.add(CudaCall::launch);
  check_cuda(launch_batch(reinterpret_cast<const BatchEntry*>(device + table.table_offset()), table.entries().size(),
                          table.max_units(), device, worker.stream),
             "batch kernel launch");
  if (alone) alone(device);
  calls_.add(CudaCall::event_record);
  check_cuda(cudaEventRecord(slot.done, worker.stream), "cudaEventRecord (batch)");
  slot.in_flight = true;
  ++worker.batches;
  table.clear();
  // The other buffer becomes current once its last batch has left the host.
  worker.active ^= 1;
  StagingSlot& next = *worker.batch[worker.active];
  if (next.in_flight) {
    calls_.add(CudaCall::sync);
    check_cuda(cudaEventSynchronize(next.done), "cudaEventSynchronize (batch)");
    next.in_flight = false;
  }
}

void DeviceSink::fill(unsigned worker_index, const ChunkBox& box) {
  use_device(options_.device);
  Worker& worker = workers_[worker_index];
  if (box.num_elements() == 0) return;
  // Into the batch, unless a chunk staged in it awaits its place() (a flush would upload it
  // before it is read) or the fill is better written alone.
  if (batch_bytes_ > 0 && !worker.reserved) {
    auto added = worker.table->add_fill(box, destination_, fill_value_);
    if (added == BatchTable::Added::full) {
      flush(worker);
      added = worker.table->add_fill(box, destination_, fill_value_);
    }
    if (added == BatchTable::Added::yes) return;
  }
  std::byte* dst = destination_.address_of(box.offset_in_dest);
  std::array<std::byte, 16> unit{};
  const BoxPlan plan = plan_box_fill(box, destination_, fill_value_, address(dst), unit);
  if (plan.contiguous && fill_uniform_) {
    calls_.add(CudaCall::memset);
    check_cuda(cudaMemsetAsync(dst, std::to_integer<int>(fill_value_[0]), plan.plan.count * plan.plan.unit,
                               worker.stream),
               "cudaMemsetAsync (fill value)");
    return;
  }
  calls_.add(CudaCall::launch);
  check_cuda(launch_fill(plan.plan, unit.data(), dst, worker.stream), "fill kernel launch");
}

StagingSlot& DeviceSink::idle_slot(unsigned worker_index) {
  use_device(options_.device);
  Worker& worker = workers_[worker_index];
  StagingSlot& slot = next_slot(worker);
  if (slot.in_flight) {
    calls_.add(CudaCall::sync);
    check_cuda(cudaEventSynchronize(slot.done), "cudaEventSynchronize (staging slot)");
    slot.in_flight = false;
  }
  slot.scratch();
  return slot;
}

void DeviceSink::scatter_from_device(unsigned worker_index, StagingSlot& slot, const std::byte* src_origin,
                                     const ChunkBox& box) {
  use_device(options_.device);
  Worker& worker = workers_[worker_index];
  if (box.num_elements() == 0) return;
  std::byte* dst = destination_.address_of(box.offset_in_dest);
  const BoxPlan plan = plan_box_copy(box, destination_, address(src_origin), address(dst));
  if (plan.contiguous) {
    calls_.add(CudaCall::copy);
    check_cuda(cudaMemcpyAsync(dst, src_origin, plan.plan.count * plan.plan.unit, cudaMemcpyDeviceToDevice,
                               worker.stream),
               "cudaMemcpyAsync (scratch to destination)");
  } else {
    calls_.add(CudaCall::launch);
    check_cuda(launch_copy(plan.plan, src_origin, dst, worker.stream), "scatter kernel launch");
  }
  calls_.add(CudaCall::event_record);
  check_cuda(cudaEventRecord(slot.done, worker.stream), "cudaEventRecord (staging slot)");
  slot.in_flight = true;
}

void DeviceSink::launch_on_worker(unsigned worker_index, std::span<const std::byte> bytes,
                                  const std::function<cudaError_t(const std::byte*, cudaStream_t)>& launch) {
  use_device(options_.device);
  Worker& worker = workers_[worker_index];
  if (bytes.empty()) {
    calls_.add(CudaCall::launch);
    check_cuda(launch(nullptr, worker.stream), "selection fill kernel launch");
    return;
  }
  StagingSlot* slot = worker.current;
  worker.current = nullptr;
  if (!slot) throw Error(ErrorKind::invalid_argument, "device sink: place() without staging()");
  std::byte* scratch = slot->scratch();
  calls_.add(CudaCall::copy);
  check_cuda(cudaMemcpyAsync(scratch, bytes.data(), bytes.size(), cudaMemcpyDefault, worker.stream),
             "cudaMemcpyAsync (chunk to device scratch)");
  calls_.add(CudaCall::launch);
  check_cuda(launch(scratch, worker.stream), "selection kernel launch");
  calls_.add(CudaCall::event_record);
  check_cuda(cudaEventRecord(slot->done, worker.stream), "cudaEventRecord (staging slot)");
  slot->in_flight = true;
}

void DeviceSink::finish() {
  trace_.mark("every chunk read");
  use_device(options_.device);
  // The workers' last batches (the workers are done: this thread flushes them all).
  std::exception_ptr flush_error;
  for (auto& worker : workers_) {
    if (!worker.table || !worker.stream) continue;
    worker.reserved.reset();
    try {
      flush(worker);
    } catch (...) {
      if (!flush_error) flush_error = std::current_exception();
    }
  }
  cudaError_t first = cudaSuccess;
  for (auto& worker : workers_) {
    if (!worker.stream) continue;
    calls_.add(CudaCall::sync);
    cudaError_t status = cudaStreamSynchronize(worker.stream);
    if (status != cudaSuccess && first == cudaSuccess) first = status;
  }
  if (first != cudaSuccess) throw cuda_error(first, "device read: cudaStreamSynchronize");
  if (flush_error) std::rethrow_exception(flush_error);
  synchronized_ = true;
  trace_.mark("copies done");
  // Everything is in place: give the buffers back now, for the next read to take.
  release(false);
  trace_.mark("finished");
  trace_.print();
}

void DeviceSink::release(bool broken) {
  std::vector<SlotPtr> slots;
  std::vector<cudaStream_t> streams;
  for (auto& worker : workers_) {
    for (auto& slot : worker.ring) slots.push_back(std::move(slot));
    worker.ring.clear();
    for (auto& slot : worker.batch)
      if (slot) slots.push_back(std::move(slot));
    worker.table.reset();
    worker.reserved.reset();
    worker.current = nullptr;
    if (worker.stream) streams.push_back(worker.stream);
    worker.stream = nullptr;
  }
  auto& pool = DevicePool::instance();
  if (broken) {
    // The GPU reported a failure: its work may still reference these, and the context is
    // likely unusable anyway. Leak rather than hand them to another read.
    pool.forget_slots(std::move(slots));
    ready_ = nullptr;
    return;
  }
  pool.release_slots(std::move(slots), pool_budget_);
  pool.release_streams(options_.device, std::move(streams));
  // Every worker stream that waited for it has drained: the event can serve another read.
  pool.release_event(options_.device, ready_);
  ready_ = nullptr;
}

}  // namespace zarrdirect::cuda

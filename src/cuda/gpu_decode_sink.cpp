#include "cuda/gpu_decode_sink.hpp"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "cuda/batch_kernels.cuh"
#include "cuda/blosc_unshuffle_kernels.cuh"
#include "cuda/lz4_warp_kernels.cuh"
#include "cuda/batch_table.hpp"
#include "cuda/cuda_check.hpp"
#include "cuda/kernels.cuh"

namespace zarrdirect::cuda {
namespace {

namespace portable = codec::portable;

constexpr std::size_t kPage = 4096;
constexpr std::size_t kAlign = 256;  // decoded chunks start where any unit is aligned
constexpr std::size_t kMinStored = std::size_t{1} << 20;
constexpr std::size_t kMaxStored = std::size_t{16} << 20;
constexpr std::size_t kMaxStoredForOneChunk = std::size_t{256} << 20;

std::size_t round_up(std::size_t n, std::size_t to) { return (std::max<std::size_t>(n, 1) + to - 1) / to * to; }
std::uintptr_t address(const void* p) { return reinterpret_cast<std::uintptr_t>(p); }

}  // namespace

void GpuDecodeSink::DeviceBuffer::reserve(std::size_t nbytes) {
  if (nbytes <= capacity) return;
  if (data) cudaFree(data);
  data = nullptr;
  capacity = 0;
  const std::size_t rounded = round_up(nbytes, std::size_t{1} << 20);
  void* p = nullptr;
  check_cuda(cudaMalloc(&p, rounded), fmt::format("cudaMalloc ({} bytes for GPU decoding)", rounded));
  data = static_cast<std::byte*>(p);
  capacity = rounded;
}

GpuDecodeSink::DeviceBuffer::~DeviceBuffer() {
  if (data) cudaFree(data);
}

void GpuDecodeSink::PinnedBuffer::reserve(std::size_t nbytes) {
  if (nbytes <= capacity) return;
  if (data) cudaFreeHost(data);
  data = nullptr;
  capacity = 0;
  const std::size_t rounded = round_up(nbytes, std::size_t{64} << 10);
  void* p = nullptr;
  check_cuda(cudaHostAlloc(&p, rounded, cudaHostAllocDefault),
             fmt::format("cudaHostAlloc ({} bytes for GPU decoding tables)", rounded));
  data = static_cast<std::byte*>(p);
  capacity = rounded;
}

GpuDecodeSink::PinnedBuffer::~PinnedBuffer() {
  if (data) cudaFreeHost(data);
}

GpuDecodeSink::GpuDecodeSink(DeviceSink& inner, const GpuDecodeRoute& route, std::size_t chunk_bytes,
                             const DeviceSinkOptions& options)
    : inner_(inner), route_(route), chunk_bytes_(chunk_bytes), options_(options) {
  if (route_.codec == GpuCodec::none || route_.stored_strides.size() > kMaxRank)
    throw Error(ErrorKind::invalid_argument, "GPU decode sink: the chain is not GPU-decodable");
  layout_.rank = route_.stored_strides.size();
  for (std::size_t d = 0; d < layout_.rank; ++d) layout_.strides[d] = static_cast<std::uint64_t>(route_.stored_strides[d]);
  layout_.element_size = route_.element_size;
  layout_.swap_unit = route_.swap_unit;
}

GpuDecodeSink::~GpuDecodeSink() {
  if (!finished_) {
    bool broken = false;
    try {
      use_device(options_.device);
    } catch (const Error&) {
      broken = true;
    }
    for (auto& worker : workers_)
      if (!broken && worker.stream && cudaStreamSynchronize(worker.stream) != cudaSuccess) broken = true;
    release(broken);
  }
  (void)cudaGetLastError();
}

void GpuDecodeSink::start(unsigned workers, std::size_t max_chunk_bytes) {
  inner_.start(workers, max_chunk_bytes);
  use_device(options_.device);
  workers_ = std::vector<Worker>(std::max(workers, 1u));
  const std::size_t count = workers_.size();
  // Stored bytes of a batch: a share of the staging budget, and at least one chunk that did not
  // compress (a chunk whose stored bytes do not fit is decoded on the CPU).
  const std::size_t share = std::clamp(options_.staging_bytes / (2 * count), kMinStored, kMaxStored);
  stored_capacity_ = round_up(std::max(share, std::min(chunk_bytes_ + chunk_bytes_ / 64 + kPage, kMaxStoredForOneChunk)), kPage);
  // Decoded bytes: room for chunks compressed about 4:1 (a batch closes at whichever fills first).
  decoded_capacity_ = round_up(std::max(4 * stored_capacity_, chunk_bytes_), kAlign);

  auto& pool = DevicePool::instance();
  auto streams = pool.acquire_streams(options_.device, count);
  for (std::size_t w = 0; w < count; ++w) workers_[w].stream = streams[w];
  cudaStream_t upstream = options_.caller_stream ? options_.caller_stream : cudaStreamLegacy;
  ready_ = pool.acquire_event(options_.device);
  check_cuda(cudaEventRecord(ready_, upstream), "cudaEventRecord (caller's stream)");
  // Pinned as far as the process's pool grants (pinned_policy.hpp), ordinary memory beyond.
  auto slots = pool.acquire_staging(options_.device, stored_capacity_, 2 * count, pool_budget(options_));
  for (std::size_t w = 0; w < count; ++w) {
    check_cuda(cudaStreamWaitEvent(workers_[w].stream, ready_, 0), "cudaStreamWaitEvent");
    for (std::size_t b = 0; b < 2; ++b) {
      Batch& batch = workers_[w].batches[b];
      batch.stored = std::move(slots[2 * w + b]);
      batch.done = pool.acquire_event(options_.device);
    }
  }
}

GpuDecodeSink::Batch& GpuDecodeSink::batch_for(Worker& worker, std::size_t stored) {
  Batch* batch = &worker.batches[worker.active];
  retire(worker, *batch);  // its last trip is done and checked before it is filled again
  const bool fits = batch->stored_end + round_up(stored, 16) <= stored_capacity_ &&
                    batch->decoded_end + round_up(chunk_bytes_, kAlign) <= decoded_capacity_ &&
                    batch->entries.size() < kMaxBatchEntries;
  if (!fits && !batch->empty()) {
    flush(worker);
    batch = &worker.batches[worker.active];
    retire(worker, *batch);
  }
  return *batch;
}

bool GpuDecodeSink::place_stored(unsigned worker_index, std::span<const std::byte> stored, const ChunkBox& box,
                                 std::string_view where) {
  throw_if_failed();
  if (stored.size() > stored_capacity_) return false;
  // Planned on the host from the reader's bytes: a chunk refused here costs nothing on the GPU.
  const GpuChunkPlan chunk_plan = plan_gpu_chunk(route_.codec, stored, chunk_bytes_);
  if (!chunk_plan.accepted) return false;
  const portable::BloscFrame& frame = chunk_plan.frame;

  use_device(options_.device);
  Worker& worker = workers_[worker_index];
  Batch& batch = batch_for(worker, stored.size());
  throw_if_failed();

  const std::size_t at = batch.stored_end;
  const std::size_t decoded_at = batch.decoded_end;
  Pending pending;
  pending.where = std::string(where);
  pending.codec = route_.codec;
  pending.decoded = chunk_bytes_;
  switch (route_.codec) {
    case GpuCodec::blosc: {
      // One job per stream, listed from the stream size fields; a frame whose fields do not hold
      // lists none and is left to the CPU (which names the damage).
      pending.first_job = static_cast<std::uint32_t>(batch.blosc_jobs.streams.size());
      const auto* bytes = reinterpret_cast<const std::uint8_t*>(stored.data());
      if (append_blosc_jobs(frame, {bytes, stored.size()}, at, decoded_at, batch.scratch_end, batch.blosc_jobs) !=
          portable::DecodeStatus::ok)
        return false;
      pending.jobs = static_cast<std::uint32_t>(batch.blosc_jobs.streams.size() - pending.first_job);
      break;
    }
    case GpuCodec::lz4: {
      pending.first_job = static_cast<std::uint32_t>(batch.lz4_jobs.size());
      pending.jobs = 1;
      GpuDecodeJob job;
      job.src_offset = at + 4;
      job.src_size = stored.size() - 4;
      job.dst_offset = decoded_at;
      job.dst_capacity = chunk_bytes_;
      batch.lz4_jobs.push_back(job);
      break;
    }
    // Codec slot (zstd): one GpuDecodeJob per frame into its own table, as lz4.
    case GpuCodec::zstd:
    case GpuCodec::none:
      break;
  }
  std::memcpy(batch.stored->host + at, stored.data(), stored.size());
  batch.stored_end = at + round_up(stored.size(), 16);
  batch.decoded_end = decoded_at + round_up(chunk_bytes_, kAlign);
  batch.pending.push_back(std::move(pending));

  if (box.num_elements() > 0) {
    const DestinationLayout& dest = inner_.destination();
    std::byte* dst = dest.address_of(box.offset_in_dest);
    // The decode buffer starts 256-byte aligned (cudaMalloc), so offsets stand for addresses.
    const StoredBoxPlan plan = plan_stored_box_copy(box, dest, layout_, decoded_at, address(dst));
    if (auto entry = batch_entry_of(plan.plan)) {
      entry->src_offset = decoded_at + plan.src_offset;
      entry->dst = address(dst);
      batch.entries.push_back(*entry);
      batch.max_units = std::max(batch.max_units, entry->count);
    } else {
      batch.alone.push_back({plan.plan, {decoded_at + plan.src_offset, dst}});
    }
  }
  return true;
}

void GpuDecodeSink::flush(Worker& worker) {
  Batch& batch = worker.batches[worker.active];
  if (batch.empty()) return;
  // Tables up: [lz4 jobs][blosc stream jobs][unshuffle jobs][entries]; statuses back: [lz4
  // outcomes][blosc stream statuses].
  const std::vector<GpuBloscStreamJob>& streams = batch.blosc_jobs.streams;
  const std::vector<GpuUnshuffleJob>& unshuffles = batch.blosc_jobs.unshuffles;
  const std::size_t lz4_at = 0;
  const std::size_t blosc_at = round_up(lz4_at + batch.lz4_jobs.size() * sizeof(GpuDecodeJob), 64);
  const std::size_t unshuffle_at = round_up(blosc_at + streams.size() * sizeof(GpuBloscStreamJob), 64);
  const std::size_t entries_at = round_up(unshuffle_at + unshuffles.size() * sizeof(GpuUnshuffleJob), 64);
  const std::size_t upload = entries_at + batch.entries.size() * sizeof(BatchEntry);
  batch.outcomes_at = round_up(upload, 64);
  batch.statuses_at = round_up(batch.outcomes_at + batch.lz4_jobs.size() * sizeof(portable::DecodeOutcome), 64);
  const std::size_t total = batch.statuses_at + streams.size() * sizeof(portable::DecodeStatus);
  batch.tables_host.reserve(total);
  batch.tables.reserve(total);
  batch.decoded.reserve(batch.decoded_end);
  if (batch.scratch_end > 0) batch.scratch.reserve(batch.scratch_end);
  std::byte* host = batch.tables_host.data;
  if (!batch.lz4_jobs.empty())
    std::memcpy(host + lz4_at, batch.lz4_jobs.data(), batch.lz4_jobs.size() * sizeof(GpuDecodeJob));
  if (!streams.empty()) std::memcpy(host + blosc_at, streams.data(), streams.size() * sizeof(GpuBloscStreamJob));
  if (!unshuffles.empty())
    std::memcpy(host + unshuffle_at, unshuffles.data(), unshuffles.size() * sizeof(GpuUnshuffleJob));
  if (!batch.entries.empty())
    std::memcpy(host + entries_at, batch.entries.data(), batch.entries.size() * sizeof(BatchEntry));

  cudaStream_t stream = worker.stream;
  std::byte* tables = batch.tables.data;
  auto* src = reinterpret_cast<const std::uint8_t*>(batch.stored->scratch());
  auto* dst = reinterpret_cast<std::uint8_t*>(batch.decoded.data);
  check_cuda(cudaMemcpyAsync(batch.stored->scratch(), batch.stored->host, batch.stored_end, cudaMemcpyHostToDevice, stream),
             "cudaMemcpyAsync (stored chunks to the device)");
  check_cuda(cudaMemcpyAsync(tables, host, upload, cudaMemcpyHostToDevice, stream),
             "cudaMemcpyAsync (decode tables to the device)");
  auto* scratch = reinterpret_cast<std::uint8_t*>(batch.scratch.data);
  check_cuda(launch_lz4_warp_decode(reinterpret_cast<const GpuDecodeJob*>(tables + lz4_at),
                                    static_cast<std::uint32_t>(batch.lz4_jobs.size()), src, dst,
                                    reinterpret_cast<portable::DecodeOutcome*>(tables + batch.outcomes_at), stream),
             "lz4 decode kernel launch");
  check_cuda(launch_blosc_stream_decode(reinterpret_cast<const GpuBloscStreamJob*>(tables + blosc_at),
                                        static_cast<std::uint32_t>(streams.size()), src, dst, scratch,
                                        reinterpret_cast<portable::DecodeStatus*>(tables + batch.statuses_at), stream),
             "blosc stream decode kernel launch");
  // After every stream of the batch (same stream, next launch): shuffled blocks are complete.
  check_cuda(launch_blosc_unshuffle(reinterpret_cast<const GpuUnshuffleJob*>(tables + unshuffle_at),
                                    static_cast<std::uint32_t>(unshuffles.size()), scratch, dst, stream),
             "blosc unshuffle kernel launch");
  // Codec slot (zstd): launch_zstd_decode(jobs, count, src, dst, outcomes, stream) here, with its
  // jobs and outcomes in the tables as lz4's.
  check_cuda(launch_batch(reinterpret_cast<const BatchEntry*>(tables + entries_at), batch.entries.size(),
                          batch.max_units, batch.decoded.data, stream),
             "placement kernel launch (GPU-decoded chunks)");
  for (const auto& [plan, where] : batch.alone)
    check_cuda(launch_copy(plan, batch.decoded.data + where.first, where.second, stream),
               "scatter kernel launch (GPU-decoded chunk)");
  if (total > batch.outcomes_at)
    check_cuda(cudaMemcpyAsync(host + batch.outcomes_at, tables + batch.outcomes_at, total - batch.outcomes_at,
                               cudaMemcpyDeviceToHost, stream),
               "cudaMemcpyAsync (decode statuses to the host)");
  check_cuda(cudaEventRecord(batch.done, stream), "cudaEventRecord (decode batch)");
  batch.in_flight = true;
  ++worker.launched;
  worker.active ^= 1;
}

void GpuDecodeSink::retire(Worker& worker, Batch& batch) {
  if (!batch.in_flight) return;
  batch.in_flight = false;
  check_cuda(cudaEventSynchronize(batch.done), "cudaEventSynchronize (decode batch)");
  const std::byte* host = batch.tables_host.data;
  for (const Pending& pending : batch.pending) {
    portable::DecodeStatus status = portable::DecodeStatus::ok;
    if (pending.codec == GpuCodec::lz4) {  // codec slot (zstd): checked the same way, from its outcomes
      portable::DecodeOutcome outcome;
      std::memcpy(&outcome, host + batch.outcomes_at + pending.first_job * sizeof(outcome), sizeof(outcome));
      status = outcome.status;
      if (status == portable::DecodeStatus::ok && outcome.written != pending.decoded)
        status = portable::DecodeStatus::size_mismatch;
    } else if (pending.codec == GpuCodec::blosc) {
      for (std::uint32_t j = 0; j < pending.jobs && status == portable::DecodeStatus::ok; ++j)
        std::memcpy(&status, host + batch.statuses_at + (pending.first_job + j) * sizeof(status), sizeof(status));
    }
    if (status != portable::DecodeStatus::ok) {
      record(Error(ErrorKind::corrupt_data, fmt::format("{}: codec {}: {} (decoded on the GPU)", pending.where,
                                                        route_.compressor, portable::describe(status))));
      continue;
    }
    ++worker.chunks;
    worker.bytes += pending.decoded;
  }
  batch.pending.clear();
  batch.lz4_jobs.clear();
  batch.blosc_jobs.clear();
  batch.entries.clear();
  batch.alone.clear();
  batch.max_units = 0;
  batch.stored_end = 0;
  batch.decoded_end = 0;
  batch.scratch_end = 0;
}

void GpuDecodeSink::record(Error error) {
  std::lock_guard lock(error_mutex_);
  if (!error_) error_ = std::make_unique<Error>(std::move(error));
  failed_ = true;
}

void GpuDecodeSink::throw_if_failed() {
  if (!failed_.load(std::memory_order_relaxed)) return;
  std::lock_guard lock(error_mutex_);
  throw EarlierChunkError(error_->kind(), error_->what());
}

SinkDecodeCounts GpuDecodeSink::sink_decoded() const {
  SinkDecodeCounts counts;
  for (const auto& worker : workers_) {
    counts.chunks += worker.chunks;
    counts.bytes += worker.bytes;
  }
  return counts;
}

std::size_t GpuDecodeSink::batches_launched() const {
  std::size_t n = 0;
  for (const auto& worker : workers_) n += worker.launched;
  return n;
}

void GpuDecodeSink::finish() {
  std::exception_ptr failure;
  try {
    use_device(options_.device);
    for (auto& worker : workers_) {
      if (!worker.stream) continue;
      flush(worker);
      for (auto& batch : worker.batches) retire(worker, batch);
    }
  } catch (...) {
    failure = std::current_exception();
  }
  try {
    inner_.finish();
  } catch (...) {
    if (!failure) failure = std::current_exception();
  }
  bool broken = false;
  for (auto& worker : workers_)
    if (worker.stream && cudaStreamSynchronize(worker.stream) != cudaSuccess) broken = true;
  finished_ = true;
  release(broken);
  if (failure) std::rethrow_exception(failure);
  std::lock_guard lock(error_mutex_);
  if (error_) throw Error(error_->kind(), error_->what());
}

void GpuDecodeSink::release(bool broken) {
  std::vector<SlotPtr> slots;
  std::vector<cudaStream_t> streams;
  std::vector<cudaEvent_t> events;
  if (ready_) events.push_back(ready_);
  ready_ = nullptr;
  for (auto& worker : workers_) {
    for (auto& batch : worker.batches) {
      if (batch.stored) slots.push_back(std::move(batch.stored));
      if (batch.done) events.push_back(batch.done);
      batch.done = nullptr;
      if (broken) {
        // The GPU failed: its work may still reference these. Leak rather than free under it.
        batch.decoded.data = nullptr;
        batch.scratch.data = nullptr;
        batch.tables.data = nullptr;
        batch.tables_host.data = nullptr;
      }
    }
    if (worker.stream) streams.push_back(worker.stream);
    worker.stream = nullptr;
  }
  auto& pool = DevicePool::instance();
  if (broken) {
    // Leaked with the slots: their work may still be queued.
    pool.forget_slots(std::move(slots));
    return;
  }
  pool.release_slots(std::move(slots), pool_budget(options_));
  pool.release_streams(options_.device, std::move(streams));
  // The streams have drained: nothing waits on these events any more.
  for (cudaEvent_t event : events) pool.release_event(options_.device, event);
}

}  // namespace zarrdirect::cuda

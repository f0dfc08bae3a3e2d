#include "cuda/gpu_decode_sink.hpp"

#include <algorithm>
#include <cstring>
#include <optional>

#include <fmt/format.h>
#include <zstd.h>

#include "cuda/batch_kernels.cuh"
#include "cuda/blosc_unshuffle_kernels.cuh"
#include "cuda/lz4_warp_kernels.cuh"
#include "cuda/batch_table.hpp"
#include "cuda/cuda_check.hpp"
#include "cuda/kernels.cuh"
#include "cuda/zstd_decode_kernels.cuh"

namespace zarrdirect::cuda {
namespace {

namespace portable = codec::portable;

constexpr std::size_t kPage = 4096;
constexpr std::size_t kAlign = 256;  // decoded chunks start where any unit is aligned
constexpr std::size_t kMinStored = std::size_t{1} << 20;
// A batch's stored bytes are the staging budget (Settings::staging_bytes): 256 MiB by default.
// A batch has a latency whatever it holds, so the ring's four batches must hold enough to cover
// it in a large read: whole zstd-1 reads of 4 MiB chunks ran at 24.9 GB/s with batches of 64 MiB,
// 39.0-40.6 with 128 MiB and 43.9-44.7 with 256 MiB (H100, docs/BENCHMARKS.md session 19, a
// thread per Huffman stream). Capped here; device_read.cpp also caps it at a quarter of the
// read's decoded bytes (a small read's batches then overlap each other).
constexpr std::size_t kMaxStored = std::size_t{256} << 20;
constexpr std::size_t kMaxStoredForOneChunk = std::size_t{256} << 20;
// A batch's tables: about 30,000 jobs; a chunk whose own jobs do not fit is decoded on the CPU.
constexpr std::size_t kTableBytes = std::size_t{1} << 20;
constexpr std::size_t kTableSegments = 8;  // each starts 64-byte aligned (launch() lays them out)

std::size_t round_up(std::size_t n, std::size_t to) { return (std::max<std::size_t>(n, 1) + to - 1) / to * to; }
std::uintptr_t address(const void* p) { return reinterpret_cast<std::uintptr_t>(p); }

}  // namespace

GpuDecodeSink::GpuDecodeSink(DeviceSink& inner, const GpuDecodeRoute& route, std::size_t chunk_bytes,
                             const DeviceSinkOptions& options, bool share)
    : inner_(inner), route_(route), share_(share), chunk_bytes_(chunk_bytes), options_(options) {
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
    for (auto& batch : ring_)
      if (!broken && batch.stream && cudaStreamSynchronize(batch.stream) != cudaSuccess) broken = true;
    release(broken);
  }
  (void)cudaGetLastError();
}

void GpuDecodeSink::start(unsigned workers, std::size_t max_chunk_bytes) {
  trace_.mark("start", workers);
  inner_.start(workers, max_chunk_bytes);
  use_device(options_.device);
  listed_ = std::vector<BloscGpuJobs>(std::max(workers, 1u));
  listed_zstd_ = std::vector<ZstdGpuJobs>(std::max(workers, 1u));
  if (trace_.enabled()) worker_laps_.assign(std::max(workers, 1u), PhaseLaps(kWorkerPhases));
  // Stored bytes of a batch: the staging budget (within kMinStored..kMaxStored), and at least one
  // chunk that did not compress (a chunk whose stored bytes do not fit is decoded on the CPU).
  const std::size_t share = std::clamp(options_.staging_bytes, kMinStored, kMaxStored);
  stored_capacity_ = round_up(std::max(share, std::min(chunk_bytes_ + chunk_bytes_ / 64 + kPage, kMaxStoredForOneChunk)), kPage);
  // Decoded bytes: room for chunks compressed about 2:1 (a batch closes at whichever fills first).
  decoded_capacity_ = round_up(std::max(2 * stored_capacity_, chunk_bytes_), kAlign);
  table_capacity_ = kTableBytes;

  auto& pool = DevicePool::instance();
  auto streams = pool.acquire_streams(options_.device, kBatches);
  cudaStream_t upstream = options_.caller_stream ? options_.caller_stream : cudaStreamLegacy;
  ready_ = pool.acquire_event(options_.device);
  check_cuda(cudaEventRecord(ready_, upstream), "cudaEventRecord (caller's stream)");
  // The batches' staging is taken when each is first filled (open_batch_for): a read of a few
  // chunks holds one batch's, not the ring's.
  for (std::size_t b = 0; b < kBatches; ++b) {
    Batch& batch = ring_[b];
    batch.stream = streams[b];
    batch.done = pool.acquire_event(options_.device);
    check_cuda(cudaStreamWaitEvent(batch.stream, ready_, 0), "cudaStreamWaitEvent");
  }
  if (trace_.enabled()) {
    check_cuda(cudaEventCreate(&trace_origin_), "cudaEventCreate (trace)");
    check_cuda(cudaEventRecord(trace_origin_, ring_[0].stream), "cudaEventRecord (trace)");
  }
}

GpuDecodeSink::Batch* GpuDecodeSink::open_batch_for(std::unique_lock<std::mutex>& lock, std::size_t stored,
                                                    std::size_t scratch, std::size_t table_bytes) {
  const std::size_t stored_need = round_up(stored, 16);
  const std::size_t decoded_need = round_up(chunk_bytes_, kAlign);
  const std::size_t scratch_need = scratch > 0 ? round_up(scratch, 16) : 0;
  const std::size_t table_room = table_capacity_ - kTableSegments * 64;
  for (;;) {
    Batch& batch = ring_[open_];
    // Closed by a worker still copying its chunk in: that worker launches it. Woken, look at the
    // open batch again: another worker may have filled this one and moved on meanwhile.
    if (batch.closed && !failed_.load()) {
      if (share_) return nullptr;
      launched_cv_.wait(lock);
      continue;
    }
    throw_if_failed();
    if (share_ && !open_batch_free()) return nullptr;
    retire(batch);  // its last trip is done and checked before it is filled again
    throw_if_failed();
    // Pinned as far as the process's pool grants (pinned_policy.hpp), ordinary memory beyond.
    auto& pool = DevicePool::instance();
    if (!batch.stored)
      batch.stored = std::move(pool.acquire_staging(options_.device, stored_capacity_, 1, pool_budget(options_)).front());
    if (!batch.tables)
      batch.tables = std::move(pool.acquire_staging(options_.device, table_capacity_, 1, pool_budget(options_)).front());
    const bool fits = batch.stored_end + stored_need <= stored_capacity_ &&
                      batch.decoded_end + decoded_need <= decoded_capacity_ &&
                      batch.scratch_end + scratch_need <= decoded_capacity_ &&
                      batch.table_bytes + table_bytes <= table_room && batch.entries.size() < kMaxBatchEntries;
    if (fits) return &batch;
    if (batch.empty()) return nullptr;  // more than a whole batch holds: decoded on the CPU
    batch.closed = true;
    if (batch.writers == 0) launch(batch);
    open_ = (open_ + 1) % kBatches;
  }
}

bool GpuDecodeSink::open_batch_free() const {
  const Batch& batch = ring_[open_];
  if (batch.closed) return false;
  // A failed batch reports at its retirement, which the caller reaches by taking the batch.
  return !batch.in_flight || cudaEventQuery(batch.done) != cudaErrorNotReady;
}

bool GpuDecodeSink::place_stored(unsigned worker_index, std::span<const std::byte> stored, const ChunkBox& box,
                                 std::string_view where) {
  throw_if_failed();
  PhaseLaps* laps = worker_index < worker_laps_.size() ? &worker_laps_[worker_index] : nullptr;
  if (laps) laps->lap(kOutside);
  if (stored.size() > stored_capacity_) return false;
  if (share_) {
    // Before the listing: a chunk the ring has no room for now costs the host nothing here.
    use_device(options_.device);
    std::lock_guard lock(mutex_);
    if (!open_batch_free()) return false;
  }
  // Planned and listed on the worker, before the lock: a chunk refused here costs nothing on the
  // GPU, and the per-chunk host work runs on every worker at once.
  trace_.mark_first("first chunk read", stored.size());
  const GpuChunkPlan chunk_plan = plan_gpu_chunk(route_.codec, stored, chunk_bytes_);
  if (!chunk_plan.accepted) return false;
  BloscGpuJobs& listed = listed_[worker_index];
  listed.clear();
  std::uint64_t chunk_scratch = 0;
  std::size_t table_bytes = sizeof(BatchEntry);
  switch (route_.codec) {
    case GpuCodec::blosc: {
      // One job per stream, listed from the stream size fields at offset 0 (moved to the chunk's
      // place below); a frame whose fields do not hold lists none and is left to the CPU (which
      // names the damage).
      const auto* bytes = reinterpret_cast<const std::uint8_t*>(stored.data());
      if (append_blosc_jobs(chunk_plan.frame, {bytes, stored.size()}, 0, 0, chunk_scratch, listed) !=
          portable::DecodeStatus::ok)
        return false;
      table_bytes += listed.streams.size() * (sizeof(GpuBloscStreamJob) + sizeof(portable::DecodeStatus)) +
                     listed.unshuffles.size() * sizeof(GpuUnshuffleJob);
      break;
    }
    case GpuCodec::lz4:
      table_bytes += sizeof(GpuDecodeJob) + sizeof(portable::DecodeOutcome);
      break;
    case GpuCodec::zstd: {
      // A frame job and a job per block, listed from the block and section headers; a frame the
      // listing refuses (damaged, or one it leaves to libzstd, such as two frames) is the CPU's.
      ZstdGpuJobs& zstd_listed = listed_zstd_[worker_index];
      zstd_listed.clear();
      const auto* bytes = reinterpret_cast<const std::uint8_t*>(stored.data());
      if (append_zstd_jobs({bytes, stored.size()}, 0, 0, chunk_bytes_, chunk_scratch, zstd_listed) !=
          portable::DecodeStatus::ok)
        return false;
      table_bytes += sizeof(portable::ZstdFrameJob) + sizeof(portable::DecodeOutcome) +
                     zstd_listed.blocks.size() * sizeof(portable::ZstdBlockJob);
      break;
    }
    case GpuCodec::none:
      return false;
  }

  if (laps) laps->lap(kListing);
  use_device(options_.device);
  Batch* batch = nullptr;
  std::size_t at = 0;
  {
    std::unique_lock lock(mutex_);
    batch = open_batch_for(lock, stored.size(), chunk_scratch, table_bytes);
    if (!batch) return false;
    at = batch->stored_end;
    const std::size_t decoded_at = batch->decoded_end;
    Pending pending;
    pending.where = std::string(where);
    pending.codec = route_.codec;
    pending.decoded = chunk_bytes_;
    pending.stored_at = at;
    pending.stored_size = stored.size();
    pending.decoded_at = decoded_at;
    // The placement first: the only step that can throw, before anything is appended.
    std::optional<BatchEntry> entry;
    std::optional<AloneCopy> alone;
    if (box.num_elements() > 0) {
      const DestinationLayout& dest = inner_.destination();
      std::byte* dst = dest.address_of(box.offset_in_dest);
      // The decode buffer starts 256-byte aligned (cudaMalloc), so offsets stand for addresses.
      const StoredBoxPlan plan = plan_stored_box_copy(box, dest, layout_, decoded_at, address(dst));
      if ((entry = batch_entry_of(plan.plan))) {
        entry->src_offset = decoded_at + plan.src_offset;
        entry->dst = address(dst);
      } else {
        alone = AloneCopy{plan.plan, decoded_at + plan.src_offset, dst};
      }
    }
    if (route_.codec == GpuCodec::blosc) {
      pending.first_job = static_cast<std::uint32_t>(batch->blosc_jobs.streams.size());
      pending.jobs = static_cast<std::uint32_t>(listed.streams.size());
      for (GpuBloscStreamJob job : listed.streams) {
        job.src_offset += at;
        job.dst_offset += job.to_scratch ? batch->scratch_end : decoded_at;
        batch->blosc_jobs.streams.push_back(job);
      }
      for (GpuUnshuffleJob job : listed.unshuffles) {
        job.scratch_offset += batch->scratch_end;
        job.dst_offset += decoded_at;
        batch->blosc_jobs.unshuffles.push_back(job);
      }
    } else if (route_.codec == GpuCodec::zstd) {
      pending.first_job = static_cast<std::uint32_t>(batch->zstd_jobs.frames.size());
      pending.jobs = 1;
      append_rebased(listed_zstd_[worker_index], at, decoded_at, batch->scratch_end, batch->zstd_jobs);
    } else {
      pending.first_job = static_cast<std::uint32_t>(batch->frame_jobs.size());
      pending.jobs = 1;
      // numcodecs lz4: a 4-byte size header, then the block.
      constexpr std::size_t header = 4;
      GpuDecodeJob job;
      job.src_offset = at + header;
      job.src_size = stored.size() - header;
      job.dst_offset = decoded_at;
      job.dst_capacity = chunk_bytes_;
      batch->frame_jobs.push_back(job);
    }
    batch->scratch_end += chunk_scratch > 0 ? round_up(chunk_scratch, 16) : 0;
    if (entry) {
      pending.entry_index = static_cast<std::int64_t>(batch->entries.size());
      batch->entries.push_back(*entry);
      batch->max_units = std::max(batch->max_units, entry->count);
    }
    if (alone) {
      pending.alone_index = static_cast<std::int64_t>(batch->alone.size());
      batch->alone.push_back(*alone);
    }
    batch->pending.push_back(std::move(pending));
    batch->stored_end = at + round_up(stored.size(), 16);
    batch->decoded_end = decoded_at + round_up(chunk_bytes_, kAlign);
    batch->table_bytes += table_bytes;
    ++batch->writers;
  }
  if (laps) laps->lap(kBatching);
  // The copy into pinned memory, the bulk of the host's work per chunk, runs unlocked.
  std::memcpy(batch->stored->host + at, stored.data(), stored.size());
  if (laps) laps->lap(kCopying);
  {
    std::unique_lock lock(mutex_);
    --batch->writers;
    if (batch->closed && batch->writers == 0) launch(*batch);
  }
  if (laps) laps->lap(kBatching);
  return true;
}

void GpuDecodeSink::launch(Batch& batch) {
  try {
    // Tables up: [lz4 frame jobs][zstd frame jobs][zstd block jobs][blosc stream jobs]
    // [unshuffle jobs][entries]; statuses back: [frame outcomes (lz4 or zstd)][blosc stream statuses].
    const std::vector<GpuBloscStreamJob>& streams = batch.blosc_jobs.streams;
    const std::vector<GpuUnshuffleJob>& unshuffles = batch.blosc_jobs.unshuffles;
    const std::vector<portable::ZstdFrameJob>& zstd_frames = batch.zstd_jobs.frames;
    const std::vector<portable::ZstdBlockJob>& zstd_blocks = batch.zstd_jobs.blocks;
    const std::size_t frames_at = 0;
    const std::size_t zstd_frames_at = round_up(frames_at + batch.frame_jobs.size() * sizeof(GpuDecodeJob), 64);
    const std::size_t zstd_blocks_at = round_up(zstd_frames_at + zstd_frames.size() * sizeof(portable::ZstdFrameJob), 64);
    const std::size_t blosc_at = round_up(zstd_blocks_at + zstd_blocks.size() * sizeof(portable::ZstdBlockJob), 64);
    const std::size_t unshuffle_at = round_up(blosc_at + streams.size() * sizeof(GpuBloscStreamJob), 64);
    batch.entries_at = round_up(unshuffle_at + unshuffles.size() * sizeof(GpuUnshuffleJob), 64);
    const std::size_t entries_at = batch.entries_at;
    const std::size_t upload = entries_at + batch.entries.size() * sizeof(BatchEntry);
    batch.outcomes_at = round_up(upload, 64);
    const std::size_t outcome_count = batch.frame_jobs.size() + zstd_frames.size();
    batch.statuses_at = round_up(batch.outcomes_at + outcome_count * sizeof(portable::DecodeOutcome), 64);
    const std::size_t total = batch.statuses_at + streams.size() * sizeof(portable::DecodeStatus);
    if (total > table_capacity_)  // open_batch_for keeps every batch within it
      throw Error(ErrorKind::invalid_argument, fmt::format("GPU decode batch tables: {} bytes past {}", total, table_capacity_));
    // Device memory for what this batch holds, not for a full batch: a read of a few chunks (a
    // Dask block, a patch) takes a few MiB, not the ring's gigabyte.
    ensure_device_block(batch.decoded, batch.decoded_end);
    if (batch.scratch_end > 0) ensure_device_block(batch.scratch, batch.scratch_end);
    std::byte* host = batch.tables->host;
    if (!batch.frame_jobs.empty())
      std::memcpy(host + frames_at, batch.frame_jobs.data(), batch.frame_jobs.size() * sizeof(GpuDecodeJob));
    if (!zstd_frames.empty())
      std::memcpy(host + zstd_frames_at, zstd_frames.data(), zstd_frames.size() * sizeof(portable::ZstdFrameJob));
    if (!zstd_blocks.empty())
      std::memcpy(host + zstd_blocks_at, zstd_blocks.data(), zstd_blocks.size() * sizeof(portable::ZstdBlockJob));
    if (!streams.empty()) std::memcpy(host + blosc_at, streams.data(), streams.size() * sizeof(GpuBloscStreamJob));
    if (!unshuffles.empty())
      std::memcpy(host + unshuffle_at, unshuffles.data(), unshuffles.size() * sizeof(GpuUnshuffleJob));
    if (!batch.entries.empty())
      std::memcpy(host + entries_at, batch.entries.data(), batch.entries.size() * sizeof(BatchEntry));

    cudaStream_t stream = batch.stream;
    std::byte* tables = batch.tables->scratch();
    std::byte* decoded = batch.decoded->data;
    auto* src = reinterpret_cast<const std::uint8_t*>(batch.stored->scratch());
    auto* dst = reinterpret_cast<std::uint8_t*>(decoded);
    auto* scratch = batch.scratch ? reinterpret_cast<std::uint8_t*>(batch.scratch->data) : nullptr;
    mark_stage(batch, 0);
    check_cuda(cudaMemcpyAsync(batch.stored->scratch(), batch.stored->host, batch.stored_end, cudaMemcpyHostToDevice,
                               stream),
               "cudaMemcpyAsync (stored chunks to the device)");
    check_cuda(cudaMemcpyAsync(tables, host, upload, cudaMemcpyHostToDevice, stream),
               "cudaMemcpyAsync (decode tables to the device)");
    mark_stage(batch, 1);
    const auto* frame_jobs = reinterpret_cast<const GpuDecodeJob*>(tables + frames_at);
    const auto frame_count = static_cast<std::uint32_t>(batch.frame_jobs.size());
    auto* outcomes = reinterpret_cast<portable::DecodeOutcome*>(tables + batch.outcomes_at);
    if (frame_count > 0 && route_.codec == GpuCodec::lz4)
      check_cuda(launch_lz4_warp_decode(frame_jobs, frame_count, src, dst, outcomes, stream), "lz4 decode kernel launch");
    if (!zstd_frames.empty())
      check_cuda(launch_zstd_decode(reinterpret_cast<const portable::ZstdBlockJob*>(tables + zstd_blocks_at),
                                    static_cast<std::uint32_t>(zstd_blocks.size()),
                                    reinterpret_cast<const portable::ZstdFrameJob*>(tables + zstd_frames_at),
                                    static_cast<std::uint32_t>(zstd_frames.size()), src, dst, scratch, outcomes, stream),
                 "zstd decode kernel launch");
    if (!streams.empty())
      check_cuda(launch_blosc_stream_decode(reinterpret_cast<const GpuBloscStreamJob*>(tables + blosc_at),
                                            static_cast<std::uint32_t>(streams.size()), src, dst, scratch,
                                            reinterpret_cast<portable::DecodeStatus*>(tables + batch.statuses_at), stream),
                 "blosc stream decode kernel launch");
    // After every stream of the batch (same stream, next launch): shuffled blocks are complete.
    if (!unshuffles.empty())
      check_cuda(launch_blosc_unshuffle(reinterpret_cast<const GpuUnshuffleJob*>(tables + unshuffle_at),
                                        static_cast<std::uint32_t>(unshuffles.size()), scratch, dst, stream),
                 "blosc unshuffle kernel launch");
    mark_stage(batch, 2);
    if (!batch.entries.empty())
      check_cuda(launch_batch(reinterpret_cast<const BatchEntry*>(tables + entries_at), batch.entries.size(),
                              batch.max_units, decoded, stream),
                 "placement kernel launch (GPU-decoded chunks)");
    for (const AloneCopy& copy : batch.alone)
      check_cuda(launch_copy(copy.plan, decoded + copy.src_offset, copy.dst, stream),
                 "scatter kernel launch (GPU-decoded chunk)");
    mark_stage(batch, 3);
    if (total > batch.outcomes_at)
      check_cuda(cudaMemcpyAsync(host + batch.outcomes_at, tables + batch.outcomes_at, total - batch.outcomes_at,
                                 cudaMemcpyDeviceToHost, stream),
                 "cudaMemcpyAsync (decode statuses to the host)");
    check_cuda(cudaEventRecord(batch.done, stream), "cudaEventRecord (decode batch)");
  } catch (const Error& error) {
    // Workers waiting for this batch to leave must not wait forever.
    record(error);
    launched_cv_.notify_all();
    throw;
  }
  if (trace_.enabled())
    trace_.mark(fmt::format("launched batch {} (chunks {}, stored bytes)", &batch - ring_.data(), batch.pending.size()),
                batch.stored_end);
  batch.closed = false;
  batch.in_flight = true;
  ++launched_;
  launched_cv_.notify_all();
}

void GpuDecodeSink::mark_stage(Batch& batch, std::size_t stage) {
  if (!trace_.enabled()) return;
  cudaEvent_t& event = batch.stage_events[stage];
  if (!event) check_cuda(cudaEventCreate(&event), "cudaEventCreate (trace)");
  check_cuda(cudaEventRecord(event, batch.stream), "cudaEventRecord (trace)");
}

void GpuDecodeSink::ensure_device_block(DeviceBlockPtr& block, std::size_t bytes) {
  if (block && block->capacity >= bytes) return;
  auto& pool = DevicePool::instance();
  if (block) {
    // Only this batch's earlier trips used it, and they are retired.
    std::vector<DeviceBlockPtr> returned;
    returned.push_back(std::move(block));
    pool.release_device_blocks(std::move(returned));
  }
  // Powers of two from 1 MiB, so that reads of different sizes reuse each other's blocks.
  std::size_t size = std::size_t{1} << 20;
  while (size < bytes) size *= 2;
  block = pool.acquire_device_block(options_.device, size);
}

void GpuDecodeSink::retire(Batch& batch) {
  if (!batch.in_flight) return;
  batch.in_flight = false;
  if (trace_.enabled()) trace_.mark(fmt::format("waiting for batch {}", &batch - ring_.data()));
  check_cuda(cudaEventSynchronize(batch.done), "cudaEventSynchronize (decode batch)");
  if (trace_.enabled()) {
    trace_.mark(fmt::format("batch {} done", &batch - ring_.data()));
    std::array<float, 4> at{};
    for (std::size_t k = 0; k < at.size(); ++k)
      if (cudaEventElapsedTime(&at[k], trace_origin_, batch.stage_events[k]) != cudaSuccess) at[k] = -1;
    trace_.mark(fmt::format("batch {} on the GPU (ms from start): upload {:.3f}-{:.3f}, decoded by {:.3f}, placed by {:.3f}",
                            &batch - ring_.data(), at[0], at[1], at[2], at[3]));
  }
  const std::byte* host = batch.tables->host;
  for (const Pending& pending : batch.pending) {
    portable::DecodeStatus status = portable::DecodeStatus::ok;
    if (pending.codec == GpuCodec::lz4 || pending.codec == GpuCodec::zstd) {
      portable::DecodeOutcome outcome;
      std::memcpy(&outcome, host + batch.outcomes_at + pending.first_job * sizeof(outcome), sizeof(outcome));
      status = outcome.status;
      if (status == portable::DecodeStatus::ok && outcome.written != pending.decoded)
        status = portable::DecodeStatus::size_mismatch;
    } else if (pending.codec == GpuCodec::blosc) {
      for (std::uint32_t j = 0; j < pending.jobs && status == portable::DecodeStatus::ok; ++j)
        std::memcpy(&status, host + batch.statuses_at + (pending.first_job + j) * sizeof(status), sizeof(status));
    }
    if (status == portable::DecodeStatus::unsupported && pending.codec == GpuCodec::zstd) {
      decode_on_host(batch, pending);
      continue;
    }
    if (status != portable::DecodeStatus::ok) {
      record(Error(ErrorKind::corrupt_data, fmt::format("{}: codec {}: {} (decoded on the GPU)", pending.where,
                                                        route_.compressor, portable::describe(status))));
      continue;
    }
    ++chunks_;
    bytes_ += pending.decoded;
  }
  batch.pending.clear();
  batch.frame_jobs.clear();
  batch.zstd_jobs.clear();
  batch.blosc_jobs.clear();
  batch.entries.clear();
  batch.alone.clear();
  batch.max_units = 0;
  batch.stored_end = 0;
  batch.decoded_end = 0;
  batch.scratch_end = 0;
  batch.table_bytes = 0;
}

void GpuDecodeSink::decode_on_host(Batch& batch, const Pending& pending) {
  // libzstd, as the CPU path decodes such a chunk (concatenated and skippable frames included),
  // from the chunk's bytes still in the batch's pinned staging.
  std::vector<std::byte> decoded(pending.decoded);
  const std::byte* stored = batch.stored->host + pending.stored_at;
  const std::size_t written = ZSTD_decompress(decoded.data(), decoded.size(), stored, pending.stored_size);
  if (ZSTD_isError(written) || written != pending.decoded) {
    const std::string why = ZSTD_isError(written) ? std::string(ZSTD_getErrorName(written))
                                                  : fmt::format("decoded to {} bytes, not {}", written, pending.decoded);
    record(Error(ErrorKind::corrupt_data, fmt::format("{}: codec {}: {}", pending.where, route_.compressor, why)));
    return;
  }
  // Over what the GPU left in the chunk's slot, then placed again: the batch's placement already
  // copied that slot, and nothing else writes the chunk's box in the destination.
  cudaStream_t stream = batch.stream;
  std::byte* base = batch.decoded->data;
  check_cuda(cudaMemcpyAsync(base + pending.decoded_at, decoded.data(), decoded.size(), cudaMemcpyHostToDevice, stream),
             "cudaMemcpyAsync (a chunk decoded by libzstd to the device)");
  if (pending.entry_index >= 0) {
    const auto index = static_cast<std::size_t>(pending.entry_index);
    const auto* entries = reinterpret_cast<const BatchEntry*>(batch.tables->scratch() + batch.entries_at);
    check_cuda(launch_batch(entries + index, 1, batch.entries[index].count, base, stream),
               "placement kernel launch (a chunk decoded by libzstd)");
  }
  if (pending.alone_index >= 0) {
    const AloneCopy& copy = batch.alone[static_cast<std::size_t>(pending.alone_index)];
    check_cuda(launch_copy(copy.plan, base + copy.src_offset, copy.dst, stream),
               "scatter kernel launch (a chunk decoded by libzstd)");
  }
  check_cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize (a chunk decoded by libzstd)");
  ++host_chunks_;
  host_bytes_ += pending.decoded;
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
  std::lock_guard lock(mutex_);
  SinkDecodeCounts counts;
  counts.chunks = chunks_;
  counts.bytes = bytes_;
  counts.host_chunks = host_chunks_;
  counts.host_bytes = host_bytes_;
  return counts;
}

std::size_t GpuDecodeSink::batches_launched() const {
  std::lock_guard lock(mutex_);
  return launched_;
}

void GpuDecodeSink::finish() {
  trace_.mark("every chunk read");
  if (!worker_laps_.empty()) {
    std::array<double, kWorkerPhases> ms{};
    for (const PhaseLaps& laps : worker_laps_)
      for (std::size_t p = 0; p < kWorkerPhases; ++p) ms[p] += static_cast<double>(laps.nanoseconds()[p]) / 1e6;
    trace_.mark(fmt::format("workers' ms, summed over {}: between chunks (reading) {:.3f}, listing {:.3f}, "
                            "batching {:.3f}, copying in {:.3f}",
                            worker_laps_.size(), ms[kOutside], ms[kListing], ms[kBatching], ms[kCopying]));
  }
  std::exception_ptr failure;
  try {
    use_device(options_.device);
    std::unique_lock lock(mutex_);
    // Every worker is done: no batch has writers, a closed one was launched by its last, and
    // only the open one is left to send.
    for (std::size_t k = 1; k <= kBatches && !failed_; ++k) {
      Batch& batch = ring_[(open_ + k) % kBatches];
      if (!batch.empty() && !batch.in_flight) launch(batch);
    }
    for (std::size_t k = 1; k <= kBatches; ++k) retire(ring_[(open_ + k) % kBatches]);  // in launch order
  } catch (...) {
    failure = std::current_exception();
  }
  try {
    inner_.finish();
  } catch (...) {
    if (!failure) failure = std::current_exception();
  }
  bool broken = false;
  for (auto& batch : ring_)
    if (batch.stream && cudaStreamSynchronize(batch.stream) != cudaSuccess) broken = true;
  finished_ = true;
  release(broken);
  trace_.mark("finished");
  trace_.print();
  if (failure) std::rethrow_exception(failure);
  std::lock_guard lock(error_mutex_);
  if (error_) throw Error(error_->kind(), error_->what());
}

void GpuDecodeSink::release(bool broken) {
  std::vector<SlotPtr> slots;
  std::vector<DeviceBlockPtr> blocks;
  std::vector<cudaStream_t> streams;
  std::vector<cudaEvent_t> events;
  if (ready_) events.push_back(ready_);
  ready_ = nullptr;
  for (auto& batch : ring_) {
    if (batch.stored) slots.push_back(std::move(batch.stored));
    if (batch.tables) slots.push_back(std::move(batch.tables));
    if (batch.decoded) blocks.push_back(std::move(batch.decoded));
    if (batch.scratch) blocks.push_back(std::move(batch.scratch));
    if (batch.done) events.push_back(batch.done);
    batch.done = nullptr;
    if (batch.stream) streams.push_back(batch.stream);
    batch.stream = nullptr;
  }
  // Tracing only: created here, not pooled.
  if (trace_origin_) cudaEventDestroy(trace_origin_);
  trace_origin_ = nullptr;
  for (auto& batch : ring_)
    for (cudaEvent_t& event : batch.stage_events) {
      if (event) cudaEventDestroy(event);
      event = nullptr;
    }
  auto& pool = DevicePool::instance();
  if (broken) {
    // The GPU failed: its work may still reference these. Leak rather than free under it.
    pool.forget_slots(std::move(slots));
    for (auto& block : blocks) (void)block.release();
    return;
  }
  pool.release_slots(std::move(slots), pool_budget(options_));
  pool.release_device_blocks(std::move(blocks));
  pool.release_streams(options_.device, std::move(streams));
  // The streams have drained: nothing waits on these events any more.
  for (cudaEvent_t event : events) pool.release_event(options_.device, event);
}

}  // namespace zarrdirect::cuda

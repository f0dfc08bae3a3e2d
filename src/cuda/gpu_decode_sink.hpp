// The device sink that decodes compressed chunks on the GPU (Settings::decode, issue 18).
//
// Wraps a DeviceSink: fills and chunks the reader decodes on the CPU (staging()/place()) go to it
// unchanged. place_stored() takes a chunk's stored bytes instead: it plans the chunk on the host
// (codec::portable::blosc_plan, the numcodecs lz4 size header, or the zstd frame header), packs its bytes into the
// worker's pinned batch buffer and adds its decode jobs (one per blosc stream, blosc_gpu_jobs.hpp,
// plus one unshuffle per shuffled block; one per lz4 or zstd chunk)
// and its placement entry (batch_table.hpp's BatchEntry, swap and transpose folded into the
// strides: stored_box_plan.hpp). A chunk the planner refuses (blosclz or zstd inside blosc, a
// frame it cannot plan, a size header that is not the chunk's) is left to the reader, which
// decodes it on the CPU: per chunk, mixed within one read.
//
// Batches are shared by all the read's workers, so that one launch decodes the chunks of many
// workers at once: a warp decodes one lz4 chunk or blosc stream, and the kernels reach their
// speed only with thousands of jobs in flight (docs/BENCHMARKS.md: per-worker batches of a few
// chunks ran at 1-18% of the kernels' rate). A worker lists its chunk's jobs on its own, then
// under the sink's lock reserves the chunk's place in the open batch and appends them, then copies
// the chunk's bytes in outside the lock. A batch that is full is closed; the last worker still
// copying into it launches it on the batch's own stream: one copy of the stored bytes, one of the
// tables, one decode launch per codec (lz4_warp_kernels.cuh), one unshuffle launch, one placement
// launch (plus single-box copies for boxes a table entry cannot hold), and one copy of the jobs'
// statuses back. kBatches batches turn in a ring, so several are on the GPU at once while the
// workers fill the next; a batch is retired (its event waited for, every job's status checked)
// before it is filled again. A job that is not `ok` fails the read with Error(corrupt_data)
// naming the chunk (at a later place_stored(), as EarlierChunkError, or at finish()). Decoders
// write only inside their chunk's slot of the decode buffer, and placement entries come from the
// boxes alone, so hostile bytes never write outside the destination region (a failed read leaves
// that region undefined, as on the CPU path). Pinned and device buffers come from DevicePool and
// go back to it, so a read after the first allocates nothing; a batch takes its pinned staging
// when first filled and device memory for what it holds, so a small read holds little.
// zstd chunks are listed as block jobs on the worker (zstd_gpu_jobs.hpp); a chunk the listing
// does not take (more frames after the first, a skippable frame, damage) is decoded on the CPU
// there. A frame that needs what the GPU decoder leaves to libzstd only once decoding has begun
// (a 12-bit Huffman table) comes back `unsupported`; that chunk is decoded with libzstd when its
// batch is retired and placed again (decode_on_host), so such frames are read, never refused.
//
// Shared decoding (DecodeSide::share): a worker whose chunk finds no room in the ring now -- the
// open batch still on the GPU, or closed and waiting for another worker's copy -- decodes the
// chunk on the CPU instead of waiting, so a GPU decoder slower than the cores adds its rate to
// theirs rather than holding them back. Which chunks go where depends on timing; each is decoded
// once, by one side, and the read's result is the same.
#pragma once

#include <cuda_runtime_api.h>

#include <array>
#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "codec/portable/blosc_frame.hpp"
#include "cuda/batch_entry.hpp"
#include "cuda/device_pool.hpp"
#include "cuda/device_sink.hpp"
#include "cuda/gpu_decode_job.hpp"
#include "cuda/blosc_gpu_jobs.hpp"
#include "cuda/stored_box_plan.hpp"
#include "cuda/zstd_gpu_jobs.hpp"
#include "engine/gpu_decode_route.hpp"
#include "util/phase_trace.hpp"

namespace zarrdirect::cuda {

class GpuDecodeSink final : public ChunkSink {
 public:
  // `inner` places what is not decoded here and must outlive this sink; `route` is the chain's
  // (GpuCodec lz4, blosc or zstd); `chunk_bytes` a decoded chunk's size (inner chunk when
  // sharded); `share`: leave a chunk to the CPU rather than wait for room in the ring.
  GpuDecodeSink(DeviceSink& inner, const GpuDecodeRoute& route, std::size_t chunk_bytes,
                const DeviceSinkOptions& options, bool share = false);
  ~GpuDecodeSink() override;
  GpuDecodeSink(const GpuDecodeSink&) = delete;
  GpuDecodeSink& operator=(const GpuDecodeSink&) = delete;

  std::string_view name() const override { return inner_.name(); }
  void start(unsigned workers, std::size_t max_chunk_bytes) override;
  std::span<std::byte> staging(unsigned worker, std::size_t nbytes) override { return inner_.staging(worker, nbytes); }
  void place(unsigned worker, std::span<const std::byte> chunk, const ChunkBox& box) override {
    inner_.place(worker, chunk, box);
  }
  void fill(unsigned worker, const ChunkBox& box) override { inner_.fill(worker, box); }
  bool place_stored(unsigned worker, std::span<const std::byte> stored, const ChunkBox& box,
                    std::string_view where) override;
  SinkDecodeCounts sink_decoded() const override;
  void finish() override;

  // Batches sent to the GPU so far, for tests.
  std::size_t batches_launched() const;

  // Batches in the ring: enough to keep the GPU decoding some while the workers fill others.
  static constexpr std::size_t kBatches = 4;

 private:
  // One chunk of a batch: what to check after the batch ran.
  struct Pending {
    std::string where;
    GpuCodec codec = GpuCodec::none;
    std::uint32_t first_job = 0;  // in its codec's job table (blosc: the stream jobs)
    std::uint32_t jobs = 0;
    std::uint64_t decoded = 0;    // bytes the chunk must decode to
    // For a chunk decoded again on the host (a zstd frame the GPU leaves to libzstd): where its
    // stored bytes are in the batch's staging, its slot in the decode buffer, and its placement
    // (an index in the batch's entries or alone copies; -1: none).
    std::size_t stored_at = 0;
    std::size_t stored_size = 0;
    std::size_t decoded_at = 0;
    std::int64_t entry_index = -1;
    std::int64_t alone_index = -1;
  };
  // A box a placement entry cannot hold, copied by its own launch.
  struct AloneCopy {
    CopyPlan plan;
    std::uint64_t src_offset = 0;  // in the decode buffer
    std::byte* dst = nullptr;
  };
  struct Batch {
    SlotPtr stored;  // pinned stored bytes and their device copy (the slot's scratch)
    SlotPtr tables;  // pinned tables up and statuses back, and their device copy
    DeviceBlockPtr decoded;  // from the pool, sized at launch to what the batch holds
    DeviceBlockPtr scratch;  // blosc blocks' unshuffle scratch, zstd blocks' tables and streams, likewise
    cudaStream_t stream = nullptr;
    cudaEvent_t done = nullptr;
    std::size_t stored_end = 0;
    std::size_t decoded_end = 0;
    std::size_t scratch_end = 0;
    std::size_t table_bytes = 0;  // what the tables and statuses take, padding included
    std::vector<GpuDecodeJob> frame_jobs;  // lz4: one per chunk
    ZstdGpuJobs zstd_jobs;                 // zstd: a frame job per chunk, a job per block
    BloscGpuJobs blosc_jobs;
    std::vector<BatchEntry> entries;
    std::uint32_t max_units = 0;
    std::vector<AloneCopy> alone;
    std::vector<Pending> pending;
    // Offsets in the tables slot of the statuses copied back (valid while in flight).
    std::size_t entries_at = 0;
    std::size_t outcomes_at = 0;
    std::size_t statuses_at = 0;
    // ZARRDIRECT_TRACE=1: events around the batch's upload, decode and placement on its stream.
    std::array<cudaEvent_t, 4> stage_events{};
    unsigned writers = 0;    // workers copying a chunk's bytes in, outside the lock
    bool closed = false;     // full: launched by its last writer
    bool in_flight = false;  // launched, not yet retired
    bool empty() const { return pending.empty(); }
  };
  // Reserves room for a chunk (stored bytes, scratch, table bytes) in the open batch, closing
  // full batches and retiring those whose ring turn has come; nullptr when no batch could ever hold
  // it, or (shared decoding) when none can hold it without waiting. Called with the lock held (it
  // may wait on `lock`).
  Batch* open_batch_for(std::unique_lock<std::mutex>& lock, std::size_t stored, std::size_t scratch,
                        std::size_t table_bytes);
  // Shared decoding: whether the open batch can take a chunk now (not closed, not on the GPU).
  // Lock held.
  bool open_batch_free() const;
  // Sends a batch to the GPU (lock held).
  void launch(Batch& batch);
  // ZARRDIRECT_TRACE=1: records the batch's event for `stage` (0 before its upload, 1 after it, 2
  // after decoding, 3 after placement) on its stream.
  void mark_stage(Batch& batch, std::size_t stage);
  // `block` holds at least `bytes` (a power of two from 1 MiB, from the pool; a smaller one goes
  // back to it).
  void ensure_device_block(DeviceBlockPtr& block, std::size_t bytes);
  // Waits for a batch sent earlier and checks its statuses, recording the first failure (lock held).
  void retire(Batch& batch);
  // A retired batch's chunk the GPU left `unsupported` (a zstd frame followed by more frames, or
  // with Huffman tables past the format's 11 bits): decoded with libzstd and placed again.
  void decode_on_host(Batch& batch, const Pending& pending);
  void record(Error error);
  void throw_if_failed();
  void release(bool broken);

  DeviceSink& inner_;
  GpuDecodeRoute route_;
  bool share_ = false;
  StoredLayout layout_;
  std::size_t chunk_bytes_;
  DeviceSinkOptions options_;
  std::size_t stored_capacity_ = 0;   // pinned bytes of one batch's stored chunks
  std::size_t decoded_capacity_ = 0;  // decoded bytes of one batch (and its scratch)
  std::size_t table_capacity_ = 0;    // pinned bytes of one batch's tables
  std::vector<BloscGpuJobs> listed_;  // per worker: a chunk's jobs, listed before the lock
  std::vector<ZstdGpuJobs> listed_zstd_;  // likewise, for zstd
  mutable std::mutex mutex_;          // guards the ring, the counts and every batch's lists
  std::condition_variable launched_cv_;
  std::array<Batch, kBatches> ring_;
  std::size_t open_ = 0;
  std::size_t launched_ = 0;
  std::uint64_t chunks_ = 0;
  std::uint64_t bytes_ = 0;
  std::uint64_t host_chunks_ = 0;  // chunks decode_on_host() decoded
  std::uint64_t host_bytes_ = 0;
  cudaEvent_t ready_ = nullptr;
  std::atomic<bool> failed_{false};
  std::mutex error_mutex_;
  std::unique_ptr<Error> error_;
  bool finished_ = false;
  // ZARRDIRECT_TRACE=1: the read's first chunk, each batch's launch and wait, printed at finish().
  PhaseTrace trace_{"gpu-decode"};
  cudaEvent_t trace_origin_ = nullptr;  // recorded at start(): the GPU side's time zero
  // With the trace on, per worker: time between place_stored calls (reading the chunk, or
  // decoding one refused here), listing, batching (under the lock, launches included) and copying
  // into the pinned batch; summed at finish().
  enum WorkerPhase : std::size_t { kOutside, kListing, kBatching, kCopying, kWorkerPhases };
  std::vector<PhaseLaps> worker_laps_;
};

}  // namespace zarrdirect::cuda

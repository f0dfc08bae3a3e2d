// The device sink that decodes compressed chunks on the GPU (Settings::decode, issue 18).
//
// Wraps a DeviceSink: fills and chunks the reader decodes on the CPU (staging()/place()) go to it
// unchanged. place_stored() takes a chunk's stored bytes instead: it plans the chunk on the host
// (codec::portable::blosc_plan, or the numcodecs lz4 size header), packs its bytes into the
// worker's pinned batch buffer and adds its decode jobs (one per blosc stream, blosc_gpu_jobs.hpp,
// plus one unshuffle per shuffled block; one per lz4 chunk)
// and its placement entry (batch_table.hpp's BatchEntry, swap and transpose folded into the
// strides: stored_box_plan.hpp). A chunk the planner refuses (blosclz or zstd inside blosc, a
// frame it cannot plan, a size header that is not the chunk's) is left to the reader, which
// decodes it on the CPU: per chunk, mixed within one read.
//
// A full batch (or finish()) goes to the GPU on the worker's stream: one copy of the stored bytes,
// one of the tables, one decode launch per codec (one warp per lz4 chunk or blosc stream:
// lz4_warp_kernels.cuh) and one unshuffle launch, one placement launch (plus single-box copies for
// boxes a table entry cannot hold), and one copy of the jobs' statuses back. Each worker has two
// batches: it fills one while the other is on the GPU, and before refilling a batch it waits for
// that batch's event and checks every job's status. A job that is not `ok` fails the read with
// Error(corrupt_data) naming the chunk (at the next place_stored() of that worker, as
// EarlierChunkError, or at finish()). Decoders write only inside their chunk's slot of the decode
// buffer, and placement entries come from the boxes alone, so hostile bytes never write outside
// the destination region (a failed read leaves that region undefined, as on the CPU path).
//
// Adding a codec (zstd): see the "codec slot" comments in gpu_decode_sink.cpp.
#pragma once

#include <cuda_runtime_api.h>

#include <array>
#include <atomic>
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
#include "engine/gpu_decode_route.hpp"

namespace zarrdirect::cuda {

class GpuDecodeSink final : public ChunkSink {
 public:
  // `inner` places what is not decoded here and must outlive this sink; `route` is the chain's
  // (GpuCodec lz4 or blosc); `chunk_bytes` a decoded chunk's size (inner chunk when sharded).
  GpuDecodeSink(DeviceSink& inner, const GpuDecodeRoute& route, std::size_t chunk_bytes,
                const DeviceSinkOptions& options);
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

 private:
  // Device memory that grows (freed and allocated again) when a batch needs more.
  struct DeviceBuffer {
    std::byte* data = nullptr;
    std::size_t capacity = 0;
    void reserve(std::size_t nbytes);
    ~DeviceBuffer();
  };
  struct PinnedBuffer {
    std::byte* data = nullptr;
    std::size_t capacity = 0;
    void reserve(std::size_t nbytes);
    ~PinnedBuffer();
  };
  // One chunk of a batch: what to check after the batch ran.
  struct Pending {
    std::string where;
    GpuCodec codec = GpuCodec::none;
    std::uint32_t first_job = 0;  // in its codec's job table (blosc: the stream jobs)
    std::uint32_t jobs = 0;
    std::uint64_t decoded = 0;    // bytes the chunk must decode to
  };
  struct Batch {
    SlotPtr stored;  // pinned host bytes and their device copy (scratch)
    DeviceBuffer decoded;
    DeviceBuffer scratch;  // blosc blocks' unshuffle scratch
    DeviceBuffer tables;
    PinnedBuffer tables_host;  // tables on the way up, statuses on the way back
    std::size_t stored_end = 0;
    std::size_t decoded_end = 0;
    std::size_t scratch_end = 0;
    std::vector<GpuDecodeJob> lz4_jobs;
    BloscGpuJobs blosc_jobs;
    std::vector<BatchEntry> entries;
    std::uint32_t max_units = 0;
    std::vector<std::pair<CopyPlan, std::pair<std::uint64_t, std::byte*>>> alone;  // plan, source offset, destination
    std::vector<Pending> pending;
    // Offsets in tables_host of the statuses copied back (valid while in flight).
    std::size_t outcomes_at = 0;
    std::size_t statuses_at = 0;
    cudaEvent_t done = nullptr;
    bool in_flight = false;
    bool empty() const { return pending.empty(); }
  };
  struct alignas(64) Worker {
    cudaStream_t stream = nullptr;
    std::array<Batch, 2> batches;
    std::size_t active = 0;
    std::size_t launched = 0;
    std::uint64_t chunks = 0;
    std::uint64_t bytes = 0;
  };

  // The active batch, retired if it was in flight, with room for a chunk of `stored` bytes;
  // flushes (and switches batches) when it has none.
  Batch& batch_for(Worker& worker, std::size_t stored);
  void flush(Worker& worker);
  // Waits for a batch sent earlier and checks its statuses (records the first failure).
  void retire(Worker& worker, Batch& batch);
  void record(Error error);
  void throw_if_failed();
  void release(bool broken);

  DeviceSink& inner_;
  GpuDecodeRoute route_;
  StoredLayout layout_;
  std::size_t chunk_bytes_;
  DeviceSinkOptions options_;
  std::size_t stored_capacity_ = 0;   // pinned bytes of one batch's stored chunks
  std::size_t decoded_capacity_ = 0;  // decoded bytes of one batch
  std::vector<Worker> workers_;
  cudaEvent_t ready_ = nullptr;
  std::atomic<bool> failed_{false};
  std::mutex error_mutex_;
  std::unique_ptr<Error> error_;
  bool finished_ = false;
};

}  // namespace zarrdirect::cuda

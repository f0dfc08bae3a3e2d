// The CUDA side of engine/device_placer.hpp: upload-once placement for read_many.
//
// A few staging batches (pinned host memory, its device copy and an event: StagingSlot of the
// DevicePool; ordinary memory where the process's pinned budget is spent by other reads) take
// turns. Workers reserve room for a chunk's bytes and entries in the open batch
// under the lock, write the bytes with no lock held, and commit its entries (BatchTable). A batch
// without room is sealed; the last of its writers to commit submits it: the table is written
// after the chunks, the chunks and table go up in one copy, and one launch of the batch kernel
// places every entry. Whole chunks meant for the device cache are then copied device to device
// into memory of their own, and join the cache once finish() has waited for the stream. Before a
// batch is reused, its event is waited for, so its pinned memory is never overwritten while in
// flight; device-cache chunks a batch reads stay referenced until it is done.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <optional>

#include <fmt/format.h>

#include "cuda/batch_kernels.cuh"
#include "cuda/batch_table.hpp"
#include "cuda/cuda_check.hpp"
#include "cuda/cuda_runtime_state.hpp"
#include "cuda/device_pool.hpp"
#include "engine/device_placer.hpp"

namespace zarrdirect {
namespace {

static_assert(kPlacerMaxRank == static_cast<std::size_t>(cuda::kBatchMaxRank));

constexpr std::size_t kBatches = 3;
constexpr std::size_t kPage = 4096;
// A batch is a third of the read's staging budget (Settings::staging_bytes), at most this much,
// and at least what one chunk and its entries need.
constexpr std::size_t kMaxBatchBytes = std::size_t{128} << 20;

void free_device_chunk(std::byte* data, int device) {
  int current = -1;
  const bool restore = cudaGetDevice(&current) == cudaSuccess && current != device;
  if (restore) cudaSetDevice(device);
  cudaFree(data);  // at process exit the runtime may be gone: nothing to report to
  if (restore) cudaSetDevice(current);
}

// The CUDA device holding `pointer`, or Error(invalid_argument) when it is not CUDA memory.
int device_of(const void* pointer, std::size_t region) {
  cudaPointerAttributes attributes{};
  cuda::check_cuda(cudaPointerGetAttributes(&attributes, pointer), "cudaPointerGetAttributes (read_many destination)");
  // Pinned host memory the kernel reaches at the same address (UVA) is a destination too.
  const bool mapped_host = attributes.type == cudaMemoryTypeHost && attributes.devicePointer == pointer;
  if (attributes.type != cudaMemoryTypeDevice && attributes.type != cudaMemoryTypeManaged && !mapped_host)
    throw Error(ErrorKind::invalid_argument,
                fmt::format("read_many: destination {} is ordinary host memory, not CUDA memory", region));
  return attributes.device;
}

class CudaPlacer final : public DevicePlacer {
 public:
  CudaPlacer(const std::vector<DestinationLayout>& destinations, std::uint64_t max_chunk_bytes, const Settings& settings,
             void* cuda_stream)
      : destinations_(destinations), pool_budget_(settings.effective_pinned_pool()) {
    if (cuda::cuda_device_count() == 0)
      throw Error(ErrorKind::cuda, fmt::format("read_many: no usable CUDA device ({})", cuda::cuda_unavailable_reason()));
    if (destinations.empty()) throw Error(ErrorKind::invalid_argument, "read_many: no destinations");
    device_ = device_of(destinations.front().data, 0);
    for (std::size_t i = 1; i < destinations.size(); ++i)
      if (device_of(destinations[i].data, i) != device_)
        throw Error(ErrorKind::invalid_argument,
                    fmt::format("read_many: destination {} is on CUDA device {}, destination 0 on {}: one device per "
                                "call",
                                i, device_of(destinations[i].data, i), device_));
    cuda::use_device(device_);
    // Room for the largest chunk and the entries of one stage, with the rest of a batch for more.
    const std::size_t least = (static_cast<std::size_t>(max_chunk_bytes) + kPage - 1) / kPage * kPage +
                              kMaxBoxesPerStage * sizeof(cuda::BatchEntry) + kPage;
    capacity_ = std::max(least, std::min(settings.staging_bytes / kBatches, kMaxBatchBytes));
    // Pinned as far as the process's pool grants (pinned_policy.hpp); ordinary memory beyond.
    auto slots = cuda::DevicePool::instance().acquire_staging(device_, capacity_, kBatches, pool_budget_);
    for (auto& slot : slots) batches_.push_back(std::make_unique<Batch>(std::move(slot), capacity_));
    stream_ = static_cast<cudaStream_t>(cuda_stream);
    if (!stream_) {
      owned_ = cuda::DevicePool::instance().acquire_streams(device_, 1);
      stream_ = owned_.front();
    }
  }

  ~CudaPlacer() override {
    // After a failure: what was submitted finishes before the buffers go back to the pool.
    cuda::DeviceRestorer restore;
    cuda::use_device(device_);
    cudaStreamSynchronize(stream_);
    std::vector<cuda::SlotPtr> slots;
    for (auto& batch : batches_) slots.push_back(std::move(batch->slot));
    cuda::DevicePool::instance().release_slots(std::move(slots), pool_budget_);
    if (!owned_.empty()) cuda::DevicePool::instance().release_streams(device_, owned_);
  }

  Staged stage(std::size_t nbytes, std::size_t boxes) override {
    std::unique_lock lock(mutex_);
    for (;;) {
      Batch& batch = ready(lock);
      if (auto offset = batch.table.reserve(nbytes, boxes)) {
        ++batch.writers;
        return Staged{batch.slot->host + *offset, current_, *offset};
      }
      if (batch.table.empty())
        throw Error(ErrorKind::invalid_argument,
                    fmt::format("read_many: {} chunk bytes and {} entries do not fit a {} byte batch", nbytes, boxes,
                                capacity_));
      advance(lock);
    }
  }

  void commit(const Staged& staged, ChunkSpan held, std::uint64_t chunk_bytes, std::span<const ManyBox> boxes,
              const DeviceCacheInsert* insert) override {
    std::unique_lock lock(mutex_);
    Batch& batch = *batches_[staged.batch];
    try {
      for (const ManyBox& many : boxes)
        if (!batch.table.add_copy(staged.offset, static_cast<std::size_t>(held.nbytes), many.box,
                                  destinations_[many.region], static_cast<std::size_t>(held.first)))
          throw Error(ErrorKind::unsupported,
                      fmt::format("read_many: a box of region {} does not fit the batch kernel", many.region));
      if (insert && held.first == 0 && held.nbytes == chunk_bytes)
        batch.inserts.push_back({staged.offset, static_cast<std::size_t>(chunk_bytes), *insert});
    } catch (...) {
      done_writing(lock, batch);
      throw;
    }
    done_writing(lock, batch);
  }

  void abandon(const Staged& staged) override {
    std::unique_lock lock(mutex_);
    done_writing(lock, *batches_[staged.batch]);
  }

  void place_resident(const DecodedChunkPtr& chunk, std::span<const ManyBox> boxes) override {
    std::unique_lock lock(mutex_);
    for (;;) {
      Batch& batch = ready(lock);
      if (batch.table.reserve(0, boxes.size())) {
        for (const ManyBox& many : boxes)
          if (!batch.table.add_copy_absolute(chunk->data.get(), chunk->size, many.box, destinations_[many.region]))
            throw Error(ErrorKind::unsupported,
                        fmt::format("read_many: a box of region {} does not fit the batch kernel", many.region));
        batch.keep.push_back(chunk);
        return;
      }
      advance(lock);
    }
  }

  void fill(std::span<const ManyBox> boxes, std::span<const std::byte> value) override {
    std::unique_lock lock(mutex_);
    std::vector<ManyBox> work(boxes.begin(), boxes.end());
    while (!work.empty()) {
      const ManyBox many = work.back();
      work.pop_back();
      switch (ready(lock).table.add_fill(many.box, destinations_[many.region], value)) {
        case cuda::BatchTable::Added::yes: break;
        case cuda::BatchTable::Added::full:
          work.push_back(many);
          advance(lock);
          break;
        case cuda::BatchTable::Added::alone: {
          // Larger than a batch likes: halves of its outermost dimension longer than one.
          std::size_t d = 0;
          while (d < many.box.rank && many.box.extent[d] < 2) ++d;
          if (d == many.box.rank)
            throw Error(ErrorKind::unsupported, "read_many: a fill the batch kernel cannot take");
          ManyBox low = many;
          ManyBox high = many;
          low.box.extent[d] = many.box.extent[d] / 2;
          high.box.extent[d] = many.box.extent[d] - low.box.extent[d];
          high.box.offset_in_chunk[d] += low.box.extent[d];
          high.box.offset_in_dest[d] += low.box.extent[d];
          work.push_back(low);
          work.push_back(high);
          break;
        }
      }
    }
  }

  void finish() override {
    {
      std::unique_lock lock(mutex_);
      Batch& batch = ready(lock);
      if (!batch.table.empty() || batch.writers > 0) {
        batch.sealed = true;
        batch.needs_reset = true;
        if (batch.writers == 0) submit(batch);
      }
      idle_.wait(lock, [&] {
        for (auto& b : batches_)
          if (b->sealed) return false;
        return true;
      });
    }
    cuda::DeviceRestorer restore;
    cuda::use_device(device_);
    cuda::check_cuda(cudaStreamSynchronize(stream_), "cudaStreamSynchronize (read_many placement)");
    for (auto& batch : batches_) batch->keep.clear();
    for (auto& done : uploaded_) done.insert.cache->insert(done.insert.key, done.insert.inner, done.insert.signature, done.chunk);
    uploaded_.clear();
  }

  int device() const override { return device_; }

 private:
  struct Insert {
    std::size_t offset;  // of the whole chunk in the batch's staging
    std::size_t nbytes;
    DeviceCacheInsert insert;
  };
  struct Uploaded {
    DecodedChunkPtr chunk;
    DeviceCacheInsert insert;
  };
  struct Batch {
    Batch(cuda::SlotPtr s, std::size_t capacity) : slot(std::move(s)), table(capacity) {}
    cuda::SlotPtr slot;
    cuda::BatchTable table;
    std::size_t writers = 0;  // stages not yet committed or abandoned
    bool sealed = false;      // no more stages; submitted when the last writer is done
    bool submitted = false;   // its event is recorded: wait for it before reuse
    bool needs_reset = false; // sealed since it was last opened
    std::vector<DecodedChunkPtr> keep;  // device-cache chunks its entries read
    std::vector<Insert> inserts;
  };

  void done_writing(std::unique_lock<std::mutex>&, Batch& batch) {
    --batch.writers;
    if (batch.sealed && batch.writers == 0) submit(batch);
  }

  // Seals the open batch and moves on to the next one (ready() opens it).
  void advance(std::unique_lock<std::mutex>&) {
    Batch& batch = *batches_[current_];
    batch.sealed = true;
    batch.needs_reset = true;
    if (batch.writers == 0) submit(batch);
    current_ = (current_ + 1) % batches_.size();
  }

  // The open batch: waits until the current one is no longer sealed (its writers are done and it
  // is submitted), then, the first time after it was sealed, for its GPU work, and empties it.
  Batch& ready(std::unique_lock<std::mutex>& lock) {
    idle_.wait(lock, [&] { return !batches_[current_]->sealed; });
    Batch& batch = *batches_[current_];
    if (batch.needs_reset) {
      if (batch.submitted)
        cuda::check_cuda(cudaEventSynchronize(batch.slot->done), "cudaEventSynchronize (read_many batch)");
      batch.submitted = false;
      batch.needs_reset = false;
      batch.table.clear();
      batch.keep.clear();
      batch.inserts.clear();
    }
    return batch;
  }

  // Uploads the batch's chunks and table and places them. Called with the lock held.
  void submit(Batch& batch) {
    batch.sealed = false;
    idle_.notify_all();
    if (batch.table.empty()) return;
    cuda::DeviceRestorer restore;
    cuda::use_device(device_);
    const std::size_t bytes = batch.table.upload_bytes();
    batch.table.write_table(std::span(batch.slot->host, batch.slot->capacity));
    std::byte* uploaded = batch.slot->scratch();
    cuda::check_cuda(cudaMemcpyAsync(uploaded, batch.slot->host, bytes, cudaMemcpyHostToDevice, stream_),
                     "cudaMemcpyAsync (read_many batch to the device)");
    const auto entries = batch.table.entries();
    for (std::size_t at = 0; at < entries.size(); at += cuda::kMaxBatchEntries) {
      const std::size_t count = std::min(cuda::kMaxBatchEntries, entries.size() - at);
      cuda::check_cuda(cuda::launch_batch(reinterpret_cast<const cuda::BatchEntry*>(uploaded + batch.table.table_offset()) + at,
                                          count, batch.table.max_units(), uploaded, stream_),
                       "launch_batch (read_many placement)");
    }
    for (const Insert& insert : batch.inserts) {
      const std::size_t nbytes = insert.nbytes;
      if (!insert.insert.cache || nbytes == 0 || nbytes > insert.insert.cache->capacity()) continue;
      void* copy = nullptr;
      if (cudaMalloc(&copy, nbytes) != cudaSuccess) {
        cudaGetLastError();  // out of device memory: the chunk is simply not cached
        continue;
      }
      auto chunk = std::make_shared<DecodedChunk>(static_cast<std::byte*>(copy), nbytes, device_, free_device_chunk);
      cuda::check_cuda(cudaMemcpyAsync(copy, uploaded + insert.offset, nbytes, cudaMemcpyDeviceToDevice, stream_),
                       "cudaMemcpyAsync (chunk into the device cache)");
      uploaded_.push_back({std::move(chunk), insert.insert});
    }
    batch.inserts.clear();
    cuda::check_cuda(cudaEventRecord(batch.slot->done, stream_), "cudaEventRecord (read_many batch)");
    batch.submitted = true;
  }

  const std::vector<DestinationLayout>& destinations_;
  std::size_t pool_budget_;  // the process's pinned budget (Settings::pinned_pool_bytes)
  int device_ = 0;
  std::size_t capacity_ = 0;
  std::vector<std::unique_ptr<Batch>> batches_;
  std::size_t current_ = 0;
  cudaStream_t stream_ = nullptr;
  std::vector<cudaStream_t> owned_;
  std::mutex mutex_;
  std::condition_variable idle_;
  std::vector<Uploaded> uploaded_;
};

}  // namespace

std::unique_ptr<DevicePlacer> make_device_placer(const std::vector<DestinationLayout>& destinations,
                                                 std::uint64_t max_chunk_bytes, const Settings& settings,
                                                 void* cuda_stream) {
  cuda::DeviceRestorer restore;
  return std::make_unique<CudaPlacer>(destinations, max_chunk_bytes, settings, cuda_stream);
}

}  // namespace zarrdirect

// A DevicePlacer (engine/device_placer.hpp) that runs on the host: the same BatchTable the CUDA
// placer builds, applied by place_batch_on_host() (the kernel's reference) to destinations in host
// memory, and a "device cache" whose entries are host copies marked as device 0. Lets the batch
// reader's device path (what is staged, which boxes, fills, cache hits, inserts, evictions and
// invalidations) be tested without a GPU; the GPU test (device_placer_test.cpp) checks the CUDA
// placer against ordinary reads.
#pragma once

#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "cuda/batch_table.hpp"
#include "engine/device_placer.hpp"

namespace zarrdirect::test {

class HostPlacer final : public DevicePlacer {
 public:
  HostPlacer(const std::vector<DestinationLayout>& destinations, std::size_t capacity)
      : destinations_(destinations), table_(capacity),
        staging_(static_cast<std::byte*>(std::aligned_alloc(4096, (capacity + 4095) / 4096 * 4096))) {}
  ~HostPlacer() override { std::free(staging_); }

  Staged stage(std::size_t nbytes, std::size_t boxes) override {
    std::unique_lock lock(mutex_);
    for (;;) {
      if (auto offset = table_.reserve(nbytes, boxes)) {
        ++writers_;
        staged_bytes += nbytes;
        ++stages;
        return {staging_ + *offset, 0, *offset};
      }
      if (table_.empty()) throw Error(ErrorKind::invalid_argument, "host placer: a chunk larger than the batch");
      flush(lock);
    }
  }
  void commit(const Staged& staged, ChunkSpan held, std::uint64_t chunk_bytes, std::span<const ManyBox> boxes,
              const DeviceCacheInsert* insert) override {
    std::unique_lock lock(mutex_);
    for (const ManyBox& many : boxes)
      if (!table_.add_copy(staged.offset, held.nbytes, many.box, destinations_[many.region], held.first))
        throw Error(ErrorKind::unsupported, "host placer: a box the kernel cannot take");
    if (insert && held.first == 0 && held.nbytes == chunk_bytes) {
      auto copy = std::make_shared<DecodedChunk>(new std::byte[chunk_bytes], chunk_bytes, 0,
                                                 [](std::byte* p, int) { delete[] p; });
      std::memcpy(copy->data.get(), staged.host, chunk_bytes);
      inserts_.push_back({std::move(copy), *insert});
    }
    --writers_;
    done_.notify_all();
  }
  void abandon(const Staged&) override {
    std::unique_lock lock(mutex_);
    --writers_;
    done_.notify_all();
  }
  void place_resident(const DecodedChunkPtr& chunk, std::span<const ManyBox> boxes) override {
    std::unique_lock lock(mutex_);
    ++resident_places;
    while (!table_.reserve(0, boxes.size())) flush(lock);
    for (const ManyBox& many : boxes)
      if (!table_.add_copy_absolute(chunk->data.get(), chunk->size, many.box, destinations_[many.region]))
        throw Error(ErrorKind::unsupported, "host placer: a box the kernel cannot take");
    keep_.push_back(chunk);  // as the CUDA placer does: read when the batch is placed
  }
  void fill(std::span<const ManyBox> boxes, std::span<const std::byte> value) override {
    std::unique_lock lock(mutex_);
    for (const ManyBox& many : boxes) {
      ++fills;
      for (;;) {
        const auto added = table_.add_fill(many.box, destinations_[many.region], value);
        if (added == cuda::BatchTable::Added::yes) break;
        if (added == cuda::BatchTable::Added::alone) throw Error(ErrorKind::unsupported, "host placer: fill alone");
        flush(lock);
      }
    }
  }
  void finish() override {
    std::unique_lock lock(mutex_);
    flush(lock);
    for (auto& [chunk, insert] : inserts_) insert.cache->insert(insert.key, insert.inner, insert.signature, chunk);
    inserts_.clear();
  }
  int device() const override { return 0; }

  // What went through it, for the tests.
  std::size_t staged_bytes = 0;
  std::size_t stages = 0;
  std::size_t resident_places = 0;
  std::size_t fills = 0;
  std::size_t batches = 0;

 private:
  void flush(std::unique_lock<std::mutex>& lock) {
    done_.wait(lock, [&] { return writers_ == 0; });
    if (table_.empty()) return;
    cuda::place_batch_on_host(table_.entries(), staging_);
    table_.clear();
    keep_.clear();
    ++batches;
  }

  const std::vector<DestinationLayout>& destinations_;
  cuda::BatchTable table_;
  std::byte* staging_;
  std::mutex mutex_;
  std::condition_variable done_;
  std::size_t writers_ = 0;
  std::vector<std::pair<DecodedChunkPtr, DeviceCacheInsert>> inserts_;
  std::vector<DecodedChunkPtr> keep_;  // chunks the table's entries read
};

}  // namespace zarrdirect::test

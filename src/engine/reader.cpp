// The read engine.
//
// Unsharded arrays: one task per chunk overlapping the region. A worker opens the chunk file,
// reads it whole (straight into the destination when it lands there contiguously), decodes it
// into the sink's staging and lets the sink place it.
//
// Sharded arrays (the chain is exactly sharding_indexed): first, one task per shard reads and
// checks the shard's index; then one task per needed inner chunk, sorted by shard and offset,
// taken in batches so that neighbouring inner chunks are fetched with one read.
#include "engine/reader.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>

#include <fmt/format.h>

#include "engine/chunk_grid.hpp"
#include "engine/worker_pool.hpp"
#include "util/checked_math.hpp"

namespace zarrdirect {
namespace {

// One inner chunk to fetch from a shard.
struct InnerRead {
  std::uint32_t shard = 0;  // index into the job's shard keys
  std::uint64_t offset = 0;
  std::uint64_t nbytes = 0;
  ChunkBox box;
};

class ReadJob {
 public:
  ReadJob(const Array::Impl& array, const Region& region, ChunkSink& sink, const Settings& settings)
      : array_(array), metadata_(array.metadata), region_(region), sink_(sink), settings_(settings),
        rank_(metadata_.rank()), chunk_shape_(to_extents(metadata_.chunk_shape)) {}

  ReadStats run() {
    ReadStats stats;
    GridWindow chunks = window_over(region_, Extents{}, chunk_shape_, rank_);
    const std::uint64_t chunk_count = chunks.size();
    unsigned threads = settings_.effective_threads();
    // Sharded arrays parallelize over inner chunks, so a region inside a few shards still gets
    // every thread.
    std::uint64_t parallel_tasks = chunk_count;
    if (array_.sharding)
      parallel_tasks = window_over(region_, Extents{}, to_extents(array_.sharding->inner_chunk_shape()), rank_).size();
    unsigned workers = static_cast<unsigned>(std::max<std::uint64_t>(1, std::min<std::uint64_t>(threads, parallel_tasks)));
    sink_.start(workers, static_cast<std::size_t>(metadata_.chunk_nbytes()));
    try {
      if (array_.sharding) {
        read_sharded(chunks, workers);
      } else {
        total_tasks_ = chunk_count;
        parallel(workers, chunk_count, 1, [&](unsigned worker, std::uint64_t first, std::uint64_t) {
          read_chunk(worker, chunks.cell(first));
        });
      }
    } catch (...) {
      sink_.finish();
      throw;
    }
    sink_.finish();
    if (error_) std::rethrow_exception(error_);
    stats.chunks_total = static_cast<std::size_t>(positions_);
    stats.chunks_missing = static_cast<std::size_t>(missing_.load());
    stats.bytes_read = bytes_read_.load();
    stats.threads = workers;
    stats.io_path = std::string(sink_.name());
    return stats;
  }

 private:
  // Runs body(worker, first, count) over [0, tasks) in batches of `batch`, on `workers` threads.
  template <typename Body>
  void parallel(unsigned workers, std::uint64_t tasks, std::uint64_t batch, Body&& body) {
    std::atomic<std::uint64_t> next{0};
    auto loop = [&](unsigned worker) {
      while (!failed_.load(std::memory_order_relaxed)) {
        std::uint64_t first = next.fetch_add(batch);
        if (first >= tasks) break;
        std::uint64_t count = std::min(batch, tasks - first);
        try {
          body(worker, first, count);
        } catch (...) {
          record_failure(std::current_exception());
          break;
        }
        report_progress(count);
      }
    };
    if (scratch_.size() < workers) scratch_.resize(workers);
    if (file_buffers_.size() < workers) file_buffers_.resize(workers);
    WorkerPool::shared().run(workers, loop);
  }

  void record_failure(std::exception_ptr error) {
    std::lock_guard lock(error_mutex_);
    if (!error_) error_ = error;
    failed_ = true;
  }

  void report_progress(std::uint64_t count) {
    std::uint64_t done = done_.fetch_add(count) + count;
    if (!settings_.progress) return;
    std::unique_lock lock(progress_mutex_, std::try_to_lock);
    if (!lock.owns_lock() && done != total_tasks_) return;
    if (!lock.owns_lock()) lock.lock();
    if (!settings_.progress(static_cast<std::size_t>(done), static_cast<std::size_t>(total_tasks_)))
      record_failure(std::make_exception_ptr(Error(ErrorKind::cancelled, "read cancelled")));
  }

  std::string chunk_key(const Extents& coords) const {
    return metadata_.chunk_key_encoding.key(std::span(coords.data(), rank_));
  }

  void read_chunk(unsigned worker, const Extents& coords) {
    ++positions_;
    std::string key = chunk_key(coords);
    ChunkBox box = box_of(coords, Extents{}, chunk_shape_, region_, rank_);
    try {
      auto file = array_.store->open(key, settings_.o_direct);
      if (!file) {
        ++missing_;
        sink_.fill(worker, box);
        return;
      }
      bytes_read_ += file->size();
      const std::size_t chunk_bytes = static_cast<std::size_t>(metadata_.chunk_nbytes());
      if (array_.chain.is_identity()) {
        if (file->size() != chunk_bytes)
          throw Error(ErrorKind::corrupt_data,
                      fmt::format("chunk is {} bytes, an uncompressed chunk of shape [{}] holds {}", file->size(),
                                  fmt::join(metadata_.chunk_shape, ", "), chunk_bytes));
        if (auto target = sink_.direct_target(box); !target.empty()) {
          file->read_all(target);
          return;
        }
        if (sink_.read_file_direct(worker, *file, box)) return;
        auto staging = sink_.staging(worker, chunk_bytes);
        file->read_all(staging);
        sink_.place(worker, staging.first(chunk_bytes), box);
        return;
      }
      if (file->size() > array_.chain.max_encoded_size())
        throw Error(ErrorKind::corrupt_data, fmt::format("chunk is {} bytes, more than any valid encoding ({})",
                                                         file->size(), array_.chain.max_encoded_size()));
      auto& encoded = file_buffers_[worker];
      encoded.resize(static_cast<std::size_t>(file->size()));
      file->read_all(encoded);
      auto staging = sink_.staging(worker, chunk_bytes).first(chunk_bytes);
      array_.chain.decode(encoded, staging, scratch_[worker]);
      sink_.place(worker, staging, box);
    } catch (const Error& e) {
      throw e.with_context(fmt::format("{} (chunk {})", (array_.path / key).string(), key));
    }
  }

  void read_sharded(const GridWindow& shards, unsigned workers) {
    const auto& sharding = *array_.sharding;
    const Extents inner_shape = to_extents(sharding.inner_chunk_shape());
    const std::uint64_t shard_count = shards.size();
    shard_keys_.resize(shard_count);
    std::vector<std::vector<InnerRead>> per_worker(workers);
    total_tasks_ = shard_count;

    // Phase 1: each shard's index, and the inner chunks the region needs from it.
    parallel(workers, shard_count, 1, [&](unsigned worker, std::uint64_t s, std::uint64_t) {
      Extents coords = shards.cell(s);
      shard_keys_[s] = chunk_key(coords);
      const std::string& key = shard_keys_[s];
      try {
        Extents origin{};
        Region shard_region(rank_);
        for (std::size_t d = 0; d < rank_; ++d) {
          origin[d] = coords[d] * chunk_shape_[d];
          shard_region[d] = {std::max(origin[d], region_[d].start), std::min(origin[d] + chunk_shape_[d], region_[d].stop)};
        }
        GridWindow inner = window_over(shard_region, origin, inner_shape, rank_);
        positions_ += inner.size();
        auto file = array_.store->open(key);
        if (!file) {
          missing_ += inner.size();
          sink_.fill(worker, box_of(coords, Extents{}, chunk_shape_, region_, rank_));
          return;
        }
        if (file->size() < sharding.index_nbytes())
          throw Error(ErrorKind::corrupt_data, fmt::format("shard is {} bytes, shorter than its {} byte index",
                                                           file->size(), sharding.index_nbytes()));
        auto& index_bytes = file_buffers_[worker];
        index_bytes.resize(static_cast<std::size_t>(sharding.index_nbytes()));
        file->read_exact(sharding.index_offset(file->size()), index_bytes);
        bytes_read_ += index_bytes.size();
        codec::ShardIndex index = sharding.decode_index(index_bytes, file->size());
        for (std::uint64_t i = 0; i < inner.size(); ++i) {
          Extents local = inner.cell(i);
          std::uint64_t linear = 0;
          for (std::size_t d = 0; d < rank_; ++d) linear = linear * sharding.chunks_per_shard()[d] + local[d];
          ChunkBox box = box_of(local, origin, inner_shape, region_, rank_);
          const auto& entry = index[linear];
          if (entry.missing()) {
            ++missing_;
            sink_.fill(worker, box);
            continue;
          }
          per_worker[worker].push_back({static_cast<std::uint32_t>(s), entry.offset, entry.nbytes, box});
        }
      } catch (const Error& e) {
        throw e.with_context(fmt::format("{} (shard {})", (array_.path / key).string(), key));
      }
    });
    if (failed_) return;

    std::vector<InnerRead> reads;
    for (auto& list : per_worker) reads.insert(reads.end(), list.begin(), list.end());
    std::sort(reads.begin(), reads.end(), [](const InnerRead& a, const InnerRead& b) {
      return a.shard != b.shard ? a.shard < b.shard : a.offset < b.offset;
    });
    // Phase 2: inner chunks in batches; neighbours within a batch share one read. Batches shrink
    // for small regions, so that every worker gets some of the inner chunks.
    done_ = 0;
    total_tasks_ = reads.size();
    const std::uint64_t batch = std::clamp<std::uint64_t>(reads.size() / (std::uint64_t{workers} * 4), 1, 8);
    parallel(workers, reads.size(), batch, [&](unsigned worker, std::uint64_t first, std::uint64_t count) {
      read_inner_batch(worker, std::span(reads).subspan(first, count));
    });
  }

  void read_inner_batch(unsigned worker, std::span<const InnerRead> batch) {
    const auto& inner_chain = array_.sharding->inner_chain();
    const std::size_t inner_bytes = static_cast<std::size_t>(inner_chain.decoded_spec().nbytes());
    std::optional<StoreFile> file;
    std::uint32_t open_shard = ~0u;
    std::size_t i = 0;
    while (i < batch.size()) {
      const std::string& key = shard_keys_[batch[i].shard];
      try {
        if (batch[i].shard != open_shard) {
          file = array_.store->open(key, settings_.o_direct);
          if (!file) throw Error(ErrorKind::io, "shard disappeared while being read");
          open_shard = batch[i].shard;
        }
        // Extend the run while the next inner chunk starts where this one ends.
        std::size_t end = i + 1;
        while (end < batch.size() && batch[end].shard == open_shard &&
               batch[end].offset == batch[end - 1].offset + batch[end - 1].nbytes)
          ++end;
        std::uint64_t run_bytes = batch[end - 1].offset + batch[end - 1].nbytes - batch[i].offset;
        auto& encoded = file_buffers_[worker];
        encoded.resize(static_cast<std::size_t>(run_bytes));
        file->read_exact(batch[i].offset, encoded);
        bytes_read_ += run_bytes;
        for (std::size_t k = i; k < end; ++k) {
          auto piece = std::span<const std::byte>(encoded).subspan(
              static_cast<std::size_t>(batch[k].offset - batch[i].offset), static_cast<std::size_t>(batch[k].nbytes));
          auto staging = sink_.staging(worker, inner_bytes).first(inner_bytes);
          inner_chain.decode(piece, staging, scratch_[worker]);
          sink_.place(worker, staging, batch[k].box);
        }
        i = end;
      } catch (const Error& e) {
        throw e.with_context(fmt::format("{} (shard {}, inner chunk at offset {})", (array_.path / key).string(), key,
                                         batch[i].offset));
      }
    }
  }

  const Array::Impl& array_;
  const ArrayMetadata& metadata_;
  const Region& region_;
  ChunkSink& sink_;
  const Settings& settings_;
  const std::size_t rank_;
  const Extents chunk_shape_;

  std::vector<codec::Scratch> scratch_;
  std::vector<codec::ByteBuffer> file_buffers_;
  std::vector<std::string> shard_keys_;
  std::atomic<bool> failed_{false};
  std::mutex error_mutex_;
  std::exception_ptr error_;
  std::mutex progress_mutex_;
  std::atomic<std::uint64_t> done_{0};
  std::uint64_t total_tasks_ = 0;
  std::atomic<std::uint64_t> positions_{0};
  std::atomic<std::uint64_t> missing_{0};
  std::atomic<std::uint64_t> bytes_read_{0};
};

}  // namespace

ReadStats run_read(const Array::Impl& array, const Region& region, ChunkSink& sink, const Settings& settings) {
  return ReadJob(array, region, sink, settings).run();
}

}  // namespace zarrdirect

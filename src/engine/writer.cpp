// The write engine.
//
// Unsharded arrays (and any chain that is not exactly sharding_indexed): one task per chunk the
// region touches. A chunk the region covers (up to the array's edge) is gathered from the source,
// padded with the fill value, encoded and stored; a chunk covered in part is read under the lock
// on its key, decoded (fill value when missing), merged, encoded and stored under that lock.
//
// Sharded arrays: one task per shard. A shard covered whole is built from its inner chunks alone;
// one covered in part is updated under its lock (codec::ShardUpdate plans the layout): the runs
// of kept inner chunks are copied into the new file at their stored offsets in a few kernel-side
// copies (copy_file_range; a reflink where the filesystem shares blocks), so untouched inner
// chunks keep their bytes and index entries, never re-encoded nor brought into memory, and the
// replaced ones leave holes; the touched inner chunks are appended and a new index written. When
// the unreferenced part would exceed half of the kept layout, the shard is compacted instead:
// written anew, its kept inner chunks copied one by one. Either way the new file is renamed over
// the old one. Inner chunks are encoded on several threads when there are fewer shards than
// threads.
//
// Chunks (and inner chunks) that hold only the fill value are left out, and removed if stored,
// unless WriteSettings::write_empty_chunks. Every file is replaced by rename: a chunk or shard is
// either old or new.
//
// Per chunk the hot path allocates nothing and copies as little as it can: each thread reuses its
// buffers, kept between writes too (write_buffers.hpp); a chunk whose chain stores the array's
// bytes as they are (bytes, native order, no filter or compressor) is written straight from the
// gathered chunk, or from the source itself when the source holds the chunk whole
// (ChunkSource::whole_chunk); a shard is streamed into its file as its inner chunks are encoded
// (never held whole in memory), then its index; the folders of one write are opened once
// (FolderCache). Each chunk or shard is written under its key's lock (see KeyLock for why a
// whole chunk takes it too); a whole one only from the moment its bytes are ready.
#include "engine/writer.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <exception>
#include <mutex>
#include <optional>

#include <fmt/format.h>

#include "codec/shard_update.hpp"
#include "engine/chunk_grid.hpp"
#include "engine/write_buffers.hpp"
#include "engine/worker_pool.hpp"
#include "util/checked_math.hpp"

namespace zarrdirect {
namespace {

// Bytes one shard worker holds for indexes: ShardUpdate's entries (16 bytes an inner chunk), the
// stored index decoded (ShardingCodec::index_decode_nbytes) and the new index encoded.
std::uint64_t shard_index_memory(const codec::ShardingCodec& sharding) {
  auto entries = checked_mul(sharding.inner_chunk_count(), 16);
  auto total = entries ? checked_add(*entries, sharding.index_decode_nbytes()) : std::nullopt;
  total = total ? checked_add(*total, sharding.index_nbytes()) : std::nullopt;
  return total ? *total : ~std::uint64_t{0};
}

class WriteJob {
 public:
  WriteJob(const Array::Impl& array, const Region& region, ChunkSource& source, const WriteSettings& options,
           const Settings& settings)
      : array_(array), metadata_(array.metadata), region_(region), source_(source), options_(options),
        settings_(settings), rank_(metadata_.rank()), chunk_shape_(to_extents(metadata_.chunk_shape)),
        fill_(metadata_.fill_value),
        // A v2 fill_value of null means "none": zarr-python 2 leaves a missing chunk's elements
        // uninitialised (stale memory), so a chunk of zeros erased here read back as garbage
        // there. Such chunks are always stored, as zarr-python 2 stores them.
        erase_empty_(!options.write_empty_chunks &&
                     !(metadata_.zarr_format == 2 && metadata_.fill_value_json.is_null())) {}

  WriteStats run() {
    GridWindow chunks = window_over(region_, Extents{}, chunk_shape_, rank_);
    const std::uint64_t count = chunks.size();
    const unsigned threads = settings_.effective_threads();
    workers_ = static_cast<unsigned>(std::max<std::uint64_t>(1, std::min<std::uint64_t>(threads, count)));
    if (array_.sharding) {
      // Each shard worker holds its new index, the stored one it updates from and the encoded
      // new one, whatever the region: metadata may ask for up to 2^32 inner chunks a shard
      // (64 GiB an index), so the limit is checked before anything is allocated.
      const std::uint64_t per_shard = shard_index_memory(*array_.sharding);
      const std::uint64_t limit = settings_.effective_memory_limit();
      if (per_shard > limit)
        throw Error(ErrorKind::io,
                    fmt::format("{}: writing a shard of {} inner chunks needs {} bytes of memory for its index, more "
                                "than the write's limit of {} bytes (Settings::memory_limit_bytes, "
                                "ZARRDIRECT_MEMORY_LIMIT_MB)",
                                array_.path.string(), array_.sharding->inner_chunk_count(), per_shard, limit));
      workers_ = static_cast<unsigned>(std::min<std::uint64_t>(workers_, limit / std::max<std::uint64_t>(per_shard, 1)));
      // Few shards: their inner chunks get the threads the shards leave idle.
      inner_workers_ = std::max(1u, threads / workers_);
      shards_.reserve(workers_);
      for (unsigned w = 0; w < workers_; ++w) shards_.emplace_back(*array_.sharding);
    }
    buffers_ = take_write_buffers(std::size_t{workers_} * inner_workers_);
    total_ = count;
    // The largest box a source is asked for: a chunk, or an inner chunk of a shard.
    const std::size_t box_bytes = static_cast<std::size_t>(
        array_.sharding ? array_.sharding->inner_chain().decoded_spec().nbytes() : metadata_.chunk_nbytes());
    try {
      source_.start(workers_ * inner_workers_, box_bytes);
      parallel(count, [&](unsigned worker, std::uint64_t task) {
        if (array_.sharding) write_shard(worker, chunks.cell(task));
        else write_chunk(worker, chunks.cell(task));
      });
    } catch (...) {
      source_.finish();
      give_back_write_buffers(std::move(buffers_));
      throw;
    }
    source_.finish();
    give_back_write_buffers(std::move(buffers_));
    if (error_) {
      try {
        std::rethrow_exception(error_);
      } catch (const Error& e) {
        if (e.kind() == ErrorKind::cancelled) throw;
        throw e.with_context(fmt::format("write of region {} to {} did not complete", to_string(region_),
                                         array_.path.string()));
      }
    }
    stats_.chunks_total = static_cast<std::size_t>(positions_.load());
    stats_.chunks_merged = static_cast<std::size_t>(merged_.load());
    stats_.chunks_empty = static_cast<std::size_t>(empty_.load());
    stats_.files_written = static_cast<std::size_t>(files_written_.load());
    stats_.files_erased = static_cast<std::size_t>(files_erased_.load());
    stats_.bytes_written = bytes_written_.load();
    stats_.threads = workers_ * inner_workers_;
    return stats_;
  }

 private:
  using Buffers = WriteBuffers;

  // What one shard worker reuses from shard to shard.
  struct ShardBuffers {
    explicit ShardBuffers(const codec::ShardingCodec& sharding) : update(sharding) {}
    codec::ShardUpdate update;                   // the new shard's layout and index
    std::optional<StoreFile> old_file;           // the stored shard an update reads from
    std::optional<codec::ShardIndex> old_index;  // its index, for the touched inner chunks' bytes
    std::vector<std::uint64_t> touched;          // linear indexes of the inner chunks written
  };

  // The shard file being written: inner chunks appended as they are encoded, by several threads.
  struct ShardFile {
    ShardFile(std::optional<KeyLock>& shard_lock, std::uint64_t start) : lock(shard_lock), body_start(start) {}
    std::optional<KeyLock>& lock;
    const std::uint64_t body_start;  // where the first new inner chunk goes (ShardUpdate::body_start)
    std::uint64_t end = 0;           // bytes of the body written so far
    std::mutex mutex;
  };

  // Runs body(worker, task) for every task in [0, tasks) on workers_ threads.
  template <typename Body>
  void parallel(std::uint64_t tasks, Body&& body) {
    std::atomic<std::uint64_t> next{0};
    auto loop = [&](unsigned worker) {
      while (!failed_.load(std::memory_order_relaxed)) {
        std::uint64_t task = next.fetch_add(1);
        if (task >= tasks) break;
        try {
          body(worker, task);
        } catch (...) {
          record_failure(std::current_exception());
          break;
        }
        report_progress();
      }
    };
    WorkerPool::shared().run(workers_, loop);
  }

  void record_failure(std::exception_ptr error) {
    std::lock_guard lock(error_mutex_);
    if (!error_) error_ = error;
    failed_ = true;
  }

  void report_progress() {
    std::uint64_t done = done_.fetch_add(1) + 1;
    if (!settings_.progress) return;
    std::unique_lock lock(progress_mutex_, std::try_to_lock);
    if (!lock.owns_lock() && done != total_) return;
    if (!lock.owns_lock()) lock.lock();
    if (!settings_.progress(static_cast<std::size_t>(done), static_cast<std::size_t>(total_)))
      record_failure(std::make_exception_ptr(Error(ErrorKind::cancelled, "write cancelled")));
  }

  std::string chunk_key(const Extents& coords) const {
    return metadata_.chunk_key_encoding.key(std::span(coords.data(), rank_));
  }

  // True when the box covers all of its chunk that lies inside the array.
  bool covers_stored_part(const ChunkBox& box, const Extents& chunk_start) const {
    for (std::size_t d = 0; d < rank_; ++d) {
      std::uint64_t inside = std::min(box.chunk_shape[d], metadata_.shape[d] - chunk_start[d]);
      if (box.offset_in_chunk[d] != 0 || box.extent[d] != inside) return false;
    }
    return true;
  }

  KeyLock lock_key(const std::string& key) { return array_.file_store().lock(key, options_.durable, &folders_); }

  // Stores an encoded chunk, under `lock` when held (else it is taken now).
  void store(const std::string& key, std::optional<KeyLock>& lock, std::span<const std::byte> bytes) {
    if (!lock) lock.emplace(lock_key(key));
    lock->commit(bytes, options_.durable);
    ++files_written_;
    bytes_written_ += bytes.size();
  }

  // Removes the stored chunk or shard `key` of an all-fill write, if there is one.
  void erase(const std::string& key, std::optional<KeyLock>& lock) {
    // Nothing stored and nothing to remove: skip taking the lock at all.
    if (!lock && !array_.file_store().exists(key)) return;
    if (lock) lock->erase(options_.durable);
    else array_.file_store().erase(key, options_.durable);
    ++files_erased_;
  }

  // The decoded chunk for `box` (of the chunk starting at `start`): the source's own memory when
  // it holds the whole chunk, else `buffers.chunk`, filled (fill value beyond the array's edge;
  // stored values when the box covers only part of what is stored, `merge_stored` reading them)
  // and then gathered into.
  template <typename MergeStored>
  std::span<const std::byte> assemble(unsigned slot, const ChunkBox& box, const Extents& start, std::size_t nbytes,
                                      Buffers& buffers, MergeStored&& merge_stored) {
    if (covers_stored_part(box, start)) {
      if (box.covers_chunk()) {
        auto whole = source_.whole_chunk(slot, box);
        if (whole.size() == nbytes) return whole;
      }
      buffers.chunk.resize(nbytes);
      if (!box.covers_chunk()) fill_with(buffers.chunk, fill_);  // the edge beyond the array
    } else {
      buffers.chunk.resize(nbytes);
      merge_stored(buffers);
    }
    source_.gather(slot, box, buffers.chunk);
    return buffers.chunk;
  }

  void write_chunk(unsigned worker, const Extents& coords) {
    std::string key = chunk_key(coords);
    try {
      ++positions_;
      ChunkBox box = box_of(coords, Extents{}, chunk_shape_, region_, rank_);
      Extents start{};
      for (std::size_t d = 0; d < rank_; ++d) start[d] = coords[d] * chunk_shape_[d];
      const unsigned slot = worker * inner_workers_;
      Buffers& buffers = *buffers_[slot];
      // A chunk covered in part is read, merged and written under its lock; one covered whole
      // is encoded first and locked only to be stored.
      std::optional<KeyLock> lock;
      auto decoded = assemble(slot, box, start, static_cast<std::size_t>(metadata_.chunk_nbytes()), buffers,
                              [&](Buffers& b) {
                                ++merged_;
                                lock.emplace(lock_key(key));
                                read_chunk(key, b);
                              });
      if (erase_empty_ && all_fill(decoded, fill_)) {
        ++empty_;
        erase(key, lock);
        return;
      }
      store(key, lock, encode_chunk(array_.chain, decoded, buffers.encode_a, buffers.encode_b).bytes);
    } catch (const Error& e) {
      throw e.with_context(fmt::format("{} (chunk {})", (array_.path / key).string(), key));
    }
  }

  // Decodes the stored chunk `key` into buffers.chunk, or fills it when missing.
  void read_chunk(const std::string& key, Buffers& buffers) {
    auto file = array_.file_store().open(key);
    if (!file) {
      fill_with(buffers.chunk, fill_);
      return;
    }
    if (file->size() > array_.chain.max_encoded_size())
      throw Error(ErrorKind::corrupt_data, fmt::format("stored chunk is {} bytes, more than any valid encoding ({})",
                                                       file->size(), array_.chain.max_encoded_size()));
    buffers.file.resize(static_cast<std::size_t>(file->size()));
    file->read_all(buffers.file);
    array_.chain.decode(buffers.file, buffers.chunk, buffers.scratch);
  }

  // Opens the stored shard `key` (if any) into shard.old_file and starts the update from its
  // index. Only the index is read: touched inner chunks are read one by one when merged, kept
  // ones copied file to file.
  void read_shard(const std::string& key, ShardBuffers& shard) {
    const auto& sharding = *array_.sharding;
    shard.old_file = array_.file_store().open(key);
    if (!shard.old_file) return;
    const std::uint64_t size = shard.old_file->size();
    // Shards that appending updates left with unreferenced bytes are up to twice their live
    // bytes (see ShardUpdate), and another tool may leave more: bound the size only by what an
    // index can address, checked entry by entry below.
    if (size < sharding.index_nbytes())
      throw Error(ErrorKind::corrupt_data, fmt::format("stored shard is {} bytes, shorter than its {} byte index",
                                                       size, sharding.index_nbytes()));
    codec::ByteBuffer index_bytes(static_cast<std::size_t>(sharding.index_nbytes()));
    shard.old_file->read_exact(sharding.index_offset(size), index_bytes);
    shard.old_index.emplace(sharding.decode_index(std::move(index_bytes), size));
    shard.update.start_from(*shard.old_index);
  }

  // Appends an inner chunk's bytes to the shard file (taking the shard's lock first if the write
  // has not yet); returns their offset in the shard's body.
  std::uint64_t append_to_shard(const std::string& key, ShardFile& file, std::span<const std::byte> bytes) {
    std::lock_guard guard(file.mutex);
    start_appending(key, file);
    file.lock->write(bytes);
    const std::uint64_t at = file.end;
    file.end += bytes.size();
    return at;
  }

  // The same for `nbytes` stored bytes of `source` at `offset`.
  std::uint64_t append_to_shard(const std::string& key, ShardFile& file, const StoreFile& source, std::uint64_t offset,
                                std::uint64_t nbytes) {
    std::lock_guard guard(file.mutex);
    start_appending(key, file);
    file.lock->copy_from(source, offset, nbytes);
    const std::uint64_t at = file.end;
    file.end += nbytes;
    return at;
  }

  void start_appending(const std::string& key, ShardFile& file) {
    if (!file.lock) file.lock.emplace(lock_key(key));
    if (file.end == 0) file.lock->seek(file.body_start);
  }

  void write_shard(unsigned worker, const Extents& coords) {
    const auto& sharding = *array_.sharding;
    const auto& inner_chain = sharding.inner_chain();
    std::string key = chunk_key(coords);
    try {
      const Extents inner_shape = to_extents(sharding.inner_chunk_shape());
      Extents origin{};
      Region shard_region(rank_);
      for (std::size_t d = 0; d < rank_; ++d) {
        origin[d] = coords[d] * chunk_shape_[d];
        shard_region[d] = {std::max(origin[d], region_[d].start), std::min(origin[d] + chunk_shape_[d], region_[d].stop)};
      }
      GridWindow inner = window_over(shard_region, origin, inner_shape, rank_);
      positions_ += inner.size();
      ChunkBox shard_box = box_of(coords, Extents{}, chunk_shape_, region_, rank_);

      ShardBuffers& shard = shards_[worker];
      codec::ShardUpdate& update = shard.update;
      update.start_new();
      shard.old_file.reset();
      shard.old_index.reset();
      std::optional<KeyLock> lock;
      if (!covers_stored_part(shard_box, origin)) {
        ++merged_;
        lock.emplace(lock_key(key));
        read_shard(key, shard);
      }
      // Every touched inner chunk is replaced (by new bytes, or left out when all fill value).
      const std::uint64_t touched = inner.size();
      const Extents grid = to_extents(sharding.chunks_per_shard());
      shard.touched.resize(static_cast<std::size_t>(touched));
      for (std::uint64_t t = 0; t < touched; ++t) {
        // inner.cell(t): the cell of the inner grid, counted from the shard's origin.
        const std::uint64_t linear = coords_to_linear(inner.cell(t), grid, rank_);
        shard.touched[static_cast<std::size_t>(t)] = linear;
        update.replace(linear);
      }
      update.plan();
      ShardFile file{lock, update.body_start()};
      // The kept inner chunks at their stored offsets, file to file (holes between runs); the
      // new inner chunks follow from body_start().
      for (const auto& run : update.kept_runs()) {
        lock->seek(run.offset);
        lock->copy_from(*shard.old_file, run.offset, run.nbytes);
      }

      // The touched inner chunks, encoded on up to inner_workers_ threads and appended to the
      // shard file as each is done.
      const unsigned helpers = static_cast<unsigned>(std::min<std::uint64_t>(inner_workers_, touched));
      std::atomic<std::uint64_t> next{0};
      const std::size_t inner_bytes = static_cast<std::size_t>(inner_chain.decoded_spec().nbytes());
      WorkerPool::shared().run(std::max(1u, helpers), [&](unsigned helper) {
        const unsigned slot = worker * inner_workers_ + helper;
        Buffers& local = *buffers_[slot];
        for (std::uint64_t t = next.fetch_add(1); t < touched && !failed_.load(std::memory_order_relaxed);
             t = next.fetch_add(1)) {
          const Extents local_coords = inner.cell(t);
          const std::uint64_t linear = shard.touched[static_cast<std::size_t>(t)];
          Extents start{};
          for (std::size_t d = 0; d < rank_; ++d) start[d] = origin[d] + local_coords[d] * inner_shape[d];
          ChunkBox box = box_of(local_coords, origin, inner_shape, region_, rank_);
          auto decoded = assemble(slot, box, start, inner_bytes, local, [&](Buffers& b) {
            const codec::ShardIndexEntry stored =
                shard.old_index ? (*shard.old_index)[linear] : codec::ShardIndexEntry{~std::uint64_t{0}, 0};
            if (stored.missing()) {
              fill_with(b.chunk, fill_);
              return;
            }
            b.file.resize(static_cast<std::size_t>(stored.nbytes));
            shard.old_file->read_exact(stored.offset, b.file);
            inner_chain.decode(b.file, b.chunk, b.scratch);
          });
          if (erase_empty_ && all_fill(decoded, fill_)) {
            ++empty_;
            continue;
          }
          auto bytes = encode_chunk(inner_chain, decoded, local.encode_a, local.encode_b).bytes;
          update.place(linear, file.body_start + append_to_shard(key, file, bytes), bytes.size());
        }
      });
      if (failed_.load()) return;  // another task failed: leave the shard as it was

      // Compacting: the kept inner chunks keep their stored bytes, copied file to file one by one.
      for (const auto& kept : update.to_copy())
        update.place(kept.inner,
                     file.body_start + append_to_shard(key, file, *shard.old_file, kept.offset, kept.nbytes),
                     kept.nbytes);
      shard.old_file.reset();
      shard.old_index.reset();
      if (!lock || update.empty()) {  // nothing written or kept: every inner chunk is empty
        erase(key, lock);
        return;
      }
      codec::ByteBuffer index = update.encode_index();
      const std::uint64_t body_end = file.body_start + file.end;
      lock->seek(update.index_offset(body_end));
      lock->write(index);
      lock->publish(options_.durable);
      ++files_written_;
      bytes_written_ += body_end + (update.index_offset(body_end) == 0 ? 0 : index.size());
    } catch (const Error& e) {
      throw e.with_context(fmt::format("{} (shard {})", (array_.path / key).string(), key));
    }
  }

  const Array::Impl& array_;
  const ArrayMetadata& metadata_;
  const Region& region_;
  ChunkSource& source_;
  const WriteSettings& options_;
  const Settings& settings_;
  const std::size_t rank_;
  const Extents chunk_shape_;
  const std::vector<std::byte>& fill_;
  const bool erase_empty_;  // chunks holding only the fill value are left out (and removed)
  unsigned workers_ = 1;
  unsigned inner_workers_ = 1;
  FolderCache folders_;

  std::vector<std::unique_ptr<Buffers>> buffers_;  // one per thread: worker * inner_workers_ + helper
  std::vector<ShardBuffers> shards_;  // one per shard worker
  WriteStats stats_;
  std::atomic<bool> failed_{false};
  std::mutex error_mutex_;
  std::exception_ptr error_;
  std::mutex progress_mutex_;
  std::atomic<std::uint64_t> done_{0};
  std::uint64_t total_ = 0;
  std::atomic<std::uint64_t> positions_{0}, merged_{0}, empty_{0}, files_written_{0}, files_erased_{0};
  std::atomic<std::uint64_t> bytes_written_{0};
};

}  // namespace

WriteStats run_write(const Array::Impl& array, const Region& region, ChunkSource& source, const WriteSettings& options,
                     const Settings& settings) {
  array.file_store();  // a URL: Error(unsupported) before any work
  return WriteJob(array, region, source, options, settings).run();
}

}  // namespace zarrdirect

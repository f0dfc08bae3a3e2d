// The write engine.
//
// Unsharded arrays (and any chain that is not exactly sharding_indexed): one task per chunk the
// region touches. A chunk the region covers (up to the array's edge) is gathered from the source,
// padded with the fill value, encoded and stored; a chunk covered in part is read under the lock
// on its key, decoded (fill value when missing), merged, encoded and stored under that lock.
//
// Sharded arrays: one task per shard. A shard covered whole is built from its inner chunks alone;
// one covered in part is read under its lock, the touched inner chunks replaced (untouched ones
// keep their stored bytes, not re-encoded) and the shard written anew. Inner chunks are encoded
// on several threads when there are fewer shards than threads.
//
// Chunks (and inner chunks) that hold only the fill value are left out, and removed if stored,
// unless WriteSettings::write_empty_chunks. Every file is replaced by rename: a chunk or shard is
// either old or new.
#include "engine/writer.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <exception>
#include <mutex>
#include <optional>

#include <fmt/format.h>

#include "engine/chunk_grid.hpp"
#include "engine/worker_pool.hpp"

namespace zarrdirect {
namespace {

bool all_fill(std::span<const std::byte> chunk, std::span<const std::byte> fill) {
  const std::size_t size = fill.size();
  if (std::all_of(fill.begin(), fill.end(), [](std::byte b) { return b == std::byte{0}; }))
    return std::all_of(chunk.begin(), chunk.end(), [](std::byte b) { return b == std::byte{0}; });
  for (std::size_t i = 0; i < chunk.size(); i += size)
    if (std::memcmp(chunk.data() + i, fill.data(), size) != 0) return false;
  return true;
}

void fill_with(std::span<std::byte> chunk, std::span<const std::byte> fill) {
  const std::size_t size = fill.size();
  if (std::all_of(fill.begin(), fill.end(), [](std::byte b) { return b == std::byte{0}; })) {
    std::memset(chunk.data(), 0, chunk.size());
    return;
  }
  for (std::size_t i = 0; i + size <= chunk.size(); i += size) std::memcpy(chunk.data() + i, fill.data(), size);
}

// The index codecs of a sharding configuration, in the form CodecChain::create takes.
codec::CodecChain make_index_chain(const nlohmann::json& configuration, const codec::ShardingCodec& sharding) {
  codec::ArraySpec spec;
  spec.shape = sharding.chunks_per_shard();
  spec.shape.push_back(2);
  spec.dtype = DataType{ScalarKind::unsigned_int, 8};
  spec.fill_value.assign(8, std::byte{0xff});
  nlohmann::json codecs = configuration.contains("index_codecs")
                              ? configuration["index_codecs"]
                              : nlohmann::json::parse(R"([{"name":"bytes","configuration":{"endian":"little"}},{"name":"crc32c"}])");
  nlohmann::json normalized = nlohmann::json::array();
  for (const auto& entry : codecs) normalized.push_back(entry.is_string() ? nlohmann::json{{"name", entry}} : entry);
  return codec::CodecChain::create(normalized, spec, "sharding_indexed.index_codecs");
}

class WriteJob {
 public:
  WriteJob(const Array::Impl& array, const Region& region, ChunkSource& source, const WriteSettings& options,
           const Settings& settings)
      : array_(array), metadata_(array.metadata), region_(region), source_(source), options_(options),
        settings_(settings), rank_(metadata_.rank()), chunk_shape_(to_extents(metadata_.chunk_shape)),
        fill_(metadata_.fill_value) {}

  WriteStats run() {
    GridWindow chunks = window_over(region_, Extents{}, chunk_shape_, rank_);
    const std::uint64_t count = chunks.size();
    const unsigned threads = settings_.effective_threads();
    workers_ = static_cast<unsigned>(std::max<std::uint64_t>(1, std::min<std::uint64_t>(threads, count)));
    if (array_.sharding) {
      index_chain_ = make_index_chain(metadata_.codecs[0].value("configuration", nlohmann::json::object()), *array_.sharding);
      // Few shards: their inner chunks get the threads the shards leave idle.
      inner_workers_ = std::max(1u, threads / workers_);
    }
    total_ = count;
    source_.start(workers_ * inner_workers_, static_cast<std::size_t>(metadata_.chunk_nbytes()));
    try {
      parallel(count, [&](unsigned worker, std::uint64_t task) {
        if (array_.sharding) write_shard(worker, chunks.cell(task));
        else write_chunk(worker, chunks.cell(task));
      });
    } catch (...) {
      source_.finish();
      throw;
    }
    source_.finish();
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
  // Runs body(worker, task) for every task in [0, tasks) on workers_ threads.
  template <typename Body>
  void parallel(std::uint64_t tasks, Body&& body) {
    std::atomic<std::uint64_t> next{0};
    buffers_.resize(workers_);
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

  // Stores an encoded chunk or removes an empty one, under `lock` when held.
  void store(const std::string& key, std::optional<KeyLock>& lock, std::span<const std::byte> encoded, bool empty) {
    if (empty) {
      if (lock) lock->erase(options_.durable);
      else array_.store->erase(key, options_.durable);
      ++files_erased_;
      return;
    }
    if (lock) lock->commit(encoded, options_.durable);
    else array_.store->set(key, encoded, options_.durable);
    ++files_written_;
    bytes_written_ += encoded.size();
  }

  void write_chunk(unsigned worker, const Extents& coords) {
    std::string key = chunk_key(coords);
    try {
      ++positions_;
      ChunkBox box = box_of(coords, Extents{}, chunk_shape_, region_, rank_);
      Extents start{};
      for (std::size_t d = 0; d < rank_; ++d) start[d] = coords[d] * chunk_shape_[d];
      auto& buffers = buffers_[worker];
      buffers.chunk.resize(static_cast<std::size_t>(metadata_.chunk_nbytes()));
      std::optional<KeyLock> lock;
      if (covers_stored_part(box, start)) {
        if (!box.covers_chunk()) fill_with(buffers.chunk, fill_);  // the edge beyond the array
      } else {
        ++merged_;
        lock.emplace(array_.store->lock(key, options_.durable));
        read_chunk(key, buffers);
      }
      source_.gather(worker * inner_workers_, box, buffers.chunk);
      const bool empty = !options_.write_empty_chunks && all_fill(buffers.chunk, fill_);
      if (empty) {
        ++empty_;
        // Nothing stored and nothing to remove: skip taking the lock at all.
        if (!lock && !array_.store->exists(key)) return;
        store(key, lock, {}, true);
        return;
      }
      auto encoded = array_.chain.encode(buffers.chunk);
      store(key, lock, encoded, false);
    } catch (const Error& e) {
      throw e.with_context(fmt::format("{} (chunk {})", (array_.path / key).string(), key));
    }
  }

  struct Buffers {
    codec::ByteBuffer chunk;
    codec::ByteBuffer file;
    codec::Scratch scratch;
  };

  // Decodes the stored chunk `key` into buffers.chunk, or fills it when missing.
  void read_chunk(const std::string& key, Buffers& buffers) {
    auto file = array_.store->open(key);
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

  // One inner chunk of a shard being written: its new encoding, or the stored bytes kept.
  struct InnerEntry {
    bool present = false;
    bool kept = false;                // the old shard's bytes at [offset, offset + nbytes)
    std::uint64_t offset = 0, nbytes = 0;
    codec::ByteBuffer encoded;        // when present and not kept
  };

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

      std::vector<InnerEntry> entries(static_cast<std::size_t>(sharding.inner_chunk_count()));
      std::optional<KeyLock> lock;
      codec::ByteBuffer old_shard;
      if (!covers_stored_part(shard_box, origin)) {
        ++merged_;
        lock.emplace(array_.store->lock(key, options_.durable));
        if (auto file = array_.store->open(key)) {
          if (file->size() > sharding.max_encoded_size() || file->size() < sharding.index_nbytes())
            throw Error(ErrorKind::corrupt_data, fmt::format("stored shard is {} bytes, outside [{}, {}]", file->size(),
                                                             sharding.index_nbytes(), sharding.max_encoded_size()));
          old_shard.resize(static_cast<std::size_t>(file->size()));
          file->read_all(old_shard);
          auto index = sharding.decode_index(
              std::span<const std::byte>(old_shard).subspan(static_cast<std::size_t>(sharding.index_offset(file->size())),
                                                            static_cast<std::size_t>(sharding.index_nbytes())),
              file->size());
          for (std::size_t i = 0; i < entries.size(); ++i)
            if (!index[i].missing()) entries[i] = {true, true, index[i].offset, index[i].nbytes, {}};
        }
      }

      // The touched inner chunks, encoded on up to inner_workers_ threads.
      const std::uint64_t touched = inner.size();
      const unsigned helpers = static_cast<unsigned>(std::min<std::uint64_t>(inner_workers_, touched));
      std::atomic<std::uint64_t> next{0};
      const std::size_t inner_bytes = static_cast<std::size_t>(inner_chain.decoded_spec().nbytes());
      WorkerPool::shared().run(std::max(1u, helpers), [&](unsigned helper) {
        Buffers local;
        local.chunk.resize(inner_bytes);
        for (std::uint64_t t = next.fetch_add(1); t < touched && !failed_.load(std::memory_order_relaxed);
             t = next.fetch_add(1)) {
          Extents local_coords = inner.cell(t);  // cell of the inner grid, counted from the shard's origin
          std::uint64_t linear = 0;
          Extents start{};
          for (std::size_t d = 0; d < rank_; ++d) {
            linear = linear * sharding.chunks_per_shard()[d] + local_coords[d];
            start[d] = origin[d] + local_coords[d] * inner_shape[d];
          }
          InnerEntry& entry = entries[static_cast<std::size_t>(linear)];
          ChunkBox box = box_of(local_coords, origin, inner_shape, region_, rank_);
          if (covers_stored_part(box, start)) {
            if (!box.covers_chunk()) fill_with(local.chunk, fill_);
          } else if (entry.present) {
            inner_chain.decode(std::span<const std::byte>(old_shard).subspan(static_cast<std::size_t>(entry.offset),
                                                                            static_cast<std::size_t>(entry.nbytes)),
                               local.chunk, local.scratch);
          } else {
            fill_with(local.chunk, fill_);
          }
          source_.gather(worker * inner_workers_ + helper, box, local.chunk);
          entry = InnerEntry{};
          if (!options_.write_empty_chunks && all_fill(local.chunk, fill_)) {
            ++empty_;
            continue;
          }
          entry.present = true;
          entry.encoded = inner_chain.encode(local.chunk);
        }
      });

      // Assemble: inner chunks in index order, then the index where the metadata puts it.
      const bool index_first = sharding.index_location() == codec::IndexLocation::start;
      const std::uint64_t base = index_first ? sharding.index_nbytes() : 0;
      std::vector<std::uint64_t> raw(entries.size() * 2, ~std::uint64_t{0});
      codec::ByteBuffer body;
      bool any = false;
      for (std::size_t i = 0; i < entries.size(); ++i) {
        const auto& entry = entries[i];
        if (!entry.present) continue;
        any = true;
        std::span<const std::byte> bytes =
            entry.kept ? std::span<const std::byte>(old_shard).subspan(static_cast<std::size_t>(entry.offset),
                                                                       static_cast<std::size_t>(entry.nbytes))
                       : std::span<const std::byte>(entry.encoded);
        raw[2 * i] = base + body.size();
        raw[2 * i + 1] = bytes.size();
        body.insert(body.end(), bytes.begin(), bytes.end());
      }
      if (!any) {
        if (!lock && !array_.store->exists(key)) return;
        store(key, lock, {}, true);
        return;
      }
      codec::ByteBuffer index = index_chain_.encode(std::as_bytes(std::span(raw)));
      codec::ByteBuffer shard;
      shard.reserve(body.size() + index.size());
      if (index_first) shard.insert(shard.end(), index.begin(), index.end());
      shard.insert(shard.end(), body.begin(), body.end());
      if (!index_first) shard.insert(shard.end(), index.begin(), index.end());
      store(key, lock, shard, false);
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
  unsigned workers_ = 1;
  unsigned inner_workers_ = 1;
  codec::CodecChain index_chain_;

  std::vector<Buffers> buffers_;
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
  return WriteJob(array, region, source, options, settings).run();
}

}  // namespace zarrdirect

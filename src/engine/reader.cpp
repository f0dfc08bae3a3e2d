// The read engine.
//
// Unsharded arrays: one task per chunk overlapping the region. A worker opens the chunk file,
// reads it whole (straight into the destination when it lands there contiguously), decodes it
// into the sink's staging and lets the sink place it. With io_uring (Settings::io_engine,
// uring_reads.hpp) a task is a batch of uncompressed chunk files, opened and read together.
//
// Sharded arrays (the chain is exactly sharding_indexed): the region's shards are taken in waves
// of at most kWaveInnerChunks inner chunks (a shard with more is split across waves). For each
// wave, one task per shard reads the index entries the region needs; then one task per needed
// inner chunk, sorted by shard and offset, taken in batches so that neighbouring inner chunks are
// fetched with one read (uncompressed ones, into a host destination, are placed straight from
// it). The plan of a wave holds 24 bytes per inner chunk (boxes are computed
// when a chunk is placed), so the bookkeeping stays bounded however small the inner chunks are.
// A shard is opened again for its inner chunks; if a writer renamed a new shard over it meanwhile
// (the file's identity differs from planning's), the index is read again from the new file, so
// every inner chunk is read whole from one version of the shard (local files; an object store's
// objects are not checked).
//
// Memory: each worker holds one decoded chunk, its stored bytes and the chain's scratch (the
// latter two lent by its thread, which keeps them for its next read: worker_scratch.hpp). The job
// runs no more workers than Settings::effective_memory_limit() allows for that, and a chunk (or a
// checksummed shard index) that alone needs more than the limit fails, naming its key, before it
// is allocated. A failed allocation anywhere in a worker becomes an Error naming the chunk.
#include "engine/reader.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <new>
#include <optional>
#include <stdexcept>

#include <fmt/format.h>

#include "engine/chunk_cache.hpp"
#include "engine/inner_batch.hpp"
#include "engine/uring_reads.hpp"
#include "engine/worker_pool.hpp"
#include "engine/worker_scratch.hpp"
#include "store/byte_ranges.hpp"
#include "util/checked_math.hpp"

namespace zarrdirect {
namespace {

// Inner chunks planned at once (their bookkeeping: 24 bytes each, twice while sorting).
constexpr std::uint64_t kWaveInnerChunks = std::uint64_t{1} << 17;
// Index entries read at once from a shard whose index has no checksum (16 bytes each).
constexpr std::uint64_t kEntryBlock = 4096;
// Stored bytes a worker of a remote read fetches in one batch at most (a batch's requests run at
// once, each into a buffer of its own; below the worker scratch's cap, so the buffers are kept).
constexpr std::uint64_t kRemoteBatchBytes = std::uint64_t{32} << 20;

std::uint64_t saturating_add(std::uint64_t a, std::uint64_t b) { return checked_add(a, b).value_or(~std::uint64_t{0}); }

// A range of the inner chunks a region needs from one shard: cells [first, first + count) of
// the shard's inner window, in C order.
struct ShardSlice {
  std::uint64_t shard = 0;  // cell of the region's shard window
  std::uint64_t first = 0;
  std::uint64_t count = 0;
  bool whole = false;  // the slice is every inner chunk the region needs from the shard
};

// One inner chunk to fetch from a shard: no box (computed when placed), 24 bytes.
struct InnerRead {
  std::uint32_t slice = 0;  // index into the wave's slices
  std::uint32_t inner = 0;  // C-order linear index of the inner chunk in its shard (< 2^32)
  std::uint64_t offset = 0;
  std::uint64_t nbytes = 0;
};
static_assert(sizeof(InnerRead) == 24);

[[noreturn]] void throw_over_limit(std::string_view what, std::uint64_t needed, std::uint64_t limit) {
  throw Error(ErrorKind::io, fmt::format("{} needs {} bytes of memory, more than the read's limit of {} bytes "
                                         "(Settings::memory_limit_bytes, ZARRDIRECT_MEMORY_LIMIT_MB)",
                                         what, needed, limit));
}

// Runs `body`, turning a failed allocation into an Error that the caller's context names.
template <typename Body>
void converting_bad_alloc(Body&& body) {
  try {
    body();
  } catch (const std::bad_alloc&) {
    throw Error(ErrorKind::io, "out of memory");
  } catch (const std::length_error&) {
    throw Error(ErrorKind::io, "out of memory (a buffer larger than the address space)");
  }
}

class ReadJob {
 public:
  ReadJob(const Array::Impl& array, const Region& region, ChunkSink& sink, const Settings& settings,
          const ReadPicks* picks = nullptr)
      : array_(array), chunk_picks_(picks ? &picks->chunks : nullptr), inner_picks_(picks ? &picks->inner : nullptr), metadata_(array.metadata), region_(region), sink_(sink), settings_(settings),
        rank_(metadata_.rank()), chunk_shape_(to_extents(metadata_.chunk_shape)),
        memory_limit_(settings.effective_memory_limit()) {
    const codec::CodecChain& staged = array_.sharding ? array_.sharding->inner_chain() : array_.chain;
    staged_bytes_ = staged.decoded_spec().nbytes();
    scratch_bytes_ = staged.decode_scratch_nbytes();
    staged_identity_ = staged.is_identity();
    if (array_.sharding) inner_shape_ = to_extents(array_.sharding->inner_chunk_shape());
  }

  ReadStats run() {
    ReadStats stats;
    GridWindow chunks = window_over(region_, Extents{}, chunk_shape_, rank_, chunk_picks_);
    const std::uint64_t chunk_count = chunks.size();
    // Sharded arrays parallelize over inner chunks, so a region inside a few shards still gets
    // every thread.
    std::uint64_t parallel_tasks = chunk_count;
    if (array_.sharding) parallel_tasks = window_over(region_, Extents{}, inner_shape_, rank_, inner_picks_).size();
    // A remote store's requests run several at once within each worker's batch (read_many,
    // read_ranges); its preferred threads (HttpStore: half its concurrency) let some workers
    // decode while others wait on transfers. (On 2 cores over loopback nginx, 4, 16 and 32
    // workers read raw and sharded zstd within noise of each other: 2.9-3.4 and 1.2-1.5 GB/s.
    // An earlier measurement favouring 16 over 4 was skewed by a driver bug, a 100 ms sleep
    // after each batch, which cost most where each worker ran many batches.)
    const unsigned threads = settings_.threads == 0 && array_.store->remote()
                                 ? std::max(settings_.effective_threads(), array_.store->preferred_threads())
                                 : settings_.effective_threads();
    std::uint64_t workers = std::min<std::uint64_t>(threads, parallel_tasks);
    workers = std::min<std::uint64_t>(workers, memory_limit_ / std::max<std::uint64_t>(per_worker_estimate(), 1));
    workers_ = static_cast<unsigned>(std::clamp<std::uint64_t>(workers, 1, WorkerPool::shared().max_workers()));
    // Each worker's share of the store's requests in flight.
    if (const unsigned concurrency = array_.store->request_concurrency(); concurrency > 0)
      in_flight_ = std::max(1u, (concurrency + workers_ - 1) / workers_);
    sink_.start(workers_, static_cast<std::size_t>(staged_bytes_));
    try {
      if (array_.sharding) {
        read_sharded(chunks);
      } else {
        total_tasks_ = chunk_count;
        const UringPlan uring = plan_uring(chunk_count);
        io_engine_ = uring.engine;
        if (in_flight_ > 0) {
          parallel(chunk_count, remote_chunks_per_task(chunks), [&](unsigned worker, std::uint64_t first,
                                                                          std::uint64_t count) {
            read_chunks_remote(worker, chunks, first, count);
            return count;
          });
        } else if (uring.files_per_task > 0) {
          parallel(chunk_count, uring.files_per_task, [&](unsigned worker, std::uint64_t first, std::uint64_t count) {
            read_chunks_uring(worker, chunks, first, count);
            return count;
          });
        } else {
          parallel(chunk_count, 1, [&](unsigned worker, std::uint64_t first, std::uint64_t) {
            read_chunk(worker, chunks.cell(first));
            return std::uint64_t{1};
          });
        }
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
    stats.threads = workers_;
    stats.io_path = std::string(sink_.name());
    stats.io_engine = uring_failed_ ? "threads (io_uring ring setup failed)" : io_engine_;
    const SinkDecodeCounts on_device = sink_.sink_decoded();
    stats.chunks_decoded_gpu = static_cast<std::size_t>(on_device.chunks);
    stats.bytes_decoded_gpu = on_device.bytes;
    stats.chunks_decoded_cpu = static_cast<std::size_t>(cpu_decoded_.load() + on_device.host_chunks);
    stats.bytes_decoded_cpu = cpu_decoded_.load() * staged_bytes_ + on_device.host_bytes;
    return stats;
  }

 private:
  // What one worker holds while it decodes a chunk whose stored bytes are no larger than the
  // decoded ones (the usual case; larger ones are checked one by one): the decoded chunk, its
  // stored bytes and the chain's scratch; for sharded arrays also a shard index.
  std::uint64_t per_worker_estimate() const {
    std::uint64_t stored = staged_identity_ ? 0 : staged_bytes_;
    std::uint64_t chunk = saturating_add(saturating_add(staged_bytes_, stored), scratch_bytes_);
    if (!array_.sharding) return chunk;
    const auto& sharding = *array_.sharding;
    std::uint64_t index = sharding.index_entries_addressable() ? 16 * kEntryBlock : sharding.index_decode_nbytes();
    return std::max(chunk, index);
  }

  // Fails, naming nothing (the caller adds the key), when one chunk with `stored` bytes needs
  // more than the whole limit.
  void check_chunk_memory(std::uint64_t stored) const {
    std::uint64_t needed = saturating_add(saturating_add(staged_bytes_, stored), scratch_bytes_);
    if (needed > memory_limit_)
      throw_over_limit(fmt::format("decoding this chunk ({} bytes decoded, {} stored, {} scratch)", staged_bytes_,
                                   stored, scratch_bytes_),
                       needed, memory_limit_);
  }

  // Runs body(worker, first, count) over [0, tasks) in batches of `batch`, on the job's workers;
  // each call returns how many of the read's chunks it finished (for progress).
  template <typename Body>
  void parallel(std::uint64_t tasks, std::uint64_t batch, Body&& body) {
    std::atomic<std::uint64_t> next{0};
    auto loop = [&](unsigned worker) {
      WorkerScratchLease lease;  // this thread's buffers, as its last read left them
      scratch_[worker] = &lease.get();
      while (!failed_.load(std::memory_order_relaxed)) {
        std::uint64_t first = next.fetch_add(batch);
        if (first >= tasks) break;
        std::uint64_t count = std::min(batch, tasks - first);
        std::uint64_t finished = 0;
        try {
          finished = body(worker, first, count);
        } catch (const std::bad_alloc&) {
          // The bodies name their chunk; this is the last line of defence.
          record_failure(std::make_exception_ptr(Error(ErrorKind::io, "out of memory")));
          break;
        } catch (...) {
          record_failure(std::current_exception());
          break;
        }
        report_progress(finished);
      }
    };
    if (scratch_.size() < workers_) scratch_.resize(workers_);
    WorkerPool::shared().run(workers_, loop);
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
      converting_bad_alloc([&] { read_chunk_file(worker, key, box); });
    } catch (const EarlierChunkError&) {
      throw;  // names its own chunk
    } catch (const Error& e) {
      throw e.with_context(fmt::format("{} (chunk {})", (array_.path / key).string(), key));
    }
  }

  void read_chunk_file(unsigned worker, const std::string& key, const ChunkBox& box) {
    auto file = array_.store->open_object(key, settings_.o_direct);
    if (!file) {
      ++missing_;
      sink_.fill(worker, box);
      return;
    }
    bytes_read_ += file->size();
    const std::size_t chunk_bytes = static_cast<std::size_t>(staged_bytes_);
    if (array_.chain.is_identity()) {
      if (file->size() != chunk_bytes)
        throw Error(ErrorKind::corrupt_data,
                    fmt::format("chunk is {} bytes, an uncompressed chunk of shape [{}] holds {}", file->size(),
                                fmt::join(metadata_.chunk_shape, ", "), chunk_bytes));
      if (auto target = sink_.direct_target(box); !target.empty()) {
        file->read_all(target);
        return;
      }
      if (const StoreFile* local = file->local_file(); local && sink_.read_file_direct(worker, *local, box)) return;
      check_chunk_memory(0);
      auto staging = sink_.staging(worker, chunk_bytes);
      file->read_all(staging);
      sink_.place(worker, staging.first(chunk_bytes), box);
      return;
    }
    if (file->size() > array_.chain.max_encoded_size())
      throw Error(ErrorKind::corrupt_data, fmt::format("chunk is {} bytes, more than any valid encoding ({})",
                                                       file->size(), array_.chain.max_encoded_size()));
    check_chunk_memory(file->size());
    auto& encoded = scratch_[worker]->stored;
    encoded.resize(static_cast<std::size_t>(file->size()));
    file->read_all(encoded);
    if (sink_.place_stored(worker, encoded, box, chunk_where(key))) return;
    auto staging = sink_.staging(worker, chunk_bytes).first(chunk_bytes);
    array_.chain.decode(encoded, staging, scratch_[worker]->codec);
    ++cpu_decoded_;
    sink_.place(worker, staging, box);
  }

  // io_uring for this read's chunk files, where it applies (uring_reads.hpp).
  UringPlan plan_uring(std::uint64_t chunk_count) const {
    const bool applies = dynamic_cast<const FileStore*>(array_.store.get()) != nullptr && !settings_.o_direct &&
                         array_.chain.is_identity() && sink_.places_from_any_memory();
    return plan_uring_reads(settings_.io_engine, applies, staged_bytes_, chunk_count, workers_,
                            memory_limit_ / workers_);
  }

  // Chunks [first, first + count) of `chunks`, uncompressed, read with one io_uring batch into
  // their place (contiguous boxes) or side by side into the worker's stored-bytes buffer, then
  // placed from there. Files the batch could not read plainly take the ordinary path.
  void read_chunks_uring(unsigned worker, const GridWindow& chunks, std::uint64_t first, std::uint64_t count) {
    UringFileReader* ring = thread_uring_reader(static_cast<unsigned>(count));
    if (!ring) uring_failed_ = true;
    const std::size_t chunk_bytes = static_cast<std::size_t>(staged_bytes_);
    auto& buffer = scratch_[worker]->stored;
    std::vector<std::string> keys(count);
    std::vector<ChunkBox> boxes(count);
    std::vector<UringFileRead> files(count);
    std::vector<bool> direct(count);
    converting_bad_alloc([&] { buffer.resize(static_cast<std::size_t>(count) * chunk_bytes); });
    for (std::uint64_t k = 0; k < count && ring; ++k) {
      const Extents coords = chunks.cell(first + k);
      keys[k] = chunk_key(coords);
      FileStore::check_key(keys[k]);
      boxes[k] = box_of(coords, Extents{}, chunk_shape_, region_, rank_);
      std::span<std::byte> target = sink_.direct_target(boxes[k]);
      direct[k] = target.size() == chunk_bytes;
      if (!direct[k]) target = std::span(buffer).subspan(static_cast<std::size_t>(k) * chunk_bytes, chunk_bytes);
      files[k] = UringFileRead{keys[k].c_str(), target};
    }
    if (ring) ring->read_files(static_cast<const FileStore&>(*array_.store).root_fd(), files);
    for (std::uint64_t k = 0; k < count; ++k) {
      if (!ring || files[k].outcome == UringFileRead::Outcome::retry) {
        read_chunk(worker, chunks.cell(first + k));
        continue;
      }
      ++positions_;
      try {
        if (files[k].outcome == UringFileRead::Outcome::missing) {
          ++missing_;
          sink_.fill(worker, boxes[k]);
          continue;
        }
        bytes_read_ += chunk_bytes;
        if (!direct[k]) sink_.place(worker, files[k].buffer, boxes[k]);
      } catch (const Error& e) {
        throw e.with_context(fmt::format("{} (chunk {})", (array_.path / keys[k]).string(), keys[k]));
      }
    }
  }

  // How errors name a chunk (the reader's context), for a sink that reports them later.
  std::string chunk_where(const std::string& key) const {
    return fmt::format("{} (chunk {})", (array_.path / key).string(), key);
  }

  // Chunks per task of a remote read: enough to keep the worker's requests in flight, few
  // enough that the workers share the chunks, and within kRemoteBatchBytes of stored bytes.
  // Chunks whose place takes them whole (uncompressed, contiguous in host memory) need no buffer.
  std::uint64_t remote_chunks_per_task(const GridWindow& chunks) {
    const std::uint64_t chunk_count = chunks.size();
    if (chunk_count == 0) return 1;
    const bool buffered = !array_.chain.is_identity() ||
                          sink_.direct_target(box_of(chunks.cell(0), Extents{}, chunk_shape_, region_, rank_)).empty();
    const std::uint64_t by_memory =
        buffered ? std::max<std::uint64_t>(1, kRemoteBatchBytes / std::max<std::uint64_t>(staged_bytes_, 1)) : chunk_count;
    const std::uint64_t spread = std::max<std::uint64_t>(1, chunk_count / (std::uint64_t{workers_} * 2));
    return std::clamp<std::uint64_t>(std::min(spread, by_memory), 1, std::uint64_t{in_flight_} * 2);
  }

  // Chunks [first, first + count) of `chunks` from a remote store, fetched at once (one
  // whole-object GET each, read_many), each written straight into its place, or into a buffer of
  // its own (stored bytes, or an uncompressed chunk whose box is not contiguous), sized and
  // checked before anything is allocated; then each is decoded and placed in order.
  void read_chunks_remote(unsigned worker, const GridWindow& chunks, std::uint64_t first, std::uint64_t count) {
    const std::size_t chunk_bytes = static_cast<std::size_t>(staged_bytes_);
    const bool identity = array_.chain.is_identity();
    auto& slots = scratch_[worker]->slots;
    if (slots.size() < count) slots.resize(static_cast<std::size_t>(count));
    struct Batch {
      ReadJob* job;
      std::vector<std::span<std::byte>> direct;
      std::vector<UninitializedBytes>* slots;
      std::size_t chunk_bytes;
      bool identity;
      std::span<std::byte> destination(std::size_t k, std::uint64_t size) {
        if (identity) {
          if (size != chunk_bytes)
            throw Error(ErrorKind::corrupt_data,
                        fmt::format("chunk is {} bytes, an uncompressed chunk of shape [{}] holds {}", size,
                                    fmt::join(job->metadata_.chunk_shape, ", "), chunk_bytes));
          if (!direct[k].empty()) return direct[k];
          job->check_chunk_memory(0);
        } else {
          if (size > job->array_.chain.max_encoded_size())
            throw Error(ErrorKind::corrupt_data, fmt::format("chunk is {} bytes, more than any valid encoding ({})",
                                                             size, job->array_.chain.max_encoded_size()));
          job->check_chunk_memory(size);
        }
        (*slots)[k].resize(static_cast<std::size_t>(size));
        return (*slots)[k];
      }
    } batch{this, std::vector<std::span<std::byte>>(count), &slots, chunk_bytes, identity};
    std::vector<std::string> keys(count);
    std::vector<ChunkBox> boxes(count);
    std::vector<DestinationFor> destinations;
    std::vector<StoreWholeRead> reads(count);
    destinations.reserve(count);
    for (std::size_t k = 0; k < count; ++k) {
      const Extents coords = chunks.cell(first + k);
      keys[k] = chunk_key(coords);
      boxes[k] = box_of(coords, Extents{}, chunk_shape_, region_, rank_);
      if (identity) batch.direct[k] = sink_.direct_target(boxes[k]);
      destinations.emplace_back([b = &batch, k](std::uint64_t size) { return b->destination(k, size); });
      reads[k].key = keys[k];
      reads[k].destination = &destinations[k];
    }
    // Each chunk is placed as soon as it arrived, while the others go on arriving.
    auto place_ready = [&](std::size_t k) {
      ++positions_;
      try {
        converting_bad_alloc([&] {
          if (reads[k].missing) {
            ++missing_;
            sink_.fill(worker, boxes[k]);
            return;
          }
          bytes_read_ += *reads[k].size;
          if (identity) {
            if (!batch.direct[k].empty()) return;
            place_from(worker, std::span<const std::byte>(slots[k]).first(chunk_bytes), boxes[k]);
            return;
          }
          const auto stored = std::span<const std::byte>(slots[k]).first(static_cast<std::size_t>(*reads[k].size));
          if (sink_.place_stored(worker, stored, boxes[k], chunk_where(keys[k]))) return;
          auto decoded = sink_.staging(worker, chunk_bytes).first(chunk_bytes);
          array_.chain.decode(stored, decoded, scratch_[worker]->codec);
          ++cpu_decoded_;
          sink_.place(worker, decoded, boxes[k]);
        });
      } catch (const EarlierChunkError&) {
        throw;  // names its own chunk
      } catch (const Error& e) {
        throw e.with_context(chunk_where(keys[k]));
      }
    };
    converting_bad_alloc([&] { array_.store->read_many(reads, in_flight_, place_ready); });
    // A failure stopped the batch: the first one named with its chunk.
    for (std::size_t k = 0; k < count; ++k) {
      if (!reads[k].error) continue;
      try {
        std::rethrow_exception(reads[k].error);
      } catch (const Error& e) {
        throw e.with_context(chunk_where(keys[k]));
      }
    }
  }

  // Places an uncompressed chunk held outside the worker's staging: from where it is, when the
  // sink takes any memory, else through the staging buffer.
  void place_from(unsigned worker, std::span<const std::byte> chunk, const ChunkBox& box) {
    if (sink_.places_from_any_memory()) return sink_.place(worker, chunk, box);
    auto staging = sink_.staging(worker, chunk.size()).first(chunk.size());
    std::copy(chunk.begin(), chunk.end(), staging.begin());
    sink_.place(worker, staging, box);
  }

  // The origin (first element) of the shard at `coords`, and the window of its inner chunks that
  // the region needs.
  GridWindow inner_window(const Extents& coords, Extents& origin) const {
    Region shard_region(rank_);
    for (std::size_t d = 0; d < rank_; ++d) {
      origin[d] = coords[d] * chunk_shape_[d];
      shard_region[d] = {std::max(origin[d], region_[d].start), std::min(origin[d] + chunk_shape_[d], region_[d].stop)};
    }
    return window_over(shard_region, origin, inner_shape_, rank_, inner_picks_);
  }

  void read_sharded(const GridWindow& shards) {
    // Waves of slices: whole shards while they fit, a shard needing more inner chunks than a wave
    // holds in several slices.
    const std::uint64_t shard_count = shards.size();
    std::vector<ShardSlice> wave;
    std::uint64_t in_wave = 0;
    // Progress counts inner chunks: filled ones when planned, the others when read.
    total_tasks_ = window_over(region_, Extents{}, inner_shape_, rank_, inner_picks_).size();
    for (std::uint64_t s = 0; s < shard_count && !failed_; ++s) {
      Extents origin{};
      const std::uint64_t needed = inner_window(shards.cell(s), origin).size();
      for (std::uint64_t first = 0; first < needed && !failed_;) {
        std::uint64_t count = std::min(needed - first, kWaveInnerChunks - in_wave);
        wave.push_back({s, first, count, first == 0 && count == needed});
        in_wave += count;
        first += count;
        if (in_wave == kWaveInnerChunks) {
          run_wave(shards, wave);
          wave.clear();
          in_wave = 0;
        }
      }
    }
    if (!wave.empty() && !failed_) run_wave(shards, wave);
  }

  void run_wave(const GridWindow& shards, const std::vector<ShardSlice>& wave) {
    slice_keys_.assign(wave.size(), std::string());
    slice_sizes_.assign(wave.size(), 0);
    slice_signatures_.assign(wave.size(), FileSignature{});
    std::vector<std::vector<InnerRead>> per_worker(workers_);
    // Phase 1: each slice's index entries, and the inner chunks the region needs from them.
    parallel(wave.size(), 1, [&](unsigned worker, std::uint64_t u, std::uint64_t) {
      const ShardSlice& slice = wave[u];
      Extents coords = shards.cell(slice.shard);
      slice_keys_[u] = chunk_key(coords);
      const std::string& key = slice_keys_[u];
      const std::size_t planned_before = per_worker[worker].size();
      try {
        converting_bad_alloc([&] { plan_slice(worker, coords, slice, static_cast<std::uint32_t>(u), per_worker[worker]); });
      } catch (const Error& e) {
        throw e.with_context(fmt::format("{} (shard {})", (array_.path / key).string(), key));
      }
      return slice.count - (per_worker[worker].size() - planned_before);  // filled at once
    });
    if (failed_) return;

    std::vector<InnerRead> reads;
    std::size_t total = 0;
    for (const auto& list : per_worker) total += list.size();
    reads.reserve(total);
    for (auto& list : per_worker) {
      reads.insert(reads.end(), list.begin(), list.end());
      list = std::vector<InnerRead>();  // each worker's list goes as soon as it is merged
    }
    std::sort(reads.begin(), reads.end(), [](const InnerRead& a, const InnerRead& b) {
      return a.slice != b.slice ? a.slice < b.slice : a.offset < b.offset;
    });
    if (in_flight_ > 0) {
      // Phase 2, remote: tasks of whole runs of neighbours (remote_tasks), each run one request.
      const std::vector<std::size_t> starts = remote_tasks(reads);
      parallel(starts.size() - 1, 1, [&](unsigned worker, std::uint64_t task, std::uint64_t) {
        const std::size_t first = starts[task];
        const std::size_t count = starts[task + 1] - first;
        read_inner_batch(worker, shards, wave, std::span(reads).subspan(first, count));
        return std::uint64_t{count};
      });
      return;
    }
    // Phase 2: inner chunks in batches (sized in inner_batch.hpp); neighbours within a batch
    // share one read.
    const std::uint64_t batch = inner_chunks_per_task(reads.size(), workers_, array_.store->remote(),
                                                      array_.sharding->inner_chain().is_identity(), staged_bytes_);
    parallel(reads.size(), batch, [&](unsigned worker, std::uint64_t first, std::uint64_t count) {
      read_inner_batch(worker, shards, wave, std::span(reads).subspan(first, count));
      return count;
    });
  }

  // Remote reads of a wave (sorted by shard and offset) cut into tasks: first into runs that
  // one request fetches (inner chunks of one shard up to the store's merge gap apart, within
  // kRemoteBatchBytes), so that how the work is shared never splits a run; then runs grouped
  // into tasks of up to in_flight_ runs and kRemoteBatchBytes, at least one task per worker
  // where there are enough runs. Returns the tasks' first reads, and reads.size() last.
  std::vector<std::size_t> remote_tasks(const std::vector<InnerRead>& reads) const {
    const std::uint64_t gap = array_.store->merge_gap();
    std::vector<std::size_t> runs;  // each run's first read
    std::uint64_t run_first = 0, run_end = 0;
    for (std::size_t i = 0; i < reads.size(); ++i) {
      const InnerRead& read = reads[i];
      const bool joins = i > 0 && read.slice == reads[i - 1].slice && joins_run(run_end, read.offset, gap) &&
                         read.offset + read.nbytes - run_first <= kRemoteBatchBytes;
      if (!joins) {
        runs.push_back(i);
        run_first = read.offset;
      }
      run_end = read.offset + read.nbytes;
    }
    const std::size_t per_task = static_cast<std::size_t>(
        std::clamp<std::uint64_t>(runs.size() / workers_, 1, std::max(in_flight_, 1u)));
    std::vector<std::size_t> starts;
    std::uint64_t task_bytes = 0;
    std::size_t task_runs = 0;
    for (std::size_t r = 0; r < runs.size(); ++r) {
      const std::size_t end = r + 1 < runs.size() ? runs[r + 1] : reads.size();
      std::uint64_t bytes = 0;
      for (std::size_t i = runs[r]; i < end; ++i) bytes += reads[i].nbytes;
      if (starts.empty() || task_runs == per_task || task_bytes + bytes > kRemoteBatchBytes) {
        starts.push_back(runs[r]);
        task_bytes = 0;
        task_runs = 0;
      }
      task_bytes += bytes;
      ++task_runs;
    }
    starts.push_back(reads.size());
    return starts;
  }

  // Reads the index entries of one slice and plans its inner chunks: missing ones are filled at
  // once, the others appended to `reads`.
  void plan_slice(unsigned worker, const Extents& coords, const ShardSlice& slice, std::uint32_t slice_number,
                  std::vector<InnerRead>& reads) {
    const auto& sharding = *array_.sharding;
    const Extents grid = to_extents(sharding.chunks_per_shard());
    Extents origin{};
    const GridWindow inner = inner_window(coords, origin);
    positions_ += slice.count;
    auto file = array_.store->open_object(slice_keys_[slice_number]);
    if (!file) {
      missing_ += slice.count;
      if (slice.whole) {
        sink_.fill(worker, box_of(coords, Extents{}, chunk_shape_, region_, rank_));
        return;
      }
      for (std::uint64_t i = slice.first; i < slice.first + slice.count; ++i)
        sink_.fill(worker, box_of(inner.cell(i), origin, inner_shape_, region_, rank_));
      return;
    }
    slice_sizes_[slice_number] = file->size();
    if (file->local_file()) slice_signatures_[slice_number] = signature_of(*file);
    if (file->size() < sharding.index_nbytes())
      throw Error(ErrorKind::corrupt_data, fmt::format("shard is {} bytes, shorter than its {} byte index",
                                                       file->size(), sharding.index_nbytes()));
    auto take = [&](std::uint64_t i, const codec::ShardIndex& index) {
      const Extents local = inner.cell(i);
      const std::uint64_t linear = coords_to_linear(local, grid, rank_);
      const codec::ShardIndexEntry entry = index[linear];
      if (entry.missing()) {
        ++missing_;
        sink_.fill(worker, box_of(local, origin, inner_shape_, region_, rank_));
        return;
      }
      reads.push_back({slice_number, static_cast<std::uint32_t>(linear), entry.offset, entry.nbytes});
    };
    if (sharding.index_entries_addressable()) {
      // No checksum: read only the entries the slice needs, in blocks of neighbours. Linear
      // indices grow along the window's C order, so each block serves the cells after it.
      const std::uint64_t last = coords_to_linear(inner.cell(slice.first + slice.count - 1), grid, rank_);
      std::optional<codec::ShardIndex> block;
      for (std::uint64_t i = slice.first; i < slice.first + slice.count; ++i) {
        const std::uint64_t linear = coords_to_linear(inner.cell(i), grid, rank_);
        if (!block || linear >= block->first() + block->size()) {
          const std::uint64_t count = std::min(kEntryBlock, last - linear + 1);
          codec::ByteBuffer stored(static_cast<std::size_t>(16 * count));
          file->read_exact(sharding.index_entry_offset(linear, file->size()), stored);
          bytes_read_ += stored.size();
          block.emplace(sharding.decode_index_entries(std::move(stored), linear, file->size()));
        }
        take(i, *block);
      }
      return;
    }
    // A checksum covers the whole index: it is read whole, within the memory limit.
    if (sharding.index_decode_nbytes() > memory_limit_)
      throw_over_limit(fmt::format("the shard index ({} bytes, {} inner chunks)", sharding.index_nbytes(),
                                   sharding.inner_chunk_count()),
                       sharding.index_decode_nbytes(), memory_limit_);
    codec::ByteBuffer index_bytes(static_cast<std::size_t>(sharding.index_nbytes()));
    file->read_exact(sharding.index_offset(file->size()), index_bytes);
    bytes_read_ += index_bytes.size();
    const codec::ShardIndex index = sharding.decode_index(std::move(index_bytes), file->size());
    for (std::uint64_t i = slice.first; i < slice.first + slice.count; ++i) take(i, index);
  }

  void read_inner_batch(unsigned worker, const GridWindow& shards, const std::vector<ShardSlice>& wave,
                        std::span<const InnerRead> batch) {
    if (in_flight_ > 0) return read_inner_batch_remote(worker, shards, wave, batch);
    const auto& sharding = *array_.sharding;
    const auto& inner_chain = sharding.inner_chain();
    const Extents grid = to_extents(sharding.chunks_per_shard());
    const bool place_raw = inner_chain.is_identity() && sink_.places_from_any_memory();
    // Room for stored bytes in this worker's share of the limit (at least one chunk's, checked).
    const std::uint64_t share = memory_limit_ / workers_;
    const std::uint64_t run_room = share > staged_bytes_ + scratch_bytes_ ? share - staged_bytes_ - scratch_bytes_ : 0;
    std::unique_ptr<StoreObject> file;
    std::uint32_t open_slice = ~0u;
    bool replaced = false;  // the open file is not the one whose index planned the slice
    std::string open_key;
    Extents origin{};
    std::size_t i = 0;
    while (i < batch.size()) {
      const std::string& key = slice_keys_[batch[i].slice];
      try {
        converting_bad_alloc([&] {
          if (batch[i].slice != open_slice) {
            if (key != open_key) {
              file = array_.store->open_object(key, settings_.o_direct);
              if (!file) throw Error(ErrorKind::io, "shard disappeared while being read");
              open_key = key;
            }
            open_slice = batch[i].slice;
            Extents coords = shards.cell(wave[open_slice].shard);
            for (std::size_t d = 0; d < rank_; ++d) origin[d] = coords[d] * chunk_shape_[d];
            // A writer replaces a shard by renaming a new file over it: if that happened since
            // planning, the planned offsets belong to the old file (now gone). Such a slice
            // takes its entries from the file now open instead.
            replaced = file->local_file() && signature_of(*file) != slice_signatures_[open_slice];
          }
          if (replaced) {
            std::size_t end = i;
            while (end < batch.size() && batch[end].slice == open_slice) ++end;
            read_from_replaced(worker, *file, batch.subspan(i, end - i), origin);
            i = end;
            return;
          }
          check_chunk_memory(batch[i].nbytes);
          // Extend the run while the next inner chunk starts where this one ends and the run
          // stays within this worker's share of the memory limit.
          std::size_t end = i + 1;
          std::uint64_t run_bytes = batch[i].nbytes;
          while (end < batch.size() && batch[end].slice == open_slice &&
                 joins_run(batch[i].offset + run_bytes, batch[end].offset, 0) &&
                 batch[end].offset + batch[end].nbytes - batch[i].offset <= run_room) {
            run_bytes = batch[end].offset + batch[end].nbytes - batch[i].offset;
            ++end;
          }
          auto& encoded = scratch_[worker]->stored;
          encoded.resize(static_cast<std::size_t>(run_bytes));
          file->read_exact(batch[i].offset, encoded);
          bytes_read_ += run_bytes;
          for (std::size_t k = i; k < end; ++k) {
            auto piece = std::span<const std::byte>(encoded).subspan(
                static_cast<std::size_t>(batch[k].offset - batch[i].offset), static_cast<std::size_t>(batch[k].nbytes));
            const Extents local = linear_to_coords(batch[k].inner, grid, rank_);
            const ChunkBox box = box_of(local, origin, inner_shape_, region_, rank_);
            place_inner(worker, piece, box, key, batch[k].offset, place_raw);
          }
          i = end;
        });
      } catch (const EarlierChunkError&) {
        throw;  // names its own chunk
      } catch (const Error& e) {
        throw e.with_context(inner_where(key, batch[i].offset));
      }
    }
  }

  // Decodes (unless `place_raw`: uncompressed, and the sink takes it from where it is) and
  // places the stored bytes of one inner chunk.
  void place_inner(unsigned worker, std::span<const std::byte> piece, const ChunkBox& box, const std::string& key,
                   std::uint64_t offset, bool place_raw) {
    const std::size_t inner_bytes = static_cast<std::size_t>(staged_bytes_);
    if (place_raw) {
      if (piece.size() != inner_bytes)
        throw Error(ErrorKind::corrupt_data, fmt::format("inner chunk at offset {} is {} bytes, an uncompressed one holds {}",
                                                         offset, piece.size(), inner_bytes));
      sink_.place(worker, piece, box);
      return;
    }
    if (sink_.place_stored(worker, piece, box, inner_where(key, offset))) return;
    auto staging = sink_.staging(worker, inner_bytes).first(inner_bytes);
    try {
      array_.sharding->inner_chain().decode(piece, staging, scratch_[worker]->codec);
    } catch (const std::bad_alloc&) {
      throw Error(ErrorKind::io, fmt::format("out of memory (inner chunk at offset {})", offset));
    }
    ++cpu_decoded_;
    sink_.place(worker, staging, box);
  }

  // Inner chunks from a remote store: the batch's stored bytes fetched at once (read_ranges:
  // ranges of one shard close together share one request), back to back into the worker's
  // buffer, in parts of at most the worker's room; then each decoded and placed in order.
  void read_inner_batch_remote(unsigned worker, const GridWindow& shards, const std::vector<ShardSlice>& wave,
                               std::span<const InnerRead> batch) {
    const auto& sharding = *array_.sharding;
    const Extents grid = to_extents(sharding.chunks_per_shard());
    const bool place_raw = sharding.inner_chain().is_identity() && sink_.places_from_any_memory();
    const std::uint64_t share = memory_limit_ / workers_;
    const std::uint64_t room = std::min(
        kRemoteBatchBytes, share > staged_bytes_ + scratch_bytes_ ? share - staged_bytes_ - scratch_bytes_ : 0);
    auto& encoded = scratch_[worker]->stored;
    std::vector<StoreRangeRead> ranges;
    std::size_t i = 0;
    while (i < batch.size()) {
      std::size_t end = i;
      std::uint64_t bytes = 0;
      try {
        while (end < batch.size() && (end == i || bytes + batch[end].nbytes <= room)) {
          check_chunk_memory(batch[end].nbytes);
          bytes += batch[end].nbytes;
          ++end;
        }
      } catch (const Error& e) {
        throw e.with_context(inner_where(slice_keys_[batch[end].slice], batch[end].offset));
      }
      // Each run of inner chunks is decoded and placed as soon as its request ends, while the
      // others go on arriving. Errors of a chunk name it; others name the first of the part.
      bool named = false;
      Extents origin{};
      auto place_ready = [&](std::size_t first, std::size_t count) {
        for (std::size_t r = first; r < first + count; ++r) {
          const InnerRead& read = batch[i + r];
          const std::string& key = slice_keys_[read.slice];
          try {
            converting_bad_alloc([&] {
              const Extents coords = shards.cell(wave[read.slice].shard);
              for (std::size_t d = 0; d < rank_; ++d) origin[d] = coords[d] * chunk_shape_[d];
              const Extents local = linear_to_coords(read.inner, grid, rank_);
              place_inner(worker, ranges[r].buffer, box_of(local, origin, inner_shape_, region_, rank_), key,
                          read.offset, place_raw);
            });
          } catch (const EarlierChunkError&) {
            named = true;
            throw;  // names its own chunk
          } catch (const Error& e) {
            named = true;
            throw e.with_context(inner_where(key, read.offset));
          }
        }
      };
      try {
        converting_bad_alloc([&] {
          encoded.resize(static_cast<std::size_t>(bytes));
          ranges.clear();
          std::size_t at = 0;
          for (std::size_t k = i; k < end; ++k) {
            const std::size_t n = static_cast<std::size_t>(batch[k].nbytes);
            ranges.push_back({slice_keys_[batch[k].slice], batch[k].offset, std::span(encoded).subspan(at, n)});
            at += n;
          }
          array_.store->read_ranges(ranges, in_flight_, place_ready);
        });
      } catch (const Error& e) {
        if (named) throw;
        throw e.with_context(inner_where(slice_keys_[batch[i].slice], batch[i].offset));
      }
      bytes_read_ += bytes;
      i = end;
    }
  }

  std::string inner_where(const std::string& key, std::uint64_t offset) const {
    return fmt::format("{} (shard {}, inner chunk at offset {})", (array_.path / key).string(), key, offset);
  }

  // Reads `reads` (inner chunks of one shard, planned from an index of a file since replaced)
  // from `file`, the shard as it is now: its whole index is read (and checked) again, then each
  // inner chunk is read on its own, or filled where the new index has it missing. Each inner
  // chunk is then whole from one version of the shard.
  void read_from_replaced(unsigned worker, const StoreObject& file, std::span<const InnerRead> reads,
                          const Extents& origin) {
    const auto& sharding = *array_.sharding;
    const Extents grid = to_extents(sharding.chunks_per_shard());
    const std::size_t inner_bytes = static_cast<std::size_t>(staged_bytes_);
    if (file.size() < sharding.index_nbytes())
      throw Error(ErrorKind::corrupt_data, fmt::format("shard is {} bytes, shorter than its {} byte index",
                                                       file.size(), sharding.index_nbytes()));
    if (sharding.index_decode_nbytes() > memory_limit_)
      throw_over_limit(fmt::format("the shard index ({} bytes, {} inner chunks)", sharding.index_nbytes(),
                                   sharding.inner_chunk_count()),
                       sharding.index_decode_nbytes(), memory_limit_);
    codec::ByteBuffer index_bytes(static_cast<std::size_t>(sharding.index_nbytes()));
    file.read_exact(sharding.index_offset(file.size()), index_bytes);
    bytes_read_ += index_bytes.size();
    const codec::ShardIndex index = sharding.decode_index(std::move(index_bytes), file.size());
    for (const InnerRead& read : reads) {
      const Extents local = linear_to_coords(read.inner, grid, rank_);
      const ChunkBox box = box_of(local, origin, inner_shape_, region_, rank_);
      const codec::ShardIndexEntry entry = index[read.inner];
      if (entry.missing()) {
        ++missing_;
        sink_.fill(worker, box);
        continue;
      }
      check_chunk_memory(entry.nbytes);
      auto& encoded = scratch_[worker]->stored;
      encoded.resize(static_cast<std::size_t>(entry.nbytes));
      file.read_exact(entry.offset, encoded);
      bytes_read_ += entry.nbytes;
      if (sink_.place_stored(worker, encoded, box, inner_where(slice_keys_[reads.front().slice], entry.offset))) continue;
      auto staging = sink_.staging(worker, inner_bytes).first(inner_bytes);
      sharding.inner_chain().decode(encoded, staging, scratch_[worker]->codec);
      ++cpu_decoded_;
      sink_.place(worker, staging, box);
    }
  }

  const Array::Impl& array_;
  const CellPicks* chunk_picks_;  // null: every cell of the region
  const CellPicks* inner_picks_;
  const ArrayMetadata& metadata_;
  const Region& region_;
  ChunkSink& sink_;
  const Settings& settings_;
  const std::size_t rank_;
  const Extents chunk_shape_;
  const std::uint64_t memory_limit_;
  Extents inner_shape_{};
  std::uint64_t staged_bytes_ = 0;   // a decoded chunk (an inner chunk for sharded arrays)
  std::uint64_t scratch_bytes_ = 0;  // the chain's scratch for one
  bool staged_identity_ = false;
  unsigned workers_ = 1;
  unsigned in_flight_ = 0;  // a remote store's requests in flight per worker; 0 for local stores

  // Per worker, while it runs: stored bytes of a chunk or a run of inner chunks (overwritten by
  // each read, never zeroed) and the chain's scratch, lent by the worker's thread.
  std::vector<WorkerScratch*> scratch_;
  std::vector<std::string> slice_keys_;
  std::vector<std::uint64_t> slice_sizes_;  // each slice's shard size, as planning found it
  std::vector<FileSignature> slice_signatures_;  // each slice's shard file (local), as planning found it
  std::atomic<bool> failed_{false};
  std::mutex error_mutex_;
  std::exception_ptr error_;
  std::mutex progress_mutex_;
  std::atomic<std::uint64_t> done_{0};
  std::uint64_t total_tasks_ = 0;
  std::atomic<std::uint64_t> positions_{0};
  std::atomic<std::uint64_t> missing_{0};
  std::atomic<std::uint64_t> bytes_read_{0};
  std::string io_engine_ = "threads";
  std::atomic<bool> uring_failed_{false};  // a worker could not set up its ring: threads did its part
  std::atomic<std::uint64_t> cpu_decoded_{0};  // compressed chunks decoded here (not by the sink)
};

}  // namespace

ReadStats run_read(const Array::Impl& array, const Region& region, ChunkSink& sink, const Settings& settings) {
  return ReadJob(array, region, sink, settings).run();
}

ReadStats run_read(const Array::Impl& array, const Region& region, ChunkSink& sink, const Settings& settings,
                   const ReadPicks* picks) {
  return ReadJob(array, region, sink, settings, picks).run();
}

}  // namespace zarrdirect

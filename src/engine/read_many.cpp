// The batch reader: one plan for many regions.
//
// Planning: every region lists the (shard, inner chunk) pairs it touches (for an unsharded array
// the chunk itself, inner chunk 0), tagged with the region's index. Sorting the list groups it by
// chunk: each group is one unit of work, read and decoded once and then copied into every region
// of the group. Sharded arrays first read, per shard, the index entries of the inner chunks not in
// the cache (in parallel over shards), then decode the inner chunks in parallel.
//
// With the handle's cache on, a chunk's file is opened and fstat'ed before the lookup; the bytes
// of a miss are read through that same descriptor, so the signature stored with the decoded chunk
// is the signature of the bytes decoded. For shards the signature is taken when the index is read
// and checked again when the inner chunk's bytes are: a shard replaced in between (a concurrent
// writer) has the inner chunk looked up again in the new file's own index, never old offsets
// applied to new bytes.
//
// Into device memory, with a GPU decoder for the chunks' codec (Settings::decode picks the side,
// engine/gpu_decode_route.hpp), the units are taken in waves of at most kDeviceDecodeWaveBytes
// of decoded chunks: the wave's stored chunks go to the GPU decoders (device_chunk_decoder.hpp)
// and each decoded chunk is then placed from device memory into every region of its unit, as a
// device-cache entry is. Without the GPU route each chunk is decoded on the host, only as far as
// its regions read it, and staged.
#include "engine/read_many.hpp"

#include <cstring>

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <new>
#include <optional>

#include <fmt/format.h>

#include "engine/chunk_sink.hpp"
#include "engine/device_chunk_decoder.hpp"
#include "engine/gpu_decode_route.hpp"
#include "engine/worker_pool.hpp"
#include "engine/worker_scratch.hpp"
#include "util/checked_math.hpp"

namespace zarrdirect {
namespace {

constexpr std::uint64_t kEntryBlock = 4096;  // index entries read at once (16 bytes each)

// One (chunk, region) pair of the plan; the chunk's (shard's) grid coordinates are in the plan's
// flat coordinate list at `coords`.
struct Need {
  std::uint64_t coords = 0;
  std::uint32_t inner = 0;
  std::uint32_t region = 0;
};

// One chunk to produce: needs [first, last) of the sorted plan.
struct Unit {
  std::size_t first = 0;
  std::size_t last = 0;
  std::size_t shard = 0;
  std::uint64_t offset = 0;  // sharded: where the inner chunk is stored
  std::uint64_t nbytes = 0;
  bool missing = false;
  DecodedChunkPtr cached;    // found in the cache while planning the shard
  DecodedChunkPtr resident;  // found in the device cache while planning the shard
  DecodedChunkPtr decoded_on_device;  // decoded by the GPU for this read (its wave)
};

// One stored file (shard, or chunk for unsharded arrays) and its units [first_unit, last_unit).
struct Shard {
  std::uint64_t coords = 0;
  std::size_t first_unit = 0;
  std::size_t last_unit = 0;
  std::string key;
  std::optional<FileSignature> signature;
};

std::uint64_t saturating_add(std::uint64_t a, std::uint64_t b) { return checked_add(a, b).value_or(~std::uint64_t{0}); }

// The device path's view of one chunk being produced (read_many into CUDA memory): which part of
// it the batch stages, and the staging, taken only once bytes are about to be written (a chunk
// found in the device cache or missing stages nothing). An unfinished stage is abandoned.
class DeviceFetch {
 public:
  DeviceFetch(DevicePlacer& placer, ChunkSpan part, bool is_whole, std::size_t boxes)
      : span(part), whole(is_whole), placer_(placer), boxes_(boxes) {}
  ~DeviceFetch() {
    if (!staged_ || committed_) return;
    try {
      placer_.abandon(*staged_);
    } catch (...) {
      // Unwinding from the failure that left the stage unfinished: that failure is the one reported.
    }
  }
  DeviceFetch(const DeviceFetch&) = delete;
  DeviceFetch& operator=(const DeviceFetch&) = delete;

  std::span<std::byte> take() {
    if (!staged_) staged_ = placer_.stage(static_cast<std::size_t>(span.nbytes), boxes_);
    return {staged_->host, static_cast<std::size_t>(span.nbytes)};
  }
  void commit(std::uint64_t chunk_bytes, std::span<const ManyBox> boxes, const DeviceCacheInsert* insert) {
    take();
    placer_.commit(*staged_, span, chunk_bytes, boxes, insert);
    committed_ = true;
  }

  const ChunkSpan span;             // the bytes of the chunk staged
  const bool whole;                 // span is the whole chunk
  bool filled = false;              // the fetch wrote the span into take()
  DecodedChunkPtr resident;         // the chunk is in the device cache: nothing to stage
  std::optional<FileSignature> signature;  // of the file the bytes came from

 private:
  DevicePlacer& placer_;
  std::size_t boxes_;
  std::optional<DevicePlacer::Staged> staged_;
  bool committed_ = false;
};

class ManyJob {
 public:
  ManyJob(const Array::Impl& array, const std::vector<Region>& regions, const std::vector<DestinationLayout>& destinations,
          const Settings& settings, DevicePlacer* placer, const DeviceChunkDecoderFactory& make_decoder)
      : array_(array), metadata_(array.metadata), regions_(regions), destinations_(destinations), settings_(settings),
        rank_(metadata_.rank()), chunk_shape_(to_extents(metadata_.chunk_shape)),
        memory_limit_(settings.effective_memory_limit()), cache_(array.cache.get()), placer_(placer),
        device_cache_(array.device_cache.get()),
        make_decoder_(make_decoder ? make_decoder : DeviceChunkDecoderFactory(make_device_chunk_decoder)) {
    if (settings.cache_bytes > cache_->capacity()) cache_->set_capacity(settings.cache_bytes);
    use_cache_ = cache_->enabled();
    if (placer_) {
      if (settings.device_cache_bytes > device_cache_->capacity()) device_cache_->set_capacity(settings.device_cache_bytes);
      use_device_cache_ = device_cache_->enabled();
    }
    const codec::CodecChain& staged = array_.sharding ? array_.sharding->inner_chain() : array_.chain;
    staged_chain_ = &staged;
    staged_bytes_ = staged.decoded_spec().nbytes();
    scratch_bytes_ = staged.decode_scratch_nbytes();
    if (array_.sharding) {
      inner_shape_ = to_extents(array_.sharding->inner_chunk_shape());
      per_shard_ = to_extents(array_.sharding->chunks_per_shard());
    }
    if (placer_) route_ = read_many_gpu_route(array_, settings_, use_cache_ || use_device_cache_);
  }

  ReadStats run() {
    plan();
    const std::uint64_t per_worker =
        std::max<std::uint64_t>(saturating_add(saturating_add(staged_bytes_, staged_bytes_), scratch_bytes_), 1);
    std::uint64_t workers = std::min<std::uint64_t>(settings_.effective_threads(), std::max<std::size_t>(units_.size(), 1));
    workers = std::min<std::uint64_t>(workers, memory_limit_ / per_worker);
    workers_ = static_cast<unsigned>(std::clamp<std::uint64_t>(workers, 1, WorkerPool::shared().max_workers()));
    states_.resize(workers_);
    total_ = units_.size();
    if (array_.sharding)
      parallel(shards_.size(), [&](unsigned worker, std::size_t s) { plan_shard(worker, s); return false; });
    if (!failed_) {
      const DecodeSide side = gpu_side();
      if (side == DecodeSide::cpu) {
        parallel(units_.size(), [&](unsigned worker, std::size_t u) { produce(worker, u); return true; });
      } else {
        produce_in_waves(side);
      }
    }
    if (error_) std::rethrow_exception(error_);
    if (placer_) placer_->finish();
    ReadStats stats;
    stats.chunks_total = units_.size();
    stats.chunks_missing = missing_.load();
    stats.bytes_read = bytes_read_.load();
    stats.chunks_decoded = decoded_.load();
    stats.cache_hits = hits_.load();
    stats.chunks_decoded_gpu = gpu_decoded_.load();
    stats.bytes_decoded_gpu = stats.chunks_decoded_gpu * staged_bytes_;
    stats.chunks_decoded_cpu = stats.chunks_decoded - stats.chunks_decoded_gpu;
    stats.threads = workers_;
    stats.io_path = placer_ ? "staged" : "host";
    return stats;
  }

 private:
  struct WorkerState {
    WorkerScratch* buffers = nullptr;        // stored bytes and codec scratch, lent by the thread
    std::shared_ptr<DecodedChunk> reusable;  // the decode target when nothing is cached
    std::unique_ptr<StoreObject> file;       // the shard last read from, kept open
    std::string file_key;
    std::vector<ManyBox> boxes;              // the device path's boxes of the unit in hand
    std::vector<ManyBox> span_boxes;         // needed_end's (boxes may be in use meanwhile)
  };

  // Lists and sorts the (chunk, region) pairs; groups them into units and shards.
  void plan() {
    std::vector<Need> needs;
    for (std::size_t r = 0; r < regions_.size(); ++r) {
      const Region& region = regions_[r];
      const Extents& cell = array_.sharding ? inner_shape_ : chunk_shape_;
      const GridWindow window = window_over(region, Extents{}, cell, rank_);
      const std::uint64_t count = window.size();
      for (std::uint64_t i = 0; i < count; ++i) {
        Extents g = window.cell(i);
        std::uint32_t inner = 0;
        if (array_.sharding) {
          Extents local{};
          for (std::size_t d = 0; d < rank_; ++d) {
            local[d] = g[d] % per_shard_[d];
            g[d] /= per_shard_[d];
          }
          inner = static_cast<std::uint32_t>(coords_to_linear(local, per_shard_, rank_));
        }
        needs.push_back({static_cast<std::uint64_t>(coords_.size()), inner, static_cast<std::uint32_t>(r)});
        coords_.insert(coords_.end(), g.begin(), g.begin() + static_cast<std::ptrdiff_t>(rank_));
      }
    }
    auto coords_less = [&](std::uint64_t a, std::uint64_t b) {
      return std::lexicographical_compare(coords_.begin() + static_cast<std::ptrdiff_t>(a),
                                          coords_.begin() + static_cast<std::ptrdiff_t>(a + rank_),
                                          coords_.begin() + static_cast<std::ptrdiff_t>(b),
                                          coords_.begin() + static_cast<std::ptrdiff_t>(b + rank_));
    };
    auto coords_equal = [&](std::uint64_t a, std::uint64_t b) {
      return std::equal(coords_.begin() + static_cast<std::ptrdiff_t>(a),
                        coords_.begin() + static_cast<std::ptrdiff_t>(a + rank_),
                        coords_.begin() + static_cast<std::ptrdiff_t>(b));
    };
    std::sort(needs.begin(), needs.end(), [&](const Need& a, const Need& b) {
      if (a.coords != b.coords && !coords_equal(a.coords, b.coords)) return coords_less(a.coords, b.coords);
      return a.inner != b.inner ? a.inner < b.inner : a.region < b.region;
    });
    for (std::size_t i = 0; i < needs.size(); ++i) {
      const bool new_shard = i == 0 || !coords_equal(needs[i].coords, needs[i - 1].coords);
      if (new_shard) {
        if (!shards_.empty()) shards_.back().last_unit = units_.size();
        Shard shard;
        shard.coords = needs[i].coords;
        shard.first_unit = units_.size();
        shard.key = metadata_.chunk_key_encoding.key(std::span(coords_).subspan(needs[i].coords, rank_));
        shards_.push_back(std::move(shard));
      }
      if (new_shard || needs[i].inner != needs[i - 1].inner) {
        if (!units_.empty()) units_.back().last = i;
        Unit unit;
        unit.first = i;
        unit.shard = shards_.size() - 1;
        units_.push_back(unit);
      }
    }
    if (!units_.empty()) units_.back().last = needs.size();
    if (!shards_.empty()) shards_.back().last_unit = units_.size();
    needs_ = std::move(needs);
  }

  Extents shard_coords(const Shard& shard) const {
    Extents coords{};
    std::copy_n(coords_.begin() + static_cast<std::ptrdiff_t>(shard.coords), rank_, coords.begin());
    return coords;
  }

  // The box where `unit` meets the region of `need`.
  ChunkBox box_for(const Unit& unit, const Need& need) const {
    const Extents coords = shard_coords(shards_[unit.shard]);
    if (!array_.sharding) return box_of(coords, Extents{}, chunk_shape_, regions_[need.region], rank_);
    Extents origin{};
    for (std::size_t d = 0; d < rank_; ++d) origin[d] = coords[d] * chunk_shape_[d];
    return box_of(linear_to_coords(need.inner, per_shard_, rank_), origin, inner_shape_, regions_[need.region], rank_);
  }

  std::string where(const Unit& unit) const {
    const Shard& shard = shards_[unit.shard];
    if (!array_.sharding) return fmt::format("{} (chunk {})", (array_.path / shard.key).string(), shard.key);
    return fmt::format("{} (shard {}, inner chunk {})", (array_.path / shard.key).string(), shard.key,
                       needs_[unit.first].inner);
  }

  template <typename Body>
  void parallel(std::size_t tasks, Body&& body) {
    std::atomic<std::size_t> next{0};
    WorkerPool::shared().run(workers_, [&](unsigned worker) {
      WorkerScratchLease lease;  // this thread's buffers, as its last read left them (worker_scratch.hpp)
      states_[worker].buffers = &lease.get();
      while (!failed_.load(std::memory_order_relaxed)) {
        const std::size_t task = next.fetch_add(1);
        if (task >= tasks) break;
        try {
          if (body(worker, task)) report_progress();
        } catch (const std::bad_alloc&) {
          record_failure(std::make_exception_ptr(Error(ErrorKind::io, "out of memory")));
        } catch (...) {
          record_failure(std::current_exception());
        }
      }
    });
  }

  void record_failure(std::exception_ptr error) {
    std::lock_guard lock(error_mutex_);
    if (!error_) error_ = error;
    failed_ = true;
  }

  void report_progress() {
    const std::size_t done = ++done_;
    if (!settings_.progress) return;
    std::lock_guard lock(progress_mutex_);
    if (!settings_.progress(done, total_))
      record_failure(std::make_exception_ptr(Error(ErrorKind::cancelled, "read cancelled")));
  }

  void check_chunk_memory(std::uint64_t stored) const {
    const std::uint64_t needed = saturating_add(saturating_add(staged_bytes_, stored), scratch_bytes_);
    if (needed > memory_limit_)
      throw Error(ErrorKind::io, fmt::format("decoding this chunk needs {} bytes of memory, more than the read's "
                                             "limit of {} bytes (Settings::memory_limit_bytes, "
                                             "ZARRDIRECT_MEMORY_LIMIT_MB)",
                                             needed, memory_limit_));
  }

  // Sharded arrays, phase 1: the shard's signature, cache lookups, and the index entries of the rest.
  void plan_shard(unsigned, std::size_t s) {
    Shard& shard = shards_[s];
    const auto& sharding = *array_.sharding;
    try {
      auto file = array_.store->open_object(shard.key);
      if (!file) {
        for (std::size_t u = shard.first_unit; u < shard.last_unit; ++u) units_[u].missing = true;
        return;
      }
      shard.signature = signature_of(*file);
      for (std::size_t u = shard.first_unit; u < shard.last_unit; ++u) {
        const std::uint32_t inner = needs_[units_[u].first].inner;
        if (use_device_cache_) units_[u].resident = find_resident(shard.key, inner, *shard.signature);
        if (use_cache_ && !units_[u].resident) units_[u].cached = cache_->find(shard.key, inner, *shard.signature);
      }
      if (file->size() < sharding.index_nbytes())
        throw Error(ErrorKind::corrupt_data, fmt::format("shard is {} bytes, shorter than its {} byte index",
                                                         file->size(), sharding.index_nbytes()));
      auto take = [&](Unit& unit, const codec::ShardIndex& index) {
        const codec::ShardIndexEntry entry = index[needs_[unit.first].inner];
        unit.missing = entry.missing();
        unit.offset = entry.offset;
        unit.nbytes = entry.nbytes;
      };
      if (sharding.index_entries_addressable()) {
        // Units are sorted by inner index: a block of entries serves the units after it.
        std::optional<codec::ShardIndex> block;
        for (std::size_t u = shard.first_unit; u < shard.last_unit; ++u) {
          if (units_[u].cached || units_[u].resident) continue;
          const std::uint64_t linear = needs_[units_[u].first].inner;
          if (!block || linear >= block->first() + block->size()) {
            const std::uint64_t last = needs_[units_[shard.last_unit - 1].first].inner;
            const std::uint64_t count = std::min(kEntryBlock, last - linear + 1);
            codec::ByteBuffer stored(static_cast<std::size_t>(16 * count));
            file->read_exact(sharding.index_entry_offset(linear, file->size()), stored);
            bytes_read_ += stored.size();
            block.emplace(sharding.decode_index_entries(std::move(stored), linear, file->size()));
          }
          take(units_[u], *block);
        }
        return;
      }
      bool all_cached = true;
      for (std::size_t u = shard.first_unit; u < shard.last_unit; ++u)
        all_cached = all_cached && (units_[u].cached || units_[u].resident);
      if (all_cached) return;
      if (sharding.index_decode_nbytes() > memory_limit_)
        throw Error(ErrorKind::io, fmt::format("the shard index needs {} bytes of memory, more than the read's limit "
                                               "of {} bytes (Settings::memory_limit_bytes)",
                                               sharding.index_decode_nbytes(), memory_limit_));
      codec::ByteBuffer index_bytes(static_cast<std::size_t>(sharding.index_nbytes()));
      file->read_exact(sharding.index_offset(file->size()), index_bytes);
      bytes_read_ += index_bytes.size();
      const codec::ShardIndex index = sharding.decode_index(std::move(index_bytes), file->size());
      for (std::size_t u = shard.first_unit; u < shard.last_unit; ++u)
        if (!units_[u].cached && !units_[u].resident) take(units_[u], index);
    } catch (const Error& e) {
      throw e.with_context(fmt::format("{} (shard {})", (array_.path / shard.key).string(), shard.key));
    }
  }

  // Whether a unit's chunk goes to the GPU decoders: stored (as far as planning knows), neither
  // cached nor found in the device cache, needed by no more regions than one stage announces.
  bool decodable_on_device(const Unit& unit) const {
    return !unit.missing && !unit.cached && !unit.resident && unit.last - unit.first <= kMaxBoxesPerStage;
  }

  // Where this read decodes its chunks (cpu: on the host, staged decoded): the side the route and
  // read_many_decode_side() give the chunks left to decode.
  DecodeSide gpu_side() const {
    if (route_.codec == GpuCodec::none) return DecodeSide::cpu;
    const auto decodable = static_cast<std::uint64_t>(
        std::count_if(units_.begin(), units_.end(), [&](const Unit& unit) { return decodable_on_device(unit); }));
    if (decodable == 0) return DecodeSide::cpu;
    return read_many_decode_side(route_, settings_.decode, checked_mul(decodable, staged_bytes_).value_or(~std::uint64_t{0}));
  }

  // The units in waves: each wave's decodable chunks decoded on the GPU, then every unit of the
  // wave placed; a wave's device buffer is let go once its placements are queued (the placer
  // holds what its batches still read).
  void produce_in_waves(DecodeSide side) {
    const std::size_t slots = wave_slots(staged_bytes_, settings_);
    const Extents& shape = array_.sharding ? inner_shape_ : chunk_shape_;
    std::vector<std::size_t> wave;
    for (std::size_t begin = 0; begin < units_.size() && !failed_;) {
      wave.clear();
      std::size_t end = begin;
      for (; end < units_.size() && (wave.size() < slots || !decodable_on_device(units_[end])); ++end)
        if (decodable_on_device(units_[end])) wave.push_back(end);
      if (!wave.empty()) {
        try {
          auto decoder = make_decoder_(route_, std::span<const std::uint64_t>(shape.data(), rank_), metadata_.dtype.size,
                                       wave.size(), workers_, settings_, placer_->device(), side == DecodeSide::share);
          parallel(wave.size(), [&](unsigned worker, std::size_t k) {
            decode_on_device(worker, units_[wave[k]], *decoder, k);
            return false;
          });
          if (failed_) return;
          const std::vector<DecodedChunkPtr> chunks = decoder->finish();
          gpu_decoded_ += decoder->gpu_chunks();
          for (std::size_t k = 0; k < wave.size(); ++k)
            if (!units_[wave[k]].missing) units_[wave[k]].decoded_on_device = chunks[k];
        } catch (const std::bad_alloc&) {
          record_failure(std::make_exception_ptr(Error(ErrorKind::io, "out of memory")));
        } catch (...) {
          record_failure(std::current_exception());
        }
        if (failed_) return;
      }
      parallel(end - begin, [&](unsigned worker, std::size_t t) { produce(worker, begin + t); return true; });
      for (std::size_t u : wave) units_[u].decoded_on_device.reset();
      begin = end;
    }
  }

  // One chunk of a wave: its stored bytes handed to the GPU decoders for `slot`, or decoded here
  // when they leave it to the CPU. A chunk found missing only now is marked so.
  void decode_on_device(unsigned worker, Unit& unit, DeviceChunkDecoder& decoder, std::size_t slot) {
    try {
      std::span<const std::byte> stored;
      if (array_.sharding) {
        const std::optional<std::span<const std::byte>> inner = read_inner_stored(worker, unit);
        if (!inner) {
          unit.missing = true;
          return;
        }
        stored = *inner;
      } else {
        auto file = array_.store->open_object(shards_[unit.shard].key, settings_.o_direct);
        if (!file) {
          unit.missing = true;
          return;
        }
        stored = read_stored(worker, *file);
      }
      if (decoder.decode(worker, stored, slot, where(unit))) {
        ++decoded_;
        return;
      }
      const std::span<std::byte> target = decoder.staging(worker, static_cast<std::size_t>(staged_bytes_))
                                              .first(static_cast<std::size_t>(staged_bytes_));
      decode_into(worker, stored, target);
      decoder.place_decoded(worker, target, slot);
    } catch (const EarlierChunkError&) {
      throw;  // names its own chunk
    } catch (const std::bad_alloc&) {
      throw Error(ErrorKind::io, fmt::format("{}: out of memory", where(unit)));
    } catch (const Error& e) {
      throw e.with_context(where(unit));
    }
  }

  // Phase 2: one chunk fetched, decoded (or found) and placed into every region that needs it.
  void produce(unsigned worker, std::size_t u) {
    Unit& unit = units_[u];
    try {
      if (placer_) {
        produce_on_device(worker, unit);
        return;
      }
      DecodedChunkPtr chunk = unit.cached;
      if (chunk) {
        ++hits_;
      } else if (!unit.missing) {
        chunk = array_.sharding ? fetch_inner(worker, unit, nullptr) : fetch_chunk(worker, unit, nullptr);
      }
      if (!chunk) {
        ++missing_;
        for (std::size_t i = unit.first; i < unit.last; ++i)
          fill_box_on_host(metadata_.fill_value.data(), box_for(unit, needs_[i]), destinations_[needs_[i].region]);
        return;
      }
      for (std::size_t i = unit.first; i < unit.last; ++i)
        copy_box_to_host(chunk->data.get(), box_for(unit, needs_[i]), destinations_[needs_[i].region]);
    } catch (const std::bad_alloc&) {
      throw Error(ErrorKind::io, fmt::format("{}: out of memory", where(unit)));
    } catch (const Error& e) {
      throw e.with_context(where(unit));
    }
  }

  // The device cache's entry for (key, inner) when it is current and on the placer's device.
  DecodedChunkPtr find_resident(const std::string& key, std::uint32_t inner, const FileSignature& now) {
    DecodedChunkPtr found = device_cache_->find(key, inner, now);
    return found && found->device == placer_->device() ? found : nullptr;
  }

  // The device path: the part of the chunk the unit's boxes need is staged (read or decoded
  // straight into the staging when nothing is cached on the host), then placed on the device;
  // a chunk in the device cache is placed from there, a missing one filled.
  void produce_on_device(unsigned worker, Unit& unit) {
    std::vector<ManyBox>& boxes = states_[worker].boxes;
    boxes.clear();
    for (std::size_t i = unit.first; i < unit.last; ++i)
      boxes.push_back({box_for(unit, needs_[i]), needs_[i].region});
    const std::span<const ManyBox> all(boxes);
    const ChunkSpan whole{0, staged_bytes_};
    if (unit.resident || unit.decoded_on_device) {
      if (unit.resident) ++hits_;
      const DecodedChunkPtr& chunk = unit.resident ? unit.resident : unit.decoded_on_device;
      for (std::size_t at = 0; at < all.size(); at += kMaxBoxesPerStage)
        placer_->place_resident(chunk, all.subspan(at, std::min(kMaxBoxesPerStage, all.size() - at)));
      return;
    }
    if (boxes.size() > kMaxBoxesPerStage) {
      // Needed by more regions than one stage announces: decoded once on the host, staged per group.
      DecodedChunkPtr chunk = unit.cached;
      if (chunk) ++hits_;
      else if (!unit.missing) chunk = array_.sharding ? fetch_inner(worker, unit, nullptr) : fetch_chunk(worker, unit, nullptr);
      for (std::size_t at = 0; at < all.size(); at += kMaxBoxesPerStage) {
        const auto group = all.subspan(at, std::min(kMaxBoxesPerStage, all.size() - at));
        if (!chunk) {
          placer_->fill(group, metadata_.fill_value);
          continue;
        }
        const ChunkSpan span = chunk_span_of(group, metadata_.dtype.size);
        DeviceFetch fetch(*placer_, span, false, group.size());
        std::memcpy(fetch.take().data(), chunk->data.get() + span.first, static_cast<std::size_t>(span.nbytes));
        fetch.commit(staged_bytes_, group, nullptr);
      }
      if (!chunk) ++missing_;
      return;
    }
    // With the device cache on, whole chunks go up (and into it); else only the part needed.
    const ChunkSpan span = use_device_cache_ ? whole : chunk_span_of(all, metadata_.dtype.size);
    if (!use_device_cache_ && should_pack(all, span)) {
      produce_packed(worker, unit, all);
      return;
    }
    DeviceFetch fetch(*placer_, span, span.first == 0 && span.nbytes == staged_bytes_, boxes.size());
    DecodedChunkPtr chunk = unit.cached;
    if (chunk) {
      ++hits_;
      fetch.signature = shards_[unit.shard].signature;
    } else if (!unit.missing) {
      chunk = array_.sharding ? fetch_inner(worker, unit, &fetch) : fetch_chunk(worker, unit, &fetch);
    }
    if (fetch.resident) {
      placer_->place_resident(fetch.resident, all);
      return;
    }
    if (!fetch.filled && !chunk) {
      ++missing_;
      placer_->fill(all, metadata_.fill_value);
      return;
    }
    if (!fetch.filled)
      std::memcpy(fetch.take().data(), chunk->data.get() + span.first, static_cast<std::size_t>(span.nbytes));
    std::optional<DeviceCacheInsert> insert;
    if (use_device_cache_ && fetch.whole && fetch.signature)
      insert = DeviceCacheInsert{device_cache_, shards_[unit.shard].key, needs_[unit.first].inner, *fetch.signature};
    fetch.commit(staged_bytes_, all, insert ? &*insert : nullptr);
  }

  // True when the span of the chunk the boxes cover (from the first byte one of them reads to the
  // last) is more than twice their own bytes: a patch that takes a quarter of each row of a chunk
  // would send four times its bytes over the bus. Such boxes are packed on the host instead.
  bool should_pack(std::span<const ManyBox> boxes, const ChunkSpan& span) const {
    std::uint64_t bytes = 0;
    for (const ManyBox& many : boxes) bytes += many.box.num_elements() * metadata_.dtype.size;
    return bytes * 2 < span.nbytes;
  }

  // The device path for boxes that cover little of their span: the chunk is read (only its
  // needed span, for an uncompressed one) or decoded (only its needed prefix) on the host, and
  // each box is packed into the staging by itself and placed from there.
  void produce_packed(unsigned worker, Unit& unit, std::span<const ManyBox> boxes) {
    DecodedChunkPtr chunk = unit.cached;
    if (chunk) ++hits_;
    else if (!unit.missing) chunk = array_.sharding ? fetch_inner(worker, unit, nullptr) : fetch_chunk(worker, unit, nullptr);
    if (!chunk) {
      ++missing_;
      placer_->fill(boxes, metadata_.fill_value);
      return;
    }
    const std::size_t element = metadata_.dtype.size;
    for (const ManyBox& many : boxes) {
      const std::uint64_t count = many.box.num_elements();
      if (count == 0) continue;
      ManyBox packed = many;  // the box as a whole "chunk" of its own shape
      packed.box.chunk_shape = many.box.extent;
      packed.box.offset_in_chunk = Extents{};
      const std::uint64_t bytes = count * element;
      DeviceFetch fetch(*placer_, ChunkSpan{0, bytes}, true, 1);
      ChunkBox local = many.box;
      local.offset_in_dest = Extents{};
      copy_box_to_host(chunk->data.get(), local,
                       DestinationLayout::contiguous(fetch.take().data(),
                                                     std::span<const std::uint64_t>(many.box.extent.data(), many.box.rank),
                                                     element));
      fetch.commit(bytes, std::span<const ManyBox>(&packed, 1), nullptr);
    }
  }

  // The whole stored (encoded) chunk `file`, in the worker's buffer: refused when larger than any
  // valid encoding or than the read's memory allows.
  std::span<const std::byte> read_stored(unsigned worker, const StoreObject& file) {
    if (file.size() > array_.chain.max_encoded_size())
      throw Error(ErrorKind::corrupt_data, fmt::format("chunk is {} bytes, more than any valid encoding ({})",
                                                       file.size(), array_.chain.max_encoded_size()));
    check_chunk_memory(file.size());
    auto& encoded = states_[worker].buffers->stored;
    encoded.resize(static_cast<std::size_t>(file.size()));
    file.read_all(encoded);
    bytes_read_ += encoded.size();
    return encoded;
  }

  // A buffer to decode into: a new one when it will be cached, else the worker's own.
  std::shared_ptr<DecodedChunk> decode_target(unsigned worker) {
    const std::size_t bytes = static_cast<std::size_t>(staged_bytes_);
    if (use_cache_) return std::make_shared<DecodedChunk>(bytes);
    auto& reusable = states_[worker].reusable;
    if (!reusable || reusable->size != bytes) reusable = std::make_shared<DecodedChunk>(bytes);
    return reusable;
  }

  // Where the bytes of the unit's chunk that its boxes read end (C order): a chunk decoded for
  // this read alone is decoded up to there. Everything when it will be cached.
  std::uint64_t needed_end(unsigned worker, const Unit& unit, const DeviceFetch* fetch) {
    if (use_cache_) return staged_bytes_;
    const ChunkSpan span = needed_span(worker, unit, fetch);
    return span.first + span.nbytes;
  }

  // The bytes of the unit's chunk its boxes read (the fetch's span on the device path).
  ChunkSpan needed_span(unsigned worker, const Unit& unit, const DeviceFetch* fetch) {
    if (fetch) return fetch->span;
    std::vector<ManyBox>& boxes = states_[worker].span_boxes;
    boxes.clear();
    for (std::size_t i = unit.first; i < unit.last; ++i) boxes.push_back({box_for(unit, needs_[i]), needs_[i].region});
    return chunk_span_of(boxes, metadata_.dtype.size);
  }

  // Decodes `stored` into `target`, only its first `end` bytes where the codecs can stop early
  // (a patch in the first half of a zstd chunk decodes about half of it).
  void decode_needed(unsigned worker, std::span<const std::byte> stored, DecodedChunk& target, std::uint64_t end) {
    if (end < target.size && staged_chain_->decode_prefix(stored, std::span(target.data.get(), target.size),
                                                          static_cast<std::size_t>(end), states_[worker].buffers->codec)) {
      ++decoded_;
      return;
    }
    decode_into(worker, stored, target);
  }

  void decode_into(unsigned worker, std::span<const std::byte> stored, DecodedChunk& target) {
    decode_into(worker, stored, std::span(target.data.get(), target.size));
  }
  void decode_into(unsigned worker, std::span<const std::byte> stored, std::span<std::byte> target) {
    staged_chain_->decode(stored, target, states_[worker].buffers->codec);
    ++decoded_;
  }

  // The chunk of `unit`, decoded on the host (null when it is missing). With `fetch` (the device
  // path), a chunk found in the device cache is left in fetch->resident, and without the host
  // cache the bytes fetch->span names are read (uncompressed) or decoded (whole chunks) straight
  // into its staging (fetch->filled; null returned).
  DecodedChunkPtr fetch_chunk(unsigned worker, Unit& unit, DeviceFetch* fetch) {
    const Shard& shard = shards_[unit.shard];
    auto file = array_.store->open_object(shard.key, settings_.o_direct);
    if (!file) return nullptr;
    std::optional<FileSignature> signature;
    if (use_cache_ || use_device_cache_) {
      signature = signature_of(*file);
      if (fetch) fetch->signature = signature;
      if (use_device_cache_ && fetch) {
        if ((fetch->resident = find_resident(shard.key, 0, *signature))) {
          ++hits_;
          return nullptr;
        }
      }
      if (use_cache_) {
        if (auto found = cache_->find(shard.key, 0, *signature)) {
          ++hits_;
          return found;
        }
      }
    }
    const bool direct = fetch && !use_cache_;
    if (array_.chain.is_identity()) {
      if (file->size() != staged_bytes_)
        throw Error(ErrorKind::corrupt_data,
                    fmt::format("chunk is {} bytes, an uncompressed chunk of shape [{}] holds {}", file->size(),
                                fmt::join(metadata_.chunk_shape, ", "), staged_bytes_));
      if (direct) {
        // Only the part the regions need: read straight into the staging.
        file->read_exact(fetch->span.first, fetch->take());
        bytes_read_ += fetch->span.nbytes;
        ++decoded_;
        fetch->filled = true;
        return nullptr;
      }
    }
    if (!array_.chain.is_identity() && direct && fetch->whole) {
      decode_into(worker, read_stored(worker, *file), fetch->take());
      fetch->filled = true;
      return nullptr;
    }
    auto target = decode_target(worker);
    if (array_.chain.is_identity()) {
      if (file->size() != target->size)
        throw Error(ErrorKind::corrupt_data,
                    fmt::format("chunk is {} bytes, an uncompressed chunk of shape [{}] holds {}", file->size(),
                                fmt::join(metadata_.chunk_shape, ", "), target->size));
      // Only the bytes the regions read, unless the chunk is kept for later reads.
      const ChunkSpan part = use_cache_ ? ChunkSpan{0, target->size} : needed_span(worker, unit, fetch);
      file->read_exact(part.first, std::span(target->data.get() + part.first, static_cast<std::size_t>(part.nbytes)));
      bytes_read_ += part.nbytes;
      ++decoded_;
    } else {
      decode_needed(worker, read_stored(worker, *file), *target, needed_end(worker, unit, fetch));
    }
    if (use_cache_) cache_->insert(shard.key, 0, *signature, target);
    return target;
  }

  // Opens the unit's shard as the worker's file (kept open for the next unit of that shard) and
  // returns its signature; false when the inner chunk is missing from it. A shard replaced since
  // its index was read (a writer renamed a new shard over it) has the inner chunk looked up in
  // its own index, so offsets and bytes match.
  bool open_shard_of(unsigned worker, Unit& unit, FileSignature& signature) {
    const Shard& shard = shards_[unit.shard];
    WorkerState& state = states_[worker];
    if (!state.file || state.file_key != shard.key) {
      state.file.reset();
      state.file = array_.store->open_object(shard.key, settings_.o_direct);
      if (!state.file) throw Error(ErrorKind::io, "shard disappeared while being read");
      state.file_key = shard.key;
    }
    signature = signature_of(*state.file);
    if (signature != *shard.signature) {
      state.file.reset();
      state.file = array_.store->open_object(shard.key, settings_.o_direct);
      if (!state.file) throw Error(ErrorKind::io, "shard disappeared while being read");
      signature = signature_of(*state.file);
      if (signature != *shard.signature) {
        const codec::ShardIndexEntry entry = locate(*state.file, needs_[unit.first].inner);
        if (entry.missing()) return false;
        unit.offset = entry.offset;
        unit.nbytes = entry.nbytes;
      }
    }
    return true;
  }

  // The unit's stored (encoded) inner chunk from the worker's open shard, in the worker's buffer:
  // refused when larger than any valid encoding.
  std::span<const std::byte> read_inner_encoded(unsigned worker, const Unit& unit) {
    if (unit.nbytes > staged_chain_->max_encoded_size())
      throw Error(ErrorKind::corrupt_data, fmt::format("inner chunk is {} bytes, more than any valid encoding ({})",
                                                       unit.nbytes, staged_chain_->max_encoded_size()));
    auto& encoded = states_[worker].buffers->stored;
    encoded.resize(static_cast<std::size_t>(unit.nbytes));
    states_[worker].file->read_exact(unit.offset, encoded);
    return encoded;
  }

  // The unit's stored inner chunk, read whole into the worker's buffer; nullopt when missing.
  std::optional<std::span<const std::byte>> read_inner_stored(unsigned worker, Unit& unit) {
    FileSignature signature;
    if (!open_shard_of(worker, unit, signature)) return std::nullopt;
    check_chunk_memory(unit.nbytes);
    const std::span<const std::byte> encoded = read_inner_encoded(worker, unit);
    bytes_read_ += unit.nbytes;
    return encoded;
  }

  DecodedChunkPtr fetch_inner(unsigned worker, Unit& unit, DeviceFetch* fetch) {
    const Shard& shard = shards_[unit.shard];
    WorkerState& state = states_[worker];
    FileSignature signature;
    if (!open_shard_of(worker, unit, signature)) return nullptr;
    check_chunk_memory(unit.nbytes);
    if (fetch) fetch->signature = signature;
    if (fetch && !use_cache_) {
      if (staged_chain_->is_identity() && unit.nbytes == staged_bytes_) {
        // Only the part the regions need: read straight into the staging.
        state.file->read_exact(unit.offset + fetch->span.first, fetch->take());
        bytes_read_ += fetch->span.nbytes;
        ++decoded_;
        fetch->filled = true;
        return nullptr;
      }
      if (fetch->whole) {
        decode_into(worker, read_inner_encoded(worker, unit), fetch->take());
        bytes_read_ += unit.nbytes;
        fetch->filled = true;
        return nullptr;
      }
    }
    auto target = decode_target(worker);
    if (staged_chain_->is_identity() && unit.nbytes == target->size) {
      state.file->read_exact(unit.offset, std::span(target->data.get(), target->size));
      ++decoded_;
    } else {
      decode_needed(worker, read_inner_encoded(worker, unit), *target, needed_end(worker, unit, fetch));
    }
    bytes_read_ += unit.nbytes;
    if (use_cache_) cache_->insert(shard.key, needs_[unit.first].inner, signature, target);
    return target;
  }

  // The index entry of inner chunk `inner` in the open shard `file`.
  codec::ShardIndexEntry locate(const StoreObject& file, std::uint32_t inner) {
    const auto& sharding = *array_.sharding;
    if (file.size() < sharding.index_nbytes())
      throw Error(ErrorKind::corrupt_data, fmt::format("shard is {} bytes, shorter than its {} byte index", file.size(),
                                                       sharding.index_nbytes()));
    if (sharding.index_entries_addressable()) {
      codec::ByteBuffer stored(16);
      file.read_exact(sharding.index_entry_offset(inner, file.size()), stored);
      return sharding.decode_index_entries(std::move(stored), inner, file.size())[inner];
    }
    if (sharding.index_decode_nbytes() > memory_limit_)
      throw Error(ErrorKind::io, fmt::format("the shard index needs {} bytes of memory, more than the read's limit "
                                             "of {} bytes (Settings::memory_limit_bytes)",
                                             sharding.index_decode_nbytes(), memory_limit_));
    codec::ByteBuffer index_bytes(static_cast<std::size_t>(sharding.index_nbytes()));
    file.read_exact(sharding.index_offset(file.size()), index_bytes);
    return sharding.decode_index(std::move(index_bytes), file.size())[inner];
  }

  const Array::Impl& array_;
  const ArrayMetadata& metadata_;
  const std::vector<Region>& regions_;
  const std::vector<DestinationLayout>& destinations_;
  const Settings& settings_;
  const std::size_t rank_;
  const Extents chunk_shape_;
  const std::uint64_t memory_limit_;
  ChunkCache* cache_;
  bool use_cache_ = false;
  DevicePlacer* placer_ = nullptr;  // set: destinations are in device memory (device_placer.hpp)
  ChunkCache* device_cache_ = nullptr;
  bool use_device_cache_ = false;
  const codec::CodecChain* staged_chain_ = nullptr;
  GpuDecodeRoute route_;  // the GPU decoders' route (codec none: chunks decode on the host)
  const DeviceChunkDecoderFactory make_decoder_;  // make_device_chunk_decoder unless a test's
  std::uint64_t staged_bytes_ = 0;
  std::uint64_t scratch_bytes_ = 0;
  Extents inner_shape_{};
  Extents per_shard_{};
  unsigned workers_ = 1;

  std::vector<std::uint64_t> coords_;
  std::vector<Need> needs_;
  std::vector<Unit> units_;
  std::vector<Shard> shards_;
  std::vector<WorkerState> states_;

  std::atomic<bool> failed_{false};
  std::mutex error_mutex_;
  std::exception_ptr error_;
  std::mutex progress_mutex_;
  std::atomic<std::size_t> done_{0};
  std::size_t total_ = 0;
  std::atomic<std::size_t> missing_{0};
  std::atomic<std::size_t> decoded_{0};
  std::atomic<std::size_t> hits_{0};
  std::atomic<std::size_t> gpu_decoded_{0};
  std::atomic<std::uint64_t> bytes_read_{0};
};

}  // namespace

ReadStats run_read_many(const Array::Impl& array, const std::vector<Region>& regions,
                        const std::vector<DestinationLayout>& destinations, const Settings& settings,
                        DevicePlacer* placer, const DeviceChunkDecoderFactory& make_decoder) {
  return ManyJob(array, regions, destinations, settings, placer, make_decoder).run();
}

GpuDecodeRoute read_many_gpu_route(const Array::Impl& array, const Settings& settings, bool cache_on,
                                   std::uint64_t decoded_bytes) {
  const codec::CodecChain* inner = array.sharding ? &array.sharding->inner_chain() : nullptr;
  const std::uint64_t chunk_bytes = (inner ? *inner : array.chain).decoded_spec().nbytes();
  // GPU decoding feeds neither cache (a chunk decoded there is never on the host, and the device
  // cache keeps chunks of their own allocation); a chunk larger than a whole wave would take GPU
  // memory for one chunk alone.
  if (cache_on || array.metadata.rank() == 0 || settings.decode == DecodeSide::cpu || chunk_bytes > kDeviceDecodeWaveBytes)
    return {};
  GpuDecodeRoute route = gpu_decode_route_of_array(array.metadata.codecs, array.chain, inner);
  if (read_many_decode_side(route, settings.decode, decoded_bytes) == DecodeSide::cpu) route.codec = GpuCodec::none;
  return route;
}

std::uint64_t distinct_chunk_bytes(const Array::Impl& array, const std::vector<Region>& regions) {
  const codec::CodecChain& chain = array.sharding ? array.sharding->inner_chain() : array.chain;
  const Extents cell = to_extents(array.sharding ? array.sharding->inner_chunk_shape() : array.metadata.chunk_shape);
  const std::size_t rank = array.metadata.rank();
  std::vector<Extents> cells;
  for (const Region& region : regions) {
    const GridWindow window = window_over(region, Extents{}, cell, rank);
    for (std::uint64_t i = 0, count = window.size(); i < count; ++i) cells.push_back(window.cell(i));
  }
  std::sort(cells.begin(), cells.end());
  const auto distinct = static_cast<std::uint64_t>(std::unique(cells.begin(), cells.end()) - cells.begin());
  return checked_mul(distinct, chain.decoded_spec().nbytes()).value_or(~std::uint64_t{0});
}

DecodeSide read_many_decode_side(const GpuDecodeRoute& route, DecodeSide side, std::uint64_t decodable_bytes) {
  if (route.codec == GpuCodec::none) return DecodeSide::cpu;
  return gpu_decode_side(side, route.codec, true, decodable_bytes);
}

std::size_t wave_slots(std::uint64_t chunk_bytes, const Settings& settings) {
  const std::uint64_t budget =
      std::min(kDeviceDecodeWaveBytes, checked_mul(settings.staging_bytes, 4).value_or(~std::uint64_t{0}));
  return static_cast<std::size_t>(std::max<std::uint64_t>(1, budget / std::max<std::uint64_t>(chunk_bytes, 1)));
}

}  // namespace zarrdirect

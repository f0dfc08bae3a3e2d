// Opening a Zarr array and reading it, whole or a region, into host or CUDA device memory.
//
//   auto array = zarrdirect::Array::open("/data/volume.zarr");
//   auto block = array.read(zarrdirect::parse_region("0:64,:,:", array.metadata().shape));
//   const auto* voxels = static_cast<const std::uint16_t*>(block.data());   // C order, native
//
//   auto on_gpu = array.read({}, zarrdirect::Device::cuda);                  // device memory
//   auto on_gpu1 = array.read({}, zarrdirect::DeviceSpec::cuda(1));          // GPU 1's memory
//
// Which GPU (device.hpp): Device::cuda alone means the calling thread's current device; a
// DeviceSpec, or the device_ordinal of Destination and Source, names one. Reads and writes run
// their CUDA work on that device (worker threads switch to it; the caller's current device is
// left as it was) with that device's own pinned staging and streams, and a result remembers its
// device (NDArray::device_ordinal). A device that does not exist is Error(invalid_argument)
// before anything is read or written (check_device).
//
// Reads run on a pool of threads; missing chunks read as the fill value. An Array is cheap to
// copy and safe to read from several threads at once.
//
// Thread safety: every const member (read, read_into, read_many*, read_async, write,
// storage_summary, set_cache_bytes, cache_stats) may be called from any number of threads at
// once on one Array or its copies (copies share one handle: the same decoded-chunk cache).
// Reads of a region that another thread writes at the same time see each chunk old or new, never
// a torn chunk. update_attributes / set_attributes are the exception (see there).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "zarrdirect/device.hpp"
#include "zarrdirect/dtype.hpp"
#include "zarrdirect/error.hpp"
#include "zarrdirect/metadata.hpp"
#include "zarrdirect/region.hpp"
#include "zarrdirect/selection.hpp"
#include "zarrdirect/settings.hpp"
#include "zarrdirect/store_options.hpp"

namespace zarrdirect {

// Memory owned by a read result: host memory (page-aligned) or device memory (cudaMalloc).
class Buffer {
 public:
  Buffer() = default;
  // On a CUDA device: the one named, or the calling thread's current one (recorded as such).
  // Errors as check_device(), then as the allocation.
  static Buffer allocate(const DeviceSpec& device, std::size_t nbytes);
  // `nbytes` of `whole` from `offset`, sharing its ownership (the memory lives while any part of
  // it does): read_many hands out one allocation as one result per region. Error(invalid_argument)
  // when the part is not inside `whole`.
  static Buffer part(const Buffer& whole, std::size_t offset, std::size_t nbytes);
  void* data() const { return data_.get(); }
  std::size_t size() const { return size_; }
  Device device() const { return device_; }
  // The CUDA device holding the memory (0, 1, ...); DeviceSpec::kCurrent for host memory.
  int device_ordinal() const { return ordinal_; }

 private:
  std::shared_ptr<void> data_;
  std::size_t size_ = 0;
  Device device_ = Device::cpu;
  int ordinal_ = DeviceSpec::kCurrent;
};

// Where a read puts its elements. Strides are in bytes, one per dimension of the region read;
// empty strides mean C-contiguous. The stream is a cudaStream_t: null means the library's own
// streams, and the read returns only once the data is in place; a caller's stream gets the read's
// copies and kernels ordered before anything the caller queues on it afterwards.
// On Device::cuda the read runs on the device that holds `data`; `device_ordinal`, when set,
// must be that device (else Error(invalid_argument)), or names the device to work on for
// managed or pinned host memory, which no one device holds.
struct Destination {
  void* data = nullptr;
  std::vector<std::int64_t> byte_strides;
  Device device = Device::cpu;
  void* cuda_stream = nullptr;
  int device_ordinal = DeviceSpec::kCurrent;
};

// What a read did, for the CLI, benchmarks and tests.
// CUDA runtime calls a device read made, by kind: the calls that queue work on a stream or wait
// for it (placing chunks into device memory through the staged or GDS path). All zero for host
// reads. Batched placement (Settings::device_batch) makes a few calls per batch of many small
// chunks; placing chunk by chunk makes about three per chunk (copy, launch or not, event).
struct CudaCallStats {
  std::uint64_t copies = 0;            // cudaMemcpyAsync
  std::uint64_t memsets = 0;           // cudaMemsetAsync (fills)
  std::uint64_t kernel_launches = 0;   // scatter, fill, batch and selection kernels
  std::uint64_t event_records = 0;     // cudaEventRecord
  std::uint64_t stream_waits = 0;      // cudaStreamWaitEvent
  std::uint64_t synchronizations = 0;  // cudaStreamSynchronize and cudaEventSynchronize
  std::uint64_t total() const {
    return copies + memsets + kernel_launches + event_records + stream_waits + synchronizations;
  }
};

struct ReadStats {
  std::size_t chunks_total = 0;     // chunk (or inner chunk) positions the region touches
  std::size_t chunks_missing = 0;   // of those, absent from the store: filled
  std::uint64_t bytes_read = 0;     // bytes fetched from storage
  std::uint64_t bytes_out = 0;      // bytes placed in the destination
  std::string io_path;              // "host", "staged", "gds"
  // How chunk files were fetched (Settings::io_engine): "threads" (a read per chunk on the
  // reader's threads) or "io_uring" (batches of files per submission); "threads (io_uring
  // unavailable: why)" when io_uring was asked for and the build or the kernel refused it.
  std::string io_engine = {};
  unsigned threads = 0;
  std::size_t chunks_decoded = 0;   // chunks (or inner chunks) decoded (read_many and cached reads)
  std::size_t cache_hits = 0;       // chunks taken decoded from the handle's cache
  CudaCallStats cuda_calls = {};    // device reads: the CUDA calls made (see CudaCallStats)
  // Device reads: pinned staging buffers this read had to allocate (cudaHostAlloc, milliseconds
  // per MiB) because the process's pool had none idle to lend (Settings::pinned_pool_bytes).
  // 0 once the pool is warm; reads that keep allocating mean the pool is too small for them.
  std::size_t pinned_allocations = 0;
  // Compressed chunks (or inner chunks) of this read decoded on the GPU and on the CPU, and their
  // decoded bytes (Settings::decode picks the side for device reads; host reads decode on the CPU).
  std::size_t chunks_decoded_gpu = 0;
  std::size_t chunks_decoded_cpu = 0;
  std::uint64_t bytes_decoded_gpu = 0;
  std::uint64_t bytes_decoded_cpu = 0;
};

// The decoded-chunk cache of one array handle (Array::set_cache_bytes), counted since it was
// enabled.
struct CacheStats {
  std::size_t capacity_bytes = 0;
  std::size_t bytes = 0;           // decoded bytes held
  std::size_t entries = 0;
  std::uint64_t hits = 0;
  std::uint64_t misses = 0;
  std::uint64_t evictions = 0;     // entries dropped to stay within the capacity
  std::uint64_t invalidations = 0; // entries dropped because the stored chunk changed
};


// An n-d result: C-contiguous elements in native byte order.
class NDArray {
 public:
  NDArray() = default;
  NDArray(Buffer buffer, std::vector<std::uint64_t> shape, DataType dtype, ReadStats stats)
      : buffer_(std::move(buffer)), shape_(std::move(shape)), dtype_(dtype), stats_(std::move(stats)) {}
  void* data() const { return buffer_.data(); }
  std::size_t nbytes() const { return buffer_.size(); }
  Device device() const { return buffer_.device(); }
  int device_ordinal() const { return buffer_.device_ordinal(); }  // see Buffer
  const std::vector<std::uint64_t>& shape() const { return shape_; }
  const DataType& dtype() const { return dtype_; }
  const ReadStats& stats() const { return stats_; }
  const Buffer& buffer() const { return buffer_; }

 private:
  Buffer buffer_;
  std::vector<std::uint64_t> shape_;
  DataType dtype_;
  ReadStats stats_;
};

// Where a write takes its elements from: the region's shape, in the array's dtype, native byte
// order. Strides are in bytes, one per dimension of the region; empty means C-contiguous. On
// Device::cuda, `data` is device memory and `cuda_stream` (a cudaStream_t, null for the default)
// orders the copies after the caller's work on it. `shape` and `dtype`, when given, are checked
// against the region and the array (a mismatch is Error(invalid_argument), nothing written).
struct Source {
  const void* data = nullptr;
  std::vector<std::int64_t> byte_strides;
  Device device = Device::cpu;
  void* cuda_stream = nullptr;
  std::vector<std::uint64_t> shape;  // optional
  std::optional<DataType> dtype;     // optional
  int device_ordinal = DeviceSpec::kCurrent;  // optional: as Destination::device_ordinal
};

// How a write treats storage.
struct WriteSettings {
  // fsync every file written and its folder before the write returns.
  bool durable = false;
  // Store chunks (and inner chunks of shards) that hold only the fill value; by default they are
  // left out, and removed when they existed (zarr-python's write_empty_chunks=False).
  bool write_empty_chunks = false;
};

// What a write did.
struct WriteStats {
  std::size_t chunks_total = 0;    // chunks (or inner chunks of shards) the region touches
  std::size_t chunks_merged = 0;   // of those, partly covered: read, merged, rewritten
  std::size_t chunks_empty = 0;    // of those, all fill value: not stored (or removed)
  std::size_t files_written = 0;   // chunk or shard files replaced
  std::size_t files_erased = 0;    // chunk or shard files removed (all fill value)
  std::uint64_t bytes_written = 0; // encoded bytes stored
  unsigned threads = 0;
};

// What of an array's chunk grid is stored, counted as a read would find it: only keys of the
// chunk grid (shards, for a sharded array), each opened through the store's checked path, so a
// link out of the folder or a stray file is not counted as data.
struct StorageSummary {
  std::uint64_t chunks_total = 0;    // positions in the chunk grid
  std::uint64_t chunks_stored = 0;   // of those, with a regular file beneath the array folder
  std::uint64_t bytes_stored = 0;    // the sizes of those files together
  std::uint64_t chunks_refused = 0;  // keys present that a read refuses (a link out, not a file)
};

// A read running in the background (Array::read_async, read_many_async). Cheap to copy; copies
// share the read. Safe to use from several threads.
class ReadHandle {
 public:
  ReadHandle() = default;
  // True once the read has finished (successfully, failed or cancelled).
  bool done() const;
  // Waits up to `timeout` for the read; true when it has finished.
  bool wait_for(std::chrono::nanoseconds timeout) const;
  // Waits for the read and returns its arrays (one per region, or one stacked batch); rethrows
  // its Error (ErrorKind::cancelled after cancel()). May be called more than once.
  std::vector<NDArray> get() const;
  // Waits for the read and returns what it did (chunks, bytes, paths); rethrows as get() does.
  // The one way to see the statistics of read_many_into_async, whose get() has no arrays.
  ReadStats stats() const;
  // Asks the read to stop: a queued read never starts, a running one stops between chunks.
  // A read that had already finished keeps its result. Returns false when it had.
  bool cancel() const;

  struct State;
  explicit ReadHandle(std::shared_ptr<State> state) : state_(std::move(state)) {}

 private:
  std::shared_ptr<State> state_;
};

class Array {
 public:
  // Opens the array in folder `path` (v2 or v3, detected from its metadata file), or at an
  // http(s) URL reached with `options` (headers, token: see StoreOptions).
  static Array open(const std::filesystem::path& path, const StoreOptions& options = {});
  // Opens the array at `path` with metadata already parsed (from a group's consolidated
  // metadata, say): no metadata file is read.
  static Array open(const std::filesystem::path& path, ArrayMetadata metadata, const StoreOptions& options = {});

  // Creates an array in folder `path` (made if missing) from a metadata document: a v3 zarr.json
  // ("zarr_format": 3, "node_type": "array") or a v2 .zarray ("zarr_format": 2; an "attributes"
  // member, if any, goes to .zattrs instead). The document is parsed and its codec chain built by
  // the same code as open() before anything is written, so whatever open() accepts can be
  // created. Metadata files are written atomically (temporary file + rename). A folder already
  // holding an array or group is Error(invalid_argument) and left untouched unless `overwrite`,
  // which first removes the old node, its metadata and every chunk (beneath `path` only).
  // Errors: invalid_metadata / unsupported for a bad document, io when writing fails.
  static Array create(const std::filesystem::path& path, const nlohmann::json& metadata, bool overwrite = false,
                      bool durable = false);

  const ArrayMetadata& metadata() const;
  const std::filesystem::path& path() const;

  // Reads `region` (empty: the whole array) into a new buffer on `device`.
  NDArray read(const Region& region = {}, Device device = Device::cpu,
               const Settings& settings = Settings::from_environment()) const;
  // The same on a chosen device (DeviceSpec::cuda(1)); the device is checked (check_device)
  // before anything is read.
  NDArray read(const Region& region, const DeviceSpec& device,
               const Settings& settings = Settings::from_environment()) const;

  // Reads `region` into memory the caller owns.
  ReadStats read_into(const Region& region, const Destination& destination,
                      const Settings& settings = Settings::from_environment()) const;

  // Reads an orthogonal selection (selection.hpp: steps, index lists, masks, indices) into a new
  // buffer of shape selection_shape(); an index drops its axis. Only the chunks (inner chunks)
  // holding a selected element are read; a plain box takes read()'s path. Errors: as read(), and
  // Error(invalid_argument) for an index out of bounds or a mask of the wrong length.
  NDArray read_selection(const Selection& selection, const DeviceSpec& device = Device::cpu,
                         const Settings& settings = Settings::from_environment()) const;
  // The same into memory the caller owns; byte_strides (if any) are per axis of the result.
  ReadStats read_selection_into(const Selection& selection, const Destination& destination,
                                const Settings& settings = Settings::from_environment()) const;

  // Reads single elements, a coordinate selection (Python's arr.vindex): coordinates[axis][i]
  // is point i's index on `axis` (negative counts from the end), one list per axis, all of one
  // length. The elements land one after another in the destination (contiguous: byte_strides
  // empty or the element size), in the points' order; repeats and any order are allowed. Only the
  // chunks (inner chunks) holding a point are read, each once (engine/point_read.hpp). A device
  // destination gets the gathered elements in one copy. Errors: as read(), and
  // Error(invalid_argument) naming the point and axis for an index out of bounds, or for lists
  // of different lengths or a count of lists other than the rank; Error(io) when grouping the
  // points by chunk (about 64 bytes a point in 2-d) would pass Settings' memory limit.
  ReadStats read_points_into(const std::vector<std::vector<std::int64_t>>& coordinates, const Destination& destination,
                             const Settings& settings = Settings::from_environment()) const;

  // --- Many regions at once (read_many.cpp, array_many.cpp). The batch is planned as one:
  // every chunk (or inner chunk of a shard) that any region needs is fetched and decoded once,
  // then placed into each region that needs it, on the shared worker pool. Device destinations
  // are gathered in pinned host memory and copied to the device once per region (adjacent
  // C-contiguous destinations, as a stacked batch has, in one copy). Regions may overlap and
  // repeat. Errors as for read(), naming the chunk; a region out of bounds is
  // Error(invalid_argument) naming its index, before anything is read. ReadStats are the batch's.
  // Into device memory, chunks a GPU decoder takes go up compressed and are decoded there, a wave
  // of up to 1 GiB at a time, then placed into every region from device memory
  // (docs/TRAINING.md): under Settings::decode gpu or share, and under auto where the codec's
  // row says so (zstd shared with the CPU for batches of at least 128 MiB of distinct chunks, on
  // the GPU alone from 32 MiB; blosc-lz4 on the GPU); never with a cache on.

  // One new array per region, on `device`.
  std::vector<NDArray> read_many(const std::vector<Region>& regions, Device device = Device::cpu,
                                 const Settings& settings = Settings::from_environment()) const;
  // One new array of shape [regions.size(), *shape] holding the regions in order; all regions
  // must have the same shape (Error(invalid_argument) otherwise).
  NDArray read_batch(const std::vector<Region>& regions, Device device = Device::cpu,
                     const Settings& settings = Settings::from_environment()) const;
  // Into memory the caller owns, one destination per region (all on one device kind, one stream).
  ReadStats read_many_into(const std::vector<Region>& regions, const std::vector<Destination>& destinations,
                           const Settings& settings = Settings::from_environment()) const;

  // --- Reads in the background (read_async.cpp), on a few library threads that drive the worker
  // pool; a loader prepares the next batch while the caller works on this one. The Array's
  // handle is kept alive by the read. A CUDA read allocates on the device current on the calling
  // thread when the call is made.
  ReadHandle read_async(const Region& region, Device device = Device::cpu,
                        const Settings& settings = Settings::from_environment()) const;
  // read_many (stack false) or read_batch (stack true) in the background.
  ReadHandle read_many_async(std::vector<Region> regions, Device device = Device::cpu, bool stack = false,
                             const Settings& settings = Settings::from_environment()) const;
  // read_many_into in the background, into memory the caller owns: the destinations must stay
  // valid until the handle is done (after get() or stats() returns, or wait_for() says so; a
  // cancelled read is done only once it has stopped). get() returns no arrays. A caller who
  // allocates its batches itself (a framework's caching allocator) avoids a device allocation
  // and free per batch; cudaFree waits for the whole device. Regions are checked at once, as
  // read_many_async's are; the destinations when the read runs.
  ReadHandle read_many_into_async(std::vector<Region> regions, std::vector<Destination> destinations,
                                  const Settings& settings = Settings::from_environment()) const;

  // --- The decoded-chunk cache (chunk_cache.cpp) of this handle, shared by its copies and by
  // every read through it (read, read_into, read_many*, async). Bounded by bytes, least recently
  // used first out; host memory. An entry is used only while its file's size, modification time
  // (ns) and inode are what they were when it was decoded (checked with fstat at every use),
  // and writes through this handle drop the chunks they touch. 0 turns it off and frees it.
  // Also enabled by Settings::cache_bytes / ZARRDIRECT_CACHE_MB. Safe from any thread.
  void set_cache_bytes(std::size_t bytes) const;
  CacheStats cache_stats() const;

  // --- The device cache of this handle: decoded chunks kept in GPU memory (the device of the read
  // that decoded them) for reads into CUDA memory, so that a region of cached chunks is gathered
  // device to device with no host round trip. The same policy as the host cache (bounded by
  // bytes, least recently used out, fstat-checked at every use, dropped by writes through the
  // handle). Works beside the host cache or alone: a chunk missing from both is read, decoded on
  // the host and uploaded once. Entries of another device are misses. 0 turns it off and frees
  // the GPU memory. Also Settings::device_cache_bytes / ZARRDIRECT_DEVICE_CACHE_MB. Safe from any
  // thread.
  void set_device_cache_bytes(std::size_t bytes) const;
  CacheStats device_cache_stats() const;

  // Writes `source` (the shape of `region`; empty region: the whole array) into the array.
  // Chunks the region covers are encoded and replaced; chunks (or shards) it covers in part are
  // read, merged and rewritten under a lock on their key, so threads and processes writing
  // regions that share a chunk or shard lose nothing. Every file is replaced atomically: each
  // chunk is old or new, never partial. A failure is Error naming the region and the chunk that
  // did not land (chunks done before it keep their new value). A region out of bounds or a
  // source that does not match is Error(invalid_argument) before anything is written.
  // Safe to call from several threads at once; runs on the shared worker pool.
  WriteStats write(const Region& region, const Source& source, const WriteSettings& options = {},
                   const Settings& settings = Settings::from_environment()) const;

  // Changes the shape (as many dimensions as before), as zarr-python's resize, in place:
  // chunks (or shards) wholly outside the new shape are erased, and every element the new shape
  // adds reads as the fill value (zarr-python would show what edge chunks held past the old
  // shape; here those parts are rewritten with the fill value: when shrinking, before the shape
  // changes; when growing, after). The metadata file is rewritten under its lock with only
  // "shape" changed. This object then describes the new shape; other Array objects of the folder
  // keep the old one. Errors: invalid_argument naming the array for another number of
  // dimensions; invalid_metadata when the new shape is refused as metadata (too many elements);
  // unsupported for an array read over HTTP; io when a file cannot be written (the steps done
  // keep their effect: a chunk is old or new, never torn). Not to be called while the array is
  // being written elsewhere; consolidated metadata (.zmetadata) is not updated.
  void resize(const std::vector<std::uint64_t>& shape, const WriteSettings& options = {},
              const Settings& settings = Settings::from_environment());

  // Lists the array folder (never reading outside it) and opens each chunk key found to take
  // its size; keys are taken from the listing, so a sparse grid of billions costs what is
  // stored. Error(io) when the folder cannot be opened. Safe from any thread.
  StorageSummary storage_summary() const;

  // Changes the user attributes and saves them at once (atomically: temporary file + rename):
  // sets each member of `set` (a JSON object), then removes each key in `remove` (a key that is
  // not there is no error: the attribute is gone either way). The change is
  // made, under a lock on the metadata file, to the attributes stored at the time (not to this
  // object's copy), so processes editing different keys lose nothing. v3 rewrites zarr.json
  // whole, every other member kept as stored; v2 rewrites .zattrs. Returns the attributes saved,
  // which metadata().attributes then holds (other Array objects of the same folder keep theirs).
  // Errors: invalid_argument when `set` is not an object, invalid_metadata naming the file when
  // the stored one is not valid, io when it is missing or writing fails (the file is unchanged).
  // Not to be called while the same Array object is used on another thread; consolidated metadata (.zmetadata) is not updated.
  nlohmann::json update_attributes(const nlohmann::json& set, const std::vector<std::string>& remove = {},
                                   bool durable = false);
  // Replaces all user attributes with `attributes` (a JSON object), saved as update_attributes.
  void set_attributes(const nlohmann::json& attributes, bool durable = false);

  struct Impl;

 private:
  explicit Array(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
  nlohmann::json replace_attributes(const std::function<void(nlohmann::json&)>& edit, bool durable);
  std::shared_ptr<const Impl> impl_;
};

// True when a CUDA device is present and usable from this process.
bool cuda_available();

// The elements of a read result in host memory (C order, native byte order): a copy of host
// results, a device-to-host copy of device results. Errors: ErrorKind::cuda naming the failed
// call; unsupported for a device result in a build without CUDA. Safe from any thread.
std::vector<std::byte> copy_to_host(const NDArray& array);

}  // namespace zarrdirect

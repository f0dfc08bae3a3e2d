// Tunables of the read engine, in one place.
//
// Defaults come from measurements on the GPU machine (docs/BENCHMARKS.md); every field can be
// overridden from the environment (ZARRDIRECT_THREADS, ZARRDIRECT_STAGING_MB,
// ZARRDIRECT_SLOTS_PER_THREAD, ZARRDIRECT_O_DIRECT, ZARRDIRECT_IO_PATH,
// ZARRDIRECT_MEMORY_LIMIT_MB, ZARRDIRECT_CACHE_MB, ZARRDIRECT_DEVICE_CACHE_MB,
// ZARRDIRECT_DEVICE_BATCH, ZARRDIRECT_IO, ZARRDIRECT_DECODE, ZARRDIRECT_PINNED_POOL_MB), the CLI
// and the APIs.
//
// Pinned memory of device reads and writes. Each read stages chunks in pinned host buffers, at
// most `staging_bytes` of them. The buffers come from one pool for the whole process, which keeps
// them between reads (cudaHostAlloc costs milliseconds per MiB) and bounds what it holds, in use
// by reads and idle together, by `pinned_pool_bytes`. Reads running at once (Dask's threads)
// share that: while others hold buffers, a read takes at most half of what they leave, at least
// one buffer per reader thread where one fits, and stages the rest in ordinary memory (slower
// copies) rather than wait. src/cuda/pinned_policy.hpp has the rules. A buffer that needed device
// scratch of its size (chunks placed by a kernel) keeps it while idle, so the pool can hold as
// much GPU memory as pinned memory; zarrdirect::trim_pinned_pool() frees both.
//
// Memory of a read. Besides the result, a read holds per thread one decoded chunk, its stored
// bytes and the codec chain's scratch, plus (sharded arrays) each shard's index and a bounded
// plan of the inner chunks to fetch. `memory_limit_bytes` caps the sum of the per-thread parts:
// the reader runs fewer threads when chunks are large, and a chunk (or a checksummed shard
// index) that alone needs more than the limit is Error(io) naming its key, before anything of
// that size is allocated. An allocation that fails anyway is the same Error, never
// std::bad_alloc. A shard index without a checksum is read entry by entry, so its size does not
// count.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

namespace zarrdirect {

// How chunk bytes reach device memory.
enum class IoPath {
  automatic,  // cuFile when GDS runs natively and the chunks are uncompressed, else staged
  gds,        // cuFile always (fails if cuFile cannot be loaded or opened)
  staged,     // pread into pinned staging buffers, then copy to the device
};
std::string_view to_string(IoPath path);
IoPath parse_io_path(std::string_view text);

// How a read fetches the files of uncompressed chunks from a local folder into host memory.
enum class IoEngine {
  automatic,  // threads (io_uring measured no faster on warm page cache: docs/BENCHMARKS.md)
  uring,      // io_uring: each worker opens, reads and closes a batch of chunk files with two
              // submissions; threads where the build lacks liburing or the kernel refuses it
  threads,    // a pread per chunk on the reader's threads
};
std::string_view to_string(IoEngine engine);
IoEngine parse_io_engine(std::string_view text);

// Where device reads decode compressed chunks (host reads always decode on the CPU).
enum class DecodeSide {
  automatic,  // per codec, from one table (engine/gpu_decode_route.cpp): gpu, share or cpu, as measured fastest
  gpu,        // every chunk the GPU decoders take (blosc with lz4 blocks, numcodecs lz4, zstd); the others on the CPU
  cpu,        // every chunk on the CPU, then uploaded decoded
  share,      // both at once: the GPU takes a chunk when one of its batches has room now, and the reader's
              // threads decode the others on the CPU instead of waiting for it (a GPU decoder slower
              // than the cores still adds its rate to theirs)
};
std::string_view to_string(DecodeSide side);
// "auto", "gpu", "cpu" or "share"; anything else is Error(invalid_argument) naming the text.
DecodeSide parse_decode_side(std::string_view text);

// Called from one thread at a time with the chunks done so far and the total; returning false
// cancels the read (it then fails with ErrorKind::cancelled).
using ProgressCallback = std::function<bool(std::size_t done, std::size_t total)>;

// The most reader threads a read runs; larger requests (Settings::threads, WorkerPool::run) are
// clamped to it. Reads wait on storage, so more threads than this only add memory and contention.
inline constexpr unsigned kMaxReaderThreads = 256;

struct Settings {
  unsigned threads = 0;                      // reader threads; 0: one per core, at least 4
  std::size_t memory_limit_bytes = 0;        // working memory of a read (see above); 0: half of RAM
  // Pinned staging for device reads, all threads. A read that decodes on the GPU also fills a
  // ring of 4 batches of compressed chunks, each up to this many bytes (at most 256 MiB, and at
  // most the read's decoded bytes): the zstd decoder's latency per batch is hidden only by
  // batches that large (docs/BENCHMARKS.md, session 19).
  std::size_t staging_bytes = 256u << 20;
  // Pinned bytes the process's staging pool holds at most, in use and idle, all reads together
  // (see above; the value of the read that acquires or returns buffers applies); 0: 4 GiB, at
  // most an eighth of physical memory, at least 256 MiB.
  std::size_t pinned_pool_bytes = 0;
  unsigned slots_per_thread = 2;             // staging buffers each thread cycles through
  // Device reads of small chunks (a quarter of a batch buffer or less): many chunks per upload
  // and one kernel launch per batch; false places each chunk with its own copy and launch.
  bool device_batch = true;
  bool o_direct = false;                     // bypass the page cache for chunk files
  IoPath io_path = IoPath::automatic;
  IoEngine io_engine = IoEngine::automatic;  // ZARRDIRECT_IO=auto|uring|threads
  DecodeSide decode = DecodeSide::automatic;  // device reads: where compressed chunks are decoded
  ProgressCallback progress;                 // optional
  // Decoded-chunk cache of the array handle a read runs on (Array::set_cache_bytes): a read
  // with a non-zero value enables the handle's cache, growing it to at least this many bytes.
  // 0 (the default) leaves the handle's cache as it is (off unless set there).
  std::size_t cache_bytes = 0;
  // Decoded-chunk cache in GPU memory of the same handle (Array::set_device_cache_bytes), used by
  // reads into CUDA memory: a non-zero value enables it, growing it to at least this many bytes.
  // 0 (the default) leaves it as it is. Also ZARRDIRECT_DEVICE_CACHE_MB.
  std::size_t device_cache_bytes = 0;

  // The defaults with ZARRDIRECT_* environment variables applied.
  static Settings from_environment();
  // `threads` with 0 replaced by the count this machine gets, at most kMaxReaderThreads.
  unsigned effective_threads() const;
  // `memory_limit_bytes` with 0 replaced by half of physical memory (at least 256 MiB).
  std::size_t effective_memory_limit() const;
  // `pinned_pool_bytes` with 0 replaced by default_pinned_pool_bytes(physical memory).
  std::size_t effective_pinned_pool() const;
  // The default pinned pool for a machine with `physical_bytes` of memory: 4 GiB (16 reads of
  // the default staging at once), at most an eighth of it, at least 256 MiB.
  static std::size_t default_pinned_pool_bytes(std::size_t physical_bytes);
};

}  // namespace zarrdirect

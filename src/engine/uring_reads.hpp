// When the reader fetches chunk files with io_uring (store/uring_file_reads.hpp) instead of a
// pread per chunk on its threads, and how many files one task takes.
//
// io_uring serves uncompressed chunks of a local folder going to host memory (the sink places
// from any memory), without O_DIRECT: their size is known before reading, so a batch needs no
// per-file sizing. Everything else keeps the thread pool. Settings::io_engine picks: threads
// always; uring where it applies and the kernel allows it; auto as measured (see settings.hpp).
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "store/uring_file_reads.hpp"
#include "zarrdirect/settings.hpp"

namespace zarrdirect {

// Whether IoEngine::automatic takes io_uring where it applies (bench/uring_bench.sh measured it).
inline constexpr bool kAutoUsesUring = false;
// Files one io_uring task takes at most, and their bytes at most: a batch read into a buffer of
// 4 MiB left the cache before it was placed (slower than threads by 22% here, 12% at 512 KiB).
inline constexpr std::uint64_t kUringMaxFiles = 64;
inline constexpr std::uint64_t kUringTaskBytes = std::uint64_t{512} << 10;

struct UringPlan {
  std::uint64_t files_per_task = 0;  // 0: a pread per chunk on the thread pool
  std::string engine;                // ReadStats::io_engine
};

// What the read of `chunks` files of `chunk_bytes` each does. `applies`: local folder, raw
// chunks, a host sink, no O_DIRECT. `worker_share`: one worker's part of the memory limit.
UringPlan plan_uring_reads(IoEngine engine, bool applies, std::uint64_t chunk_bytes, std::uint64_t chunks,
                           unsigned workers, std::uint64_t worker_share);

// For describe_system (`info --system`): "io_uring" (usable, or why not) and "io_engine" (what
// reads of small uncompressed chunk files use by default).
void describe_io_engine(nlohmann::json& doc);

// The calling thread's ring for batches of at least `files` files (kept for its next read); null
// when io_uring cannot be set up.
UringFileReader* thread_uring_reader(unsigned files);

}  // namespace zarrdirect

#include "engine/uring_reads.hpp"

#include <algorithm>
#include <memory>

#include <fmt/format.h>

namespace zarrdirect {

UringPlan plan_uring_reads(IoEngine engine, bool applies, std::uint64_t chunk_bytes, std::uint64_t chunks,
                           unsigned workers, std::uint64_t worker_share) {
  const bool wanted = engine == IoEngine::uring || (engine == IoEngine::automatic && kAutoUsesUring);
  if (!wanted || !applies || chunk_bytes == 0) return {0, "threads"};
  const UringSupport& support = uring_support();
  if (!support.usable) {
    // Silent for auto; a forced choice says why it did not happen.
    if (engine == IoEngine::automatic) return {0, "threads"};
    return {0, fmt::format("threads (io_uring unavailable: {})", support.reason)};
  }
  std::uint64_t most = std::min(kUringMaxFiles, std::max<std::uint64_t>(kUringTaskBytes / chunk_bytes, 1));
  most = std::min(most, std::max<std::uint64_t>(worker_share / chunk_bytes, 1));
  // Four tasks per worker at least, so that a worker finishing early finds more to take.
  const std::uint64_t files = std::clamp<std::uint64_t>(chunks / (std::max(workers, 1u) * std::uint64_t{4}), 1, most);
  return {files, "io_uring"};
}

void describe_io_engine(nlohmann::json& doc) {
  const UringSupport& support = uring_support();
  doc["io_uring"] = support.usable ? std::string("usable") : "unusable: " + support.reason;
  const bool uring = kAutoUsesUring && support.usable;
  doc["io_engine"] = uring ? "io_uring for small uncompressed chunk files (ZARRDIRECT_IO=threads: a pread per chunk)"
                           : std::string("threads: a pread per chunk") +
                                 (support.usable ? " (ZARRDIRECT_IO=uring: batches with io_uring)" : "");
}

UringFileReader* thread_uring_reader(unsigned files) {
  thread_local std::unique_ptr<UringFileReader> reader;
  if (!reader || reader->max_files() < files)
    reader = UringFileReader::create(std::max<unsigned>(files, static_cast<unsigned>(kUringMaxFiles)));
  return reader.get();
}

}  // namespace zarrdirect

// What this process can do with GPUs and codecs: `zarrdirect info --system`, the Python module's
// describe_system(), and anyone deciding where to read to.
//
//   auto doc = zarrdirect::describe_system();
//   if (doc["cuda_devices"].get<int>() > 0) ...;
//   zarrdirect::print_system(doc);   // the same, as aligned text on stdout
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace zarrdirect {

// A JSON description: {"cuda_built": bool, "cuda_devices": n, "device": name, "cufile": {...},
// "io_path": "host" | "staged" | "gds", "io_path_reason": "..."}. Never throws for a missing GPU
// or driver (that is what it reports); safe from any thread. cuFile's driver is opened only where
// nvidia-fs is loaded.
nlohmann::json describe_system();

// Prints describe_system()'s document as text on stdout, one field a line.
void print_system(const nlohmann::json& doc);

// The process's pool of pinned staging buffers, which device reads and writes share
// (Settings::pinned_pool_bytes): what it holds now and what it has allocated and freed so far.
// All zero in a build without CUDA. For tuning and benchmarks: reads that run at once should
// stop allocating once the pool is warm. Safe from any thread.
struct PinnedPoolStats {
  std::size_t budget_bytes = 0;   // the budget the last read ran under (0 before the first)
  std::size_t in_use_bytes = 0;   // lent to reads running now
  std::size_t idle_bytes = 0;     // kept for the next reads
  std::uint64_t allocations = 0;  // buffers allocated (cudaHostAlloc) since the process started
  std::uint64_t frees = 0;        // buffers freed (cudaFreeHost)
};
PinnedPoolStats pinned_pool_stats();

// Frees the pool's idle pinned buffers (those lent to running reads stay theirs), the GPU
// memory kept for GPU decoding (at most 2 GiB or 1/16 of a device, per device), and the host
// result buffers kept for reuse (ZARRDIRECT_RESULT_POOL_MB). Safe from any thread.
void trim_pinned_pool();

// The codec names (v3 names and numcodecs ids) this build decodes and encodes, sorted.
std::vector<std::string> supported_codecs();

}  // namespace zarrdirect

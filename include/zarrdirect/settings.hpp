// Tunables of the read engine, in one place.
//
// Defaults come from measurements on the GPU machine (docs/BENCHMARKS.md); every field can be
// overridden from the environment (ZARRDIRECT_THREADS, ZARRDIRECT_STAGING_MB,
// ZARRDIRECT_SLOTS_PER_THREAD, ZARRDIRECT_O_DIRECT, ZARRDIRECT_IO_PATH), the CLI and the APIs.
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

// Called from one thread at a time with the chunks done so far and the total; returning false
// cancels the read (it then fails with ErrorKind::cancelled).
using ProgressCallback = std::function<bool(std::size_t done, std::size_t total)>;

struct Settings {
  unsigned threads = 0;                      // reader threads; 0: one per core, at least 4
  std::size_t staging_bytes = 256u << 20;    // pinned staging for device reads, all threads
  unsigned slots_per_thread = 2;             // staging buffers each thread cycles through
  bool o_direct = false;                     // bypass the page cache for chunk files
  IoPath io_path = IoPath::automatic;
  ProgressCallback progress;                 // optional

  // The defaults with ZARRDIRECT_* environment variables applied.
  static Settings from_environment();
  // `threads` with 0 replaced by the count this machine gets.
  unsigned effective_threads() const;
};

}  // namespace zarrdirect

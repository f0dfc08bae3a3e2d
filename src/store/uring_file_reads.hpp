// Reading many small files with io_uring (Debian's liburing): a batch of files is checked with
// one submission (statx each: a regular file of the expected size?) and read with another (open
// beneath the folder, read, close each, as linked requests on direct descriptors), so a worker
// makes two system calls per batch instead of four or five per file. The alternative to the
// reader's pread per chunk on its thread pool, which stays the fallback: where the build has no
// liburing, or the kernel or a container refuses io_uring at run time (io_uring_queue_init
// failing with EPERM or ENOSYS under seccomp), create() returns null and nothing else changes.
//
// Every file that is not plainly readable (missing aside) is reported as `retry`: the caller
// reads it again the ordinary way (FileStore::open), whose checks and messages then apply (not a
// regular file, wrong size, a link out of the folder, I/O errors).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

namespace zarrdirect {

// Whether io_uring batches can run in this process: built with liburing, and a ring (with the
// operations used) can be set up. Probed once; `reason` says why not.
struct UringSupport {
  bool usable = false;
  std::string reason;
};
const UringSupport& uring_support();

// For tests: every later ring setup fails with `error` (an errno, as io_uring_queue_init would
// report it; 0 restores the real call), and the probe is made again.
void refuse_uring_for_testing(int error);

// One file to read whole.
struct UringFileRead {
  const char* path = nullptr;     // relative to the folder, NUL-terminated (an already checked key)
  std::span<std::byte> buffer;    // exactly the bytes the file must hold
  enum class Outcome { read, missing, retry } outcome = Outcome::retry;
};

class UringFileReader {
 public:
  // A ring for batches of up to `max_files` files; null when io_uring is unusable here.
  static std::unique_ptr<UringFileReader> create(unsigned max_files);
  ~UringFileReader();
  UringFileReader(const UringFileReader&) = delete;
  UringFileReader& operator=(const UringFileReader&) = delete;

  unsigned max_files() const { return max_files_; }

  // Reads each of `files` (at most max_files()) beneath the folder `dir_fd` and sets its outcome:
  // read (the buffer holds the file), missing (no such file) or retry (see above). Throws
  // Error(io) only when the ring itself fails.
  void read_files(int dir_fd, std::span<UringFileRead> files);

 private:
  struct Ring;
  UringFileReader(std::unique_ptr<Ring> ring, unsigned max_files);
  std::unique_ptr<Ring> ring_;
  unsigned max_files_ = 0;
};

}  // namespace zarrdirect

// The thin layer over the system calls a read makes, so tests can inject short reads, EINTR, EIO
// and files that shrink mid-read (DESIGN.md: "system calls behind a thin layer").
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace zarrdirect {

class FileIo {
 public:
  virtual ~FileIo() = default;
  // openat2(dir, path, RESOLVE_BENEATH) where the kernel has it: nothing outside `dir` opens,
  // neither through ".." nor through a symbolic link. Returns -1 with errno set on failure.
  virtual int open_beneath(int dir_fd, const char* relative_path, int flags) = 0;
  virtual ssize_t pread(int fd, void* buffer, std::size_t count, off_t offset) = 0;
  virtual int fstat(int fd, struct stat* info) = 0;
  virtual int close(int fd) = 0;
  // The write side (FileStore::set and KeyLock): plain system calls unless a test injects
  // failures (short writes, ENOSPC, EIO on fsync). Defined in file_io_write.cpp.
  virtual ssize_t write(int fd, const void* buffer, std::size_t count);
  virtual int fsync(int fd);
};

// The real system calls.
FileIo& system_file_io();

// Reads exactly `buffer.size()` bytes at `offset`, or fewer only at end of file. Loops over short
// reads, retries EINTR and splits requests over 1 GiB (Linux caps one read near 2 GiB). Returns
// the bytes read. Throws Error(io) naming `path` on any other failure.
std::size_t read_fully_at(FileIo& io, int fd, std::span<std::byte> buffer, std::uint64_t offset,
                          const std::string& path);

// Writes all of `bytes` to `fd` from its current position, looping over short writes and
// retrying EINTR. Throws Error(io) naming `path` on failure (ENOSPC, EIO, ...).
void write_fully(FileIo& io, int fd, std::span<const std::byte> bytes, const std::string& path);

}  // namespace zarrdirect

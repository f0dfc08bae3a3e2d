// A file being written so that nobody ever sees it half-written, and no failure goes unnoticed.
//
// A regular file (or a path that does not exist yet) is written to a temporary file beside it,
// which replaces the target by rename only once every write, the fsync and the close have
// succeeded: a full disk, a file-size limit or an I/O error leaves an existing target exactly as
// it was, and no temporary behind. A target that exists and is not a regular file (a device such
// as /dev/stdout or /dev/full, a FIFO) is written directly, each write and the close checked.
// A symbolic link as target is followed: the file it points to is replaced, the link stays.
#pragma once

#include <cstddef>
#include <filesystem>
#include <span>

namespace zarrdirect {

class OutputFile {
 public:
  // Opens the temporary (or the device). Error(io) naming `path` with the system's reason when
  // that fails, and when `path` is a folder.
  explicit OutputFile(const std::filesystem::path& path);
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;
  // Without commit(): closes and removes the temporary; the target is untouched.
  ~OutputFile();

  // Writes all of `bytes`, retrying short writes. Error(io) naming the target and the reason
  // (e.g. "No space left on device", "File too large").
  void write(std::span<const std::byte> bytes);

  // Flushes to storage, closes and renames over the target. Error(io) on any failure, after
  // which the target is untouched (for a regular file) and the temporary removed.
  void commit();

  // Whether the target is written in place (a device or FIFO) rather than through a temporary.
  bool direct() const { return direct_; }

 private:
  [[noreturn]] void fail(const char* action, int error);
  void discard() noexcept;

  std::filesystem::path target_;     // what the caller named, for messages
  std::filesystem::path real_;       // the file replaced (the link's target when `target_` is a link)
  std::filesystem::path temporary_;  // empty when writing directly
  int fd_ = -1;
  bool direct_ = false;
};

}  // namespace zarrdirect

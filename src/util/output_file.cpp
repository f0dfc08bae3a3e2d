#include "util/output_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <string>

#include <fmt/format.h>

#include "zarrdirect/error.hpp"

namespace zarrdirect {
namespace {

// A name for the temporary that no other writer (thread or process) picks: pid, a counter and
// the clock; O_EXCL settles any collision left.
std::string temporary_name(const std::filesystem::path& real, unsigned attempt) {
  static std::atomic<unsigned> counter{0};
  const auto ticks = std::chrono::steady_clock::now().time_since_epoch().count();
  return fmt::format(".{}.tmp-{}-{}-{:x}", real.filename().string(), ::getpid(), counter++ + attempt,
                     static_cast<unsigned long long>(ticks) & 0xffffffu);
}

// Flushes a folder's entries (the rename) to storage. Some filesystems refuse fsync on a folder
// (EINVAL); the file itself is already safe then, so that is not a failure.
int sync_folder(const std::filesystem::path& folder) {
  int fd = ::open(folder.empty() ? "." : folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return 0;
  int result = ::fsync(fd);
  int error = errno;
  ::close(fd);
  return result == 0 || error == EINVAL ? 0 : error;
}

}  // namespace

OutputFile::OutputFile(const std::filesystem::path& path) : target_(path), real_(path) {
  struct stat link_info {};
  if (::lstat(path.c_str(), &link_info) == 0 && S_ISLNK(link_info.st_mode)) {
    // Replace what the link points to, not the link. A dangling link is replaced itself.
    std::error_code ec;
    auto resolved = std::filesystem::canonical(path, ec);
    if (!ec) real_ = resolved;
  }
  struct stat info {};
  const bool exists = ::stat(real_.c_str(), &info) == 0;
  if (exists && S_ISDIR(info.st_mode)) fail("cannot write", EISDIR);
  if (exists && !S_ISREG(info.st_mode)) {
    // A device or FIFO: there is nothing to rename over. O_NOCTTY: never become its terminal.
    direct_ = true;
    fd_ = ::open(real_.c_str(), O_WRONLY | O_NOCTTY | O_CLOEXEC);
    if (fd_ < 0) fail("cannot open", errno);
    return;
  }
  // The temporary gets the target's permissions (or, for a new file, what umask allows).
  const mode_t mode = exists ? (info.st_mode & 07777) : 0666;
  const auto folder = real_.parent_path();
  for (unsigned attempt = 0; fd_ < 0; ++attempt) {
    temporary_ = folder / temporary_name(real_, attempt);
    fd_ = ::open(temporary_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
    if (fd_ < 0 && (errno != EEXIST || attempt > 100)) {
      int error = errno;
      temporary_.clear();
      fail("cannot create a temporary file beside it", error);
    }
  }
  if (exists && ::fchmod(fd_, mode) != 0) fail("cannot set the permissions of the temporary file", errno);
}

OutputFile::~OutputFile() { discard(); }

void OutputFile::discard() noexcept {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  if (!temporary_.empty()) ::unlink(temporary_.c_str());
  temporary_.clear();
}

void OutputFile::fail(const char* action, int error) {
  discard();
  throw Error(ErrorKind::io, fmt::format("{}: {}: {}{}", target_.string(), action, std::strerror(error),
                                         direct_ ? "" : " (nothing was replaced)"));
}

void OutputFile::write(std::span<const std::byte> bytes) {
  if (fd_ < 0) throw Error(ErrorKind::io, fmt::format("{}: write after the file was closed", target_.string()));
  while (!bytes.empty()) {
    ssize_t wrote = ::write(fd_, bytes.data(), bytes.size());
    if (wrote < 0 && errno == EINTR) continue;
    if (wrote < 0) fail("cannot write", errno);
    if (wrote == 0) fail("cannot write", EIO);  // no progress and no reason: do not spin
    bytes = bytes.subspan(static_cast<std::size_t>(wrote));
  }
}

void OutputFile::commit() {
  if (fd_ < 0) throw Error(ErrorKind::io, fmt::format("{}: committed twice", target_.string()));
  // fsync before rename: otherwise a crash can leave the new name on an empty file. Devices and
  // FIFOs have nothing to sync (and refuse it).
  if (!direct_ && ::fsync(fd_) != 0) fail("cannot flush to storage", errno);
  int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) fail("cannot close", errno);
  if (direct_) return;
  if (::rename(temporary_.c_str(), real_.c_str()) != 0) fail("cannot replace", errno);
  temporary_.clear();
  if (int error = sync_folder(real_.parent_path()))
    throw Error(ErrorKind::io, fmt::format("{}: written, but its folder cannot be flushed to storage: {}",
                                           target_.string(), std::strerror(error)));
}

}  // namespace zarrdirect

#include "store/file_io.hpp"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "zarrdirect/error.hpp"

namespace zarrdirect {
namespace {

class SystemFileIo final : public FileIo {
 public:
  int open_beneath(int dir_fd, const char* relative_path, int flags) override {
    if (openat2_works_.load(std::memory_order_relaxed)) {
      open_how how{};
      how.flags = static_cast<std::uint64_t>(flags | O_CLOEXEC);
      how.resolve = RESOLVE_BENEATH;
      long fd = ::syscall(SYS_openat2, dir_fd, relative_path, &how, sizeof(how));
      if (fd >= 0 || errno != ENOSYS) return static_cast<int>(fd);
      openat2_works_.store(false, std::memory_order_relaxed);
    }
    // Kernels before 5.6: keys are already checked for ".." and absolute paths by the store.
    return ::openat(dir_fd, relative_path, flags | O_CLOEXEC);
  }
  ssize_t pread(int fd, void* buffer, std::size_t count, off_t offset) override {
    return ::pread(fd, buffer, count, offset);
  }
  int fstat(int fd, struct stat* info) override { return ::fstat(fd, info); }
  int close(int fd) override { return ::close(fd); }

 private:
  std::atomic<bool> openat2_works_{true};
};

}  // namespace

FileIo& system_file_io() {
  static SystemFileIo io;
  return io;
}

std::size_t read_fully_at(FileIo& io, int fd, std::span<std::byte> buffer, std::uint64_t offset,
                          const std::string& path) {
  constexpr std::size_t kMaxRequest = std::size_t{1} << 30;
  std::size_t done = 0;
  while (done < buffer.size()) {
    std::size_t request = std::min(buffer.size() - done, kMaxRequest);
    ssize_t got = io.pread(fd, buffer.data() + done, request, static_cast<off_t>(offset + done));
    if (got < 0) {
      if (errno == EINTR) continue;
      throw Error(ErrorKind::io, fmt::format("{}: read of {} bytes at offset {} failed: {}", path, request,
                                             offset + done, std::strerror(errno)));
    }
    if (got == 0) break;  // end of file
    done += static_cast<std::size_t>(got);
  }
  return done;
}

}  // namespace zarrdirect

// The write half of FileIo: the default system calls and the write loop.
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "store/file_io.hpp"
#include "zarrdirect/error.hpp"

namespace zarrdirect {

ssize_t FileIo::write(int fd, const void* buffer, std::size_t count) { return ::write(fd, buffer, count); }

int FileIo::fsync(int fd) { return ::fsync(fd); }

void write_fully(FileIo& io, int fd, std::span<const std::byte> bytes, const std::string& path) {
  constexpr std::size_t kMaxRequest = std::size_t{1} << 30;  // Linux caps one write near 2 GiB
  std::size_t done = 0;
  while (done < bytes.size()) {
    std::size_t request = std::min(bytes.size() - done, kMaxRequest);
    ssize_t wrote = io.write(fd, bytes.data() + done, request);
    if (wrote < 0) {
      if (errno == EINTR) continue;
      throw Error(ErrorKind::io, fmt::format("{}: write of {} bytes at offset {} failed: {}", path, request, done,
                                             std::strerror(errno)));
    }
    if (wrote == 0)
      throw Error(ErrorKind::io, fmt::format("{}: write at offset {} made no progress", path, done));
    done += static_cast<std::size_t>(wrote);
  }
}

}  // namespace zarrdirect

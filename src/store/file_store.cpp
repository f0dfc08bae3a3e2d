#include "store/file_store.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include <fmt/format.h>

#include "util/quote.hpp"
#include "zarrdirect/error.hpp"

namespace zarrdirect {
namespace {

// RESOLVE_BENEATH reports a link out of the folder as EXDEV. ELOOP is a loop of links inside it (or
// a chain longer than the kernel follows, or a /proc magic link): not an escape, and not said to be.
Error symlink_loop(const std::string& path) {
  return Error(ErrorKind::io, fmt::format("{}: cannot open: a loop of symbolic links (ELOOP: {})", path,
                                          std::strerror(ELOOP)));
}

}  // namespace

StoreFile::StoreFile(StoreFile&& other) noexcept
    : io_(other.io_), fd_(std::exchange(other.fd_, -1)), size_(other.size_), path_(std::move(other.path_)),
      direct_(other.direct_) {}

StoreFile& StoreFile::operator=(StoreFile&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) io_->close(fd_);
    io_ = other.io_;
    fd_ = std::exchange(other.fd_, -1);
    size_ = other.size_;
    path_ = std::move(other.path_);
    direct_ = other.direct_;
  }
  return *this;
}

StoreFile::~StoreFile() {
  if (fd_ >= 0) io_->close(fd_);
}

bool StoreFile::direct_read_fits(const std::byte* data, std::uint64_t offset, std::size_t length) const {
  if (!direct_) return false;
  constexpr std::uint64_t kAlignment = 4096;
  bool fits = reinterpret_cast<std::uintptr_t>(data) % kAlignment == 0 && offset % kAlignment == 0 &&
              length % kAlignment == 0;
  if (!fits) {
    int flags = ::fcntl(fd_, F_GETFL);
    if (flags >= 0) ::fcntl(fd_, F_SETFL, flags & ~O_DIRECT);
    direct_ = false;
  }
  return fits;
}

void StoreFile::read_exact(std::uint64_t offset, std::span<std::byte> buffer) const {
  direct_read_fits(buffer.data(), offset, buffer.size());
  std::size_t got = read_fully_at(*io_, fd_, buffer, offset, path_);
  if (got != buffer.size())
    throw Error(ErrorKind::corrupt_data,
                fmt::format("{}: expected {} bytes at offset {}, the file ends after {}", path_, buffer.size(),
                            offset, offset + got));
}

std::size_t StoreFile::read_all(std::span<std::byte> buffer) const {
  if (size_ > buffer.size())
    throw Error(ErrorKind::corrupt_data,
                fmt::format("{}: file is {} bytes, more than the {} it may hold", path_, size_, buffer.size()));
  // Direct reads ask for whole pages: the file's last page comes back short, at its true end.
  std::size_t request = static_cast<std::size_t>(size_);
  std::size_t rounded = (request + 4095) / 4096 * 4096;
  if (rounded <= buffer.size() && direct_read_fits(buffer.data(), 0, rounded)) request = rounded;
  else direct_read_fits(buffer.data(), 0, request);
  std::size_t got = read_fully_at(*io_, fd_, buffer.first(request), 0, path_);
  if (got != size_)
    throw Error(ErrorKind::corrupt_data,
                fmt::format("{}: file {} from {} to {} bytes while being read", path_, got < size_ ? "shrank" : "grew",
                            size_, got));
  return got;
}

FileStore::FileStore(const std::filesystem::path& root, FileIo& io) : root_(root), io_(&io) {
  require_writable_location(root);
  root_fd_ = ::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (root_fd_ < 0)
    throw Error(ErrorKind::io, fmt::format("{}: cannot open folder: {}", root.string(), std::strerror(errno)));
}

FileStore::~FileStore() {
  if (root_fd_ >= 0) ::close(root_fd_);
}

void FileStore::check_key(std::string_view key) {
  auto refuse = [&](std::string_view why) {
    // Keys come from metadata (level paths) or callers: quoted, escaped and shortened.
    throw Error(ErrorKind::invalid_argument, fmt::format("key {} {}", quote(key, 200), why));
  };
  if (key.empty()) refuse("is empty");
  if (key.front() == '/') refuse("is absolute: keys stay inside the array folder");
  if (key.find('\0') != std::string_view::npos) refuse("contains a NUL byte");
  if (key.find('\\') != std::string_view::npos) refuse("contains a backslash");
  std::size_t start = 0;
  while (start <= key.size()) {
    auto end = key.find('/', start);
    if (end == std::string_view::npos) end = key.size();
    auto segment = key.substr(start, end - start);
    if (segment.empty()) refuse("has an empty path segment");
    if (segment == "." || segment == "..") refuse("would leave the array folder");
    start = end + 1;
  }
}

std::optional<StoreFile> FileStore::open(std::string_view key, bool o_direct) const {
  check_key(key);
  std::string relative(key);
  std::string path = (root_ / relative).string();
  // O_NONBLOCK: opening a FIFO planted where a chunk should be would otherwise wait for a writer
  // forever; it changes nothing for regular files, and anything else is refused below.
  const int base_flags = O_RDONLY | O_NONBLOCK | O_NOCTTY;
  int flags = base_flags | (o_direct ? O_DIRECT : 0);
  int fd = io_->open_beneath(root_fd_, relative.c_str(), flags);
  if (fd < 0 && o_direct && errno == EINVAL) fd = io_->open_beneath(root_fd_, relative.c_str(), base_flags);
  if (fd < 0) {
    if (errno == ENOENT || errno == ENOTDIR) return std::nullopt;
    if (errno == EXDEV)
      throw Error(ErrorKind::invalid_argument,
                  fmt::format("{}: resolves outside the array folder (a link out of it?): refused", path));
    if (errno == ELOOP) throw symlink_loop(path);
    throw Error(ErrorKind::io, fmt::format("{}: cannot open: {}", path, std::strerror(errno)));
  }
  struct stat info {};
  if (io_->fstat(fd, &info) != 0) {
    int saved = errno;
    io_->close(fd);
    throw Error(ErrorKind::io, fmt::format("{}: cannot stat: {}", path, std::strerror(saved)));
  }
  if (!S_ISREG(info.st_mode)) {
    io_->close(fd);
    throw Error(ErrorKind::corrupt_data, fmt::format("{}: is not a regular file", path));
  }
  const int status_flags = o_direct ? ::fcntl(fd, F_GETFL) : -1;
  const bool direct = status_flags >= 0 && (status_flags & O_DIRECT) != 0;
  return StoreFile(*io_, fd, static_cast<std::uint64_t>(info.st_size), std::move(path), direct);
}

std::unique_ptr<StoreObject> FileStore::open_object(std::string_view key, bool o_direct) const {
  auto file = open(key, o_direct);
  if (!file) return nullptr;
  return std::make_unique<StoreFile>(std::move(*file));
}

std::optional<std::vector<std::byte>> FileStore::read(std::string_view key, std::uint64_t max_size) const {
  auto file = open(key);
  if (!file) return std::nullopt;
  if (file->size() > max_size)
    throw Error(ErrorKind::corrupt_data,
                fmt::format("{}: file is {} bytes, more than the {} allowed", file->path(), file->size(), max_size));
  std::vector<std::byte> bytes(static_cast<std::size_t>(file->size()));
  file->read_all(bytes);
  return bytes;
}

bool FileStore::exists(std::string_view key) const {
  check_key(key);
  // Resolved beneath the root like open(): a link out of the folder does not exist for the store.
  int fd = io_->open_beneath(root_fd_, std::string(key).c_str(), O_PATH);
  if (fd < 0) return false;
  io_->close(fd);
  return true;
}

void FileStore::require_beneath(std::string_view key) const {
  check_key(key);
  int fd = io_->open_beneath(root_fd_, std::string(key).c_str(), O_PATH);
  if (fd >= 0) {
    io_->close(fd);
    return;
  }
  if (errno == ELOOP) throw symlink_loop((root_ / std::string(key)).string());
  if (errno == EXDEV)
    throw Error(ErrorKind::invalid_argument,
                fmt::format("{}: resolves outside {} (a link out of it?): refused", (root_ / std::string(key)).string(),
                            root_.string()));
}

std::vector<std::string> FileStore::list(std::string_view key) const {
  if (!key.empty()) check_key(key);
  std::vector<std::string> names;
  // The folder is opened beneath the root, then read through its descriptor: listing never
  // follows a link out of the array's folder.
  int fd = key.empty() ? ::fcntl(root_fd_, F_DUPFD_CLOEXEC, 0)
                       : io_->open_beneath(root_fd_, std::string(key).c_str(), O_RDONLY | O_DIRECTORY);
  if (fd < 0) return names;
  DIR* folder = ::fdopendir(fd);
  if (!folder) {
    ::close(fd);
    return names;
  }
  while (const dirent* entry = ::readdir(folder)) {
    std::string_view name = entry->d_name;
    if (name != "." && name != "..") names.emplace_back(name);
  }
  ::closedir(folder);  // closes fd too
  std::sort(names.begin(), names.end());
  return names;
}

FileStore::Usage FileStore::usage() const {
  Usage usage;
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(root_, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    if (it->is_regular_file(ec)) {
      ++usage.files;
      usage.bytes += it->file_size(ec);
    }
  }
  return usage;
}

}  // namespace zarrdirect

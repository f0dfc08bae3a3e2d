// The write side of FileStore: atomic replacement of keys, per-key locks, removal.
//
// Every value is written to a file beside its key and renamed over it, so a reader opening the
// key gets the old file or the new one. The temporary file is the key's lock file (KeyLock), which
// is what makes a read-modify-write of one key safe between threads and processes.
#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>  // renameat2
#include <cstring>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "store/file_store.hpp"
#include "zarrdirect/error.hpp"

namespace zarrdirect {
namespace {

constexpr std::string_view kLockSuffix = ".__lock";

[[noreturn]] void throw_errno(const std::string& path, std::string_view what, int error) {
  throw Error(ErrorKind::io, fmt::format("{}: {}: {}", path, what, std::strerror(error)));
}

[[noreturn]] void throw_open_failure(const std::string& path, int error) {
  if (error == EXDEV || error == ELOOP)
    throw Error(ErrorKind::invalid_argument,
                fmt::format("{}: resolves outside the array folder (a link out of it?): refused", path));
  throw_errno(path, "cannot open", error);
}

// Splits "a/b/c" into "a/b" and "c".
std::pair<std::string, std::string> split_key(std::string_view key) {
  auto slash = key.rfind('/');
  if (slash == std::string_view::npos) return {std::string(), std::string(key)};
  return {std::string(key.substr(0, slash)), std::string(key.substr(slash + 1))};
}

// Closes a descriptor on scope exit unless released.
struct FdGuard {
  FileIo& io;
  int fd = -1;
  ~FdGuard() {
    if (fd >= 0) io.close(fd);
  }
  int release() { return std::exchange(fd, -1); }
};

}  // namespace

FolderHandle::~FolderHandle() {
  if (fd >= 0) io->close(fd);
}

KeyLock::KeyLock(KeyLock&& other) noexcept
    : io_(other.io_), folder_(std::move(other.folder_)), lock_fd_(std::exchange(other.lock_fd_, -1)),
      name_(std::move(other.name_)), path_(std::move(other.path_)) {}

KeyLock::~KeyLock() { release(true); }

void KeyLock::release(bool remove_lock_file) {
  if (lock_fd_ >= 0) {
    // Removed while still locked: a waiter then finds its file gone and opens a new one.
    if (remove_lock_file) ::unlinkat(folder_fd(), (name_ + std::string(kLockSuffix)).c_str(), 0);
    io_->close(lock_fd_);
    lock_fd_ = -1;
  }
  folder_.reset();
}

void KeyLock::require_held() const {
  if (lock_fd_ < 0) throw Error(ErrorKind::invalid_argument, fmt::format("{}: lock already released", path_));
}

std::string KeyLock::lock_path() const { return path_ + std::string(kLockSuffix); }

void KeyLock::write(std::span<const std::byte> bytes) {
  require_held();
  write_fully(*io_, lock_fd_, bytes, lock_path());
}

void KeyLock::copy_from(const StoreFile& source, std::uint64_t offset, std::uint64_t nbytes) {
  require_held();
  auto source_offset = static_cast<loff_t>(offset);
  std::uint64_t left = nbytes;
  bool in_kernel = true;
  std::vector<std::byte> buffer;
  while (left > 0) {
    const std::size_t request = static_cast<std::size_t>(std::min<std::uint64_t>(left, std::uint64_t{1} << 30));
    ssize_t copied = -1;
    if (in_kernel) {
      copied = ::copy_file_range(source.fd(), &source_offset, lock_fd_, nullptr, request, 0);
      if (copied < 0) {
        if (errno == EINTR) continue;
        // Not offered between these files (another filesystem, an old kernel): copy through memory.
        if (errno != EXDEV && errno != EINVAL && errno != ENOSYS && errno != EOPNOTSUPP && errno != EBADF)
          throw_errno(lock_path(), fmt::format("cannot copy {} bytes from {}", request, source.path()), errno);
        in_kernel = false;
        continue;
      }
    } else {
      buffer.resize(std::min<std::size_t>(request, std::size_t{4} << 20));
      const std::size_t got =
          read_fully_at(*io_, source.fd(), buffer, static_cast<std::uint64_t>(source_offset), source.path());
      write_fully(*io_, lock_fd_, std::span<const std::byte>(buffer).first(got), lock_path());
      source_offset += static_cast<loff_t>(got);
      copied = static_cast<ssize_t>(got);
    }
    if (copied == 0)
      throw Error(ErrorKind::corrupt_data, fmt::format("{}: expected {} bytes at offset {}, the file ends before",
                                                       source.path(), nbytes, offset));
    left -= static_cast<std::uint64_t>(copied);
  }
}

void KeyLock::seek(std::uint64_t offset) {
  require_held();
  if (::lseek(lock_fd_, static_cast<off_t>(offset), SEEK_SET) < 0) throw_errno(lock_path(), "cannot seek", errno);
}

// Replaces a stored value by swapping names (renameat2 RENAME_EXCHANGE: the key names the new
// file, the lock file's name the old one) and then removing the old file; false, with nothing
// done, when there is no stored value or the filesystem cannot exchange (then a rename does it).
// Why not rename over the key: on ext4, renaming over an existing file starts writeback of the
// new file at once (its "replace via rename" safeguard, auto_da_alloc), which made each rename
// of a 25 MB shard take 55-65 ms, most of a region rewrite; an exchange does not.
// Readers see the old value or the new one, as with a rename. Writers: between the exchange and
// the removal, the lock file's name holds the old value; a writer that opens it then must not
// take it for a free lock, so the old file is flocked first, and that writer's flock waits until
// the name is gone, when its check that the lock file is still current sends it round again.
bool KeyLock::exchange_with_key(const std::string& lock_name) {
  FdGuard old{*io_, ::openat(folder_fd(), name_.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC)};
  if (old.fd < 0) return false;  // nothing stored: a rename is as cheap
  struct stat stored {};
  if (io_->fstat(old.fd, &stored) != 0 || !S_ISREG(stored.st_mode)) return false;  // the rename reports it
  while (::flock(old.fd, LOCK_EX) != 0) {
    if (errno != EINTR) return false;
  }
  if (::renameat2(folder_fd(), lock_name.c_str(), folder_fd(), name_.c_str(), RENAME_EXCHANGE) != 0) return false;
  // The old value now sits under the lock file's name; a failure to remove it leaves a stale
  // lock file, which the next writer truncates (FileStore::lock).
  ::unlinkat(folder_fd(), lock_name.c_str(), 0);
  return true;
}

void KeyLock::publish(bool durable) {
  require_held();
  const std::string lock_name = name_ + std::string(kLockSuffix);
  if (durable && io_->fsync(lock_fd_) != 0) throw_errno(lock_path(), "fsync failed", errno);
  if (!exchange_with_key(lock_name) && ::renameat(folder_fd(), lock_name.c_str(), folder_fd(), name_.c_str()) != 0)
    throw_errno(path_, "cannot rename the new value over the key", errno);
  // The lock file is now the key: release without removing it. A close error after a completed
  // rename loses nothing (the data was written, and fsynced when durable).
  io_->close(lock_fd_);
  lock_fd_ = -1;
  if (durable && io_->fsync(folder_fd()) != 0) {
    int error = errno;
    release(false);
    throw_errno(path_, "fsync of the folder failed", error);
  }
  release(false);
}

void KeyLock::erase(bool durable) {
  require_held();
  if (::unlinkat(folder_fd(), name_.c_str(), 0) != 0 && errno != ENOENT) throw_errno(path_, "cannot remove", errno);
  ::unlinkat(folder_fd(), (name_ + std::string(kLockSuffix)).c_str(), 0);
  if (durable && io_->fsync(folder_fd()) != 0) throw_errno(path_, "fsync of the folder failed", errno);
  release(false);
}

void FileStore::remember(FolderCache* folders, const std::string& folder,
                         const std::shared_ptr<const FolderHandle>& handle) {
  if (!folders) return;
  std::lock_guard guard(folders->mutex_);
  if (folders->folders_.size() >= FolderCache::kMaxFolders) folders->folders_.clear();
  // Another thread may have opened it meanwhile: either descriptor names the same folder.
  folders->folders_.try_emplace(folder, handle);
}

std::shared_ptr<const FolderHandle> FileStore::open_folder(const std::string& folder, bool durable,
                                                           FolderCache* folders) const {
  // The deepest folder on the path that this write has open already, if any.
  std::shared_ptr<const FolderHandle> known;
  std::size_t done = 0;  // characters of `folder` that `known` covers
  if (folders) {
    std::lock_guard guard(folders->mutex_);
    std::size_t end = folder.size();
    while (true) {
      auto found = folders->folders_.find(folder.substr(0, end));
      if (found != folders->folders_.end()) {
        known = found->second;
        done = end;
        break;
      }
      if (end == 0) break;
      auto slash = folder.rfind('/', end - 1);
      end = slash == std::string::npos ? 0 : slash;
    }
    if (known && done == folder.size()) return known;
  }

  // The rest is made one segment at a time, each opened beneath the root before the next is made
  // inside it: a link planted in the way is refused, never followed out of the root.
  auto dir = known;
  if (!dir) {
    int root = ::fcntl(root_fd_, F_DUPFD_CLOEXEC, 0);
    if (root < 0) throw_errno(root_.string(), "cannot duplicate the folder descriptor", errno);
    dir = std::make_shared<const FolderHandle>(*io_, root);
    remember(folders, "", dir);
  }
  std::size_t start = done == 0 ? 0 : done + 1;
  while (start < folder.size()) {
    auto end = folder.find('/', start);
    if (end == std::string::npos) end = folder.size();
    const std::string segment = folder.substr(start, end - start);
    const std::string prefix = folder.substr(0, end);
    const std::string folder_path = (root_ / prefix).string();
    bool made = false;
    if (::mkdirat(dir->fd, segment.c_str(), 0777) == 0) made = true;
    else if (errno != EEXIST) throw_errno(folder_path, "cannot create folder", errno);
    if (made && durable && io_->fsync(dir->fd) != 0) throw_errno(folder_path, "fsync of the parent folder failed", errno);
    int next = io_->open_beneath(root_fd_, prefix.c_str(), O_RDONLY | O_DIRECTORY);
    if (next < 0) throw_open_failure(folder_path, errno);
    dir = std::make_shared<const FolderHandle>(*io_, next);
    remember(folders, prefix, dir);
    start = end + 1;
  }
  return dir;
}

KeyLock FileStore::lock(std::string_view key, bool durable, FolderCache* folders) const {
  check_key(key);
  auto [folder, name] = split_key(key);
  const std::string path = (root_ / std::string(key)).string();
  if (name.size() + kLockSuffix.size() > NAME_MAX)
    throw Error(ErrorKind::invalid_argument, fmt::format("{}: name too long for its lock file", path));
  auto dir = open_folder(folder, durable, folders);

  const std::string lock_name = name + std::string(kLockSuffix);
  const std::string lock_path = path + std::string(kLockSuffix);
  while (true) {
    // No O_TRUNC: the file may be another writer's half-written value until we hold its lock.
    // O_NOFOLLOW: a link planted under the lock file's name is refused.
    FdGuard file{*io_, ::openat(dir->fd, lock_name.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0666)};
    if (file.fd < 0) throw_open_failure(lock_path, errno);
    while (::flock(file.fd, LOCK_EX) != 0) {
      if (errno != EINTR) throw_errno(lock_path, "cannot lock", errno);
    }
    // Still the current lock file? It may have been renamed over the key or removed meanwhile.
    struct stat held {}, current {};
    if (io_->fstat(file.fd, &held) != 0) throw_errno(lock_path, "cannot stat", errno);
    if (::fstatat(dir->fd, lock_name.c_str(), &current, AT_SYMLINK_NOFOLLOW) != 0) {
      if (errno == ENOENT) continue;
      throw_errno(lock_path, "cannot stat", errno);
    }
    if (held.st_dev != current.st_dev || held.st_ino != current.st_ino) continue;
    if (!S_ISREG(held.st_mode)) throw Error(ErrorKind::io, fmt::format("{}: is not a regular file", lock_path));
    // A lock file a crashed writer left holds its bytes: start the new value from nothing. (A
    // fresh lock file, the usual case, needs no truncation.)
    if (held.st_size != 0 && ::ftruncate(file.fd, 0) != 0) throw_errno(lock_path, "cannot truncate", errno);
    return KeyLock(*io_, std::move(dir), file.release(), name, path);
  }
}

void FileStore::set(std::string_view key, std::span<const std::byte> bytes, bool durable) const {
  lock(key, durable).commit(bytes, durable);
}

void FileStore::erase(std::string_view key, bool durable) const {
  check_key(key);
  auto [folder, name] = split_key(key);
  if (!folder.empty()) {
    // Nothing to remove when the folder is missing: do not create it just to lock.
    int fd = io_->open_beneath(root_fd_, folder.c_str(), O_PATH | O_DIRECTORY);
    if (fd < 0) {
      if (errno == ENOENT || errno == ENOTDIR) return;
      throw_open_failure((root_ / folder).string(), errno);
    }
    io_->close(fd);
  }
  lock(key, durable).erase(durable);
}

namespace {

// Removes everything inside the open folder `dir_fd` (closed on return). Entries are unlinked
// by name relative to the folder; subfolders are opened with O_NOFOLLOW, so a link is removed as
// a link and what it points to is left alone.
void remove_contents(FileIo& io, int dir_fd, const std::string& path) {
  DIR* folder = ::fdopendir(dir_fd);
  if (!folder) {
    int error = errno;
    io.close(dir_fd);
    throw_errno(path, "cannot list folder", error);
  }
  std::vector<std::string> names;
  while (const dirent* entry = ::readdir(folder)) {
    std::string_view name = entry->d_name;
    if (name != "." && name != "..") names.emplace_back(name);
  }
  const int fd = ::dirfd(folder);
  try {
    for (const auto& name : names) {
      const std::string child_path = path + "/" + name;
      if (::unlinkat(fd, name.c_str(), 0) == 0 || errno == ENOENT) continue;
      if (errno != EISDIR && errno != EPERM) throw_errno(child_path, "cannot remove", errno);
      int child = ::openat(fd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (child < 0) throw_errno(child_path, "cannot open folder", errno);
      remove_contents(io, child, child_path);
      if (::unlinkat(fd, name.c_str(), AT_REMOVEDIR) != 0 && errno != ENOENT)
        throw_errno(child_path, "cannot remove folder", errno);
    }
  } catch (...) {
    ::closedir(folder);
    throw;
  }
  ::closedir(folder);
}

}  // namespace

void FileStore::erase_tree(std::string_view key) const {
  if (key.empty()) {
    int fd = ::openat(root_fd_, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) throw_errno(root_.string(), "cannot open folder", errno);
    remove_contents(*io_, fd, root_.string());
    return;
  }
  check_key(key);
  auto [folder, name] = split_key(key);
  const std::string path = (root_ / std::string(key)).string();
  int parent = folder.empty() ? ::fcntl(root_fd_, F_DUPFD_CLOEXEC, 0)
                              : io_->open_beneath(root_fd_, folder.c_str(), O_RDONLY | O_DIRECTORY);
  if (parent < 0) {
    if (errno == ENOENT || errno == ENOTDIR) return;
    throw_open_failure(path, errno);
  }
  FdGuard guard{*io_, parent};
  if (::unlinkat(parent, name.c_str(), 0) == 0 || errno == ENOENT) return;
  if (errno != EISDIR && errno != EPERM) throw_errno(path, "cannot remove", errno);
  int child = ::openat(parent, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (child < 0) throw_errno(path, "cannot open folder", errno);
  remove_contents(*io_, child, path);
  if (::unlinkat(parent, name.c_str(), AT_REMOVEDIR) != 0 && errno != ENOENT)
    throw_errno(path, "cannot remove folder", errno);
}

}  // namespace zarrdirect

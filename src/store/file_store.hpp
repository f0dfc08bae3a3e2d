// A Zarr store on a local filesystem: keys are paths relative to the array (or group) folder.
//
// Every key is checked before use and opened with openat2(RESOLVE_BENEATH), so neither a
// hostile key ("../x", "/etc/passwd", "a\0b") nor a symbolic link inside the folder can make
// zarrdirect read outside it.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "store/file_io.hpp"

namespace zarrdirect {

// One open file of the store. Closes on destruction.
class StoreFile {
 public:
  // `direct`: the file was opened with O_DIRECT (reads that suit it bypass the page cache).
  StoreFile(FileIo& io, int fd, std::uint64_t size, std::string path, bool direct = false)
      : io_(&io), fd_(fd), size_(size), path_(std::move(path)), direct_(direct) {}
  StoreFile(StoreFile&& other) noexcept;
  StoreFile& operator=(StoreFile&& other) noexcept;
  StoreFile(const StoreFile&) = delete;
  ~StoreFile();

  std::uint64_t size() const { return size_; }
  const std::string& path() const { return path_; }
  int fd() const { return fd_; }

  // Reads [offset, offset + buffer.size()). A file that ends before that (shrunk since it was
  // opened, or shorter than an index says) is Error(corrupt_data) naming the file.
  void read_exact(std::uint64_t offset, std::span<std::byte> buffer) const;
  // Reads the whole file into the front of `buffer`; returns its size. The file must fit.
  std::size_t read_all(std::span<std::byte> buffer) const;

 private:
  // O_DIRECT needs page-aligned memory, offsets and lengths; a read that lacks them switches the
  // file to buffered reads instead of failing.
  bool direct_read_fits(const std::byte* data, std::uint64_t offset, std::size_t length) const;

  FileIo* io_;
  int fd_;
  std::uint64_t size_;
  std::string path_;
  mutable bool direct_ = false;
};

// A lock on one key of a FileStore, for a read-modify-write of that key (FileStore::lock).
//
// The lock is flock(LOCK_EX) on a file "<key>.__lock" in the key's folder, the scheme of
// tensorstore's file kvstore. The lock file doubles as the temporary file: commit() writes the new
// value into it and renames it over the key, so a reader sees the old value or the new one, never
// a part, and the rename ends the lock. A waiter that wakes holding a lock file that has since
// been renamed or removed opens the current one and waits again. flock() locks belong to the open
// file, so threads of one process exclude each other just as processes do (on local filesystems;
// NFS maps flock to byte-range locks, which also works). A lock file left behind by a crash holds
// no lock: the next writer takes it over.
//
// Destroying an uncommitted lock removes the lock file (the key keeps its old value). Not
// thread-safe itself: one thread uses a lock at a time.
class KeyLock {
 public:
  KeyLock(KeyLock&& other) noexcept;
  KeyLock& operator=(KeyLock&&) = delete;
  KeyLock(const KeyLock&) = delete;
  ~KeyLock();

  const std::string& path() const { return path_; }
  bool held() const { return lock_fd_ >= 0; }

  // Replaces the key's value with `bytes`: writes them to the lock file, checks every write and
  // the close, (durable: fsyncs the file), renames it over the key, (durable: fsyncs the folder).
  // Releases the lock. Throws Error(io) naming the file on any failure; the key is then unchanged.
  void commit(std::span<const std::byte> bytes, bool durable);
  // Removes the key's value, if any (durable: fsyncs the folder). Releases the lock.
  void erase(bool durable);

 private:
  friend class FileStore;
  KeyLock(FileIo& io, int dir_fd, int lock_fd, std::string name, std::string path)
      : io_(&io), dir_fd_(dir_fd), lock_fd_(lock_fd), name_(std::move(name)), path_(std::move(path)) {}
  void release(bool remove_lock_file);

  FileIo* io_;
  int dir_fd_ = -1;   // the key's folder
  int lock_fd_ = -1;  // "<name>.__lock", locked
  std::string name_;  // the key's last segment
  std::string path_;  // the key's full path, for messages
};

class FileStore {
 public:
  // Opens the folder `root`; throws Error(io) when it is not a readable folder.
  explicit FileStore(const std::filesystem::path& root, FileIo& io = system_file_io());
  FileStore(const FileStore&) = delete;
  FileStore& operator=(const FileStore&) = delete;
  ~FileStore();

  const std::filesystem::path& root() const { return root_; }

  // Opens `key`; nullopt when it does not exist (a missing chunk). `o_direct` asks the kernel to
  // bypass the page cache (falls back to buffered where the filesystem refuses it).
  std::optional<StoreFile> open(std::string_view key, bool o_direct = false) const;

  // Reads the whole value of `key`, refusing values larger than `max_size` bytes.
  std::optional<std::vector<std::byte>> read(std::string_view key, std::uint64_t max_size) const;

  bool exists(std::string_view key) const;

  // Throws Error(invalid_argument) naming `key` when the folder `key` exists but resolves outside
  // the root (a link out of it): a group checks a member's folder before opening it as an array
  // or group of its own. A missing folder passes; opening it then reports what is missing.
  void require_beneath(std::string_view key) const;

  // Names of the entries of the folder `key` ("" for the root), sorted; empty if absent.
  std::vector<std::string> list(std::string_view key) const;

  // Sum of the sizes of all regular files below the root, and how many there are.
  struct Usage {
    std::uint64_t files = 0;
    std::uint64_t bytes = 0;
  };
  Usage usage() const;

  // Throws Error(invalid_argument) unless `key` is a relative path made of non-empty segments
  // other than "." and "..", without NUL or backslash.
  static void check_key(std::string_view key);

  // --- Write side (file_store_write.cpp). Keys are checked as for reads, and every folder is
  // opened beneath the root (openat2 RESOLVE_BENEATH): nothing outside the root is written or
  // removed, neither through ".." nor through a link. All calls are safe from several threads
  // and processes at once.

  // Locks `key` for a read-modify-write (see KeyLock), creating its folders beneath the root
  // (durable: each folder created is fsynced into its parent). Blocks while another thread or
  // process holds the key's lock. Throws Error(io) when a folder cannot be created or the lock
  // file cannot be opened, Error(invalid_argument) for a key that leaves the root.
  KeyLock lock(std::string_view key, bool durable = false) const;

  // Replaces the value of `key` atomically (lock, then KeyLock::commit): readers see the old
  // value or the new one. Throws Error(io) naming the file when a write, fsync or rename fails;
  // the old value then stays.
  void set(std::string_view key, std::span<const std::byte> bytes, bool durable = false) const;

  // Removes `key` (under its lock); a key that does not exist is no error.
  void erase(std::string_view key, bool durable = false) const;

  // Removes everything inside the folder `key` ("" for the root: its contents, the root itself
  // stays) or the file `key`. Links are removed, never followed. For overwriting a node.
  void erase_tree(std::string_view key = "") const;

 private:
  std::filesystem::path root_;
  FileIo* io_;
  int root_fd_ = -1;
};

}  // namespace zarrdirect

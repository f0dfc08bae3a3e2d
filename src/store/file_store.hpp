// A Zarr store on a local filesystem: keys are paths relative to the array (or group) folder.
//
// Every key is checked before use and opened with openat2(RESOLVE_BENEATH), so neither a
// hostile key ("../x", "/etc/passwd", "a\0b") nor a symbolic link inside the folder can make
// zarrdirect read outside it.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "store/file_io.hpp"
#include "store/store.hpp"

namespace zarrdirect {

// One open file of the store. Closes on destruction.
class StoreFile final : public StoreObject {
 public:
  // `direct`: the file was opened with O_DIRECT (reads that suit it bypass the page cache).
  StoreFile(FileIo& io, int fd, std::uint64_t size, std::string path, bool direct = false)
      : io_(&io), fd_(fd), size_(size), path_(std::move(path)), direct_(direct) {}
  StoreFile(StoreFile&& other) noexcept;
  StoreFile& operator=(StoreFile&& other) noexcept;
  StoreFile(const StoreFile&) = delete;
  ~StoreFile();

  std::uint64_t size() const override { return size_; }
  const std::string& path() const override { return path_; }
  int fd() const { return fd_; }

  // Reads [offset, offset + buffer.size()). A file that ends before that (shrunk since it was
  // opened, or shorter than an index says) is Error(corrupt_data) naming the file.
  void read_exact(std::uint64_t offset, std::span<std::byte> buffer) const override;
  // Reads the whole file into the front of `buffer`; returns its size. The file must fit.
  std::size_t read_all(std::span<std::byte> buffer) const override;
  const StoreFile* local_file() const override { return this; }

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

// An open folder of a FileStore, shared by the locks of the keys inside it. Closes on destruction.
struct FolderHandle {
  FolderHandle(FileIo& file_io, int folder_fd) : io(&file_io), fd(folder_fd) {}
  FolderHandle(const FolderHandle&) = delete;
  FolderHandle& operator=(const FolderHandle&) = delete;
  ~FolderHandle();
  FileIo* io;
  int fd;
};

// The folders one write has opened (FileStore::lock), so that the chunks of one folder do not
// each create and open every folder on their path again (mkdirat and openat2 per segment). Safe
// from several threads. Holds at most kMaxFolders open folders: past that it starts over (folders
// still used by a lock stay open until that lock is done). Use one per write call: a folder
// removed and made anew meanwhile by someone else would otherwise be missed.
class FolderCache {
 public:
  static constexpr std::size_t kMaxFolders = 128;

 private:
  friend class FileStore;
  std::mutex mutex_;
  std::unordered_map<std::string, std::shared_ptr<const FolderHandle>> folders_;
};

// A lock on one key of a FileStore, for a replacement or a read-modify-write of that key
// (FileStore::lock).
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
// The writer takes the lock for every chunk it stores, chunks it covers whole included: with the
// lock file as the temporary file, two writers of one chunk must not write into it at once, and a
// writer replacing a whole chunk without the lock could be undone by another's read-modify-write
// of that chunk that read the old value before and renamed after it (a lost update). The lock
// costs flock and two stats per chunk, which measured within the noise of creating and writing
// the file itself (64 KiB to 512 KiB values on ext4).
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
  void commit(std::span<const std::byte> bytes, bool durable) {
    write(bytes);
    publish(durable);
  }

  // A new value made piece by piece (a shard: inner chunks as they are encoded, then the index),
  // never held whole in memory: write() puts bytes into the lock file at its position (0 at
  // first), seek() moves that position (the gap reads as zeros until written), and publish()
  // makes what was written the key's value as commit() does. Error(io) naming the file on any
  // failure; the key keeps its old value until publish() succeeds.
  void write(std::span<const std::byte> bytes);
  // Writes `nbytes` of `source` from `offset` (the stored bytes an update keeps) without bringing
  // them into user memory: copy_file_range, or read-and-write where the filesystem lacks it.
  // Error(corrupt_data) naming `source` when it ends before offset + nbytes.
  void copy_from(const StoreFile& source, std::uint64_t offset, std::uint64_t nbytes);
  void seek(std::uint64_t offset);
  void publish(bool durable);

  // Removes the key's value, if any (durable: fsyncs the folder). Releases the lock.
  void erase(bool durable);

 private:
  friend class FileStore;
  KeyLock(FileIo& io, std::shared_ptr<const FolderHandle> folder, int lock_fd, std::string name, std::string path)
      : io_(&io), folder_(std::move(folder)), lock_fd_(lock_fd), name_(std::move(name)), path_(std::move(path)) {}
  void release(bool remove_lock_file);
  bool exchange_with_key(const std::string& lock_name);
  void require_held() const;
  int folder_fd() const { return folder_->fd; }
  std::string lock_path() const;

  FileIo* io_;
  std::shared_ptr<const FolderHandle> folder_;  // the key's folder
  int lock_fd_ = -1;                            // "<name>.__lock", locked
  std::string name_;                            // the key's last segment
  std::string path_;                            // the key's full path, for messages
};

class FileStore final : public Store {
 public:
  // Opens the folder `root`; throws Error(io) when it is not a readable folder, Error(unsupported)
  // naming the scheme when `root` is a URL (reads of URLs go through open_store).
  explicit FileStore(const std::filesystem::path& root, FileIo& io = system_file_io());
  FileStore(const FileStore&) = delete;
  FileStore& operator=(const FileStore&) = delete;
  ~FileStore();

  const std::filesystem::path& root() const { return root_; }
  // The root folder's descriptor, for reads that open keys beneath it themselves (io_uring).
  int root_fd() const { return root_fd_; }
  const std::string& location() const override { return root_.native(); }
  std::unique_ptr<StoreObject> open_object(std::string_view key, bool o_direct = false) const override;

  // Opens `key`; nullopt when it does not exist (a missing chunk). `o_direct` asks the kernel to
  // bypass the page cache (falls back to buffered where the filesystem refuses it).
  std::optional<StoreFile> open(std::string_view key, bool o_direct = false) const;

  // Reads the whole value of `key`, refusing values larger than `max_size` bytes.
  std::optional<std::vector<std::byte>> read(std::string_view key, std::uint64_t max_size) const override;

  bool exists(std::string_view key) const override;

  // Throws Error(invalid_argument) naming `key` when the folder `key` exists but resolves outside
  // the root (a link out of it): a group checks a member's folder before opening it as an array
  // or group of its own. A missing folder passes; opening it then reports what is missing.
  void require_beneath(std::string_view key) const override;

  // Names of the entries of the folder `key` ("" for the root), sorted; empty if absent.
  std::vector<std::string> list(std::string_view key) const override;

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
  // `folders`: the write's cache of open folders (see FolderCache); null opens them anew.
  KeyLock lock(std::string_view key, bool durable = false, FolderCache* folders = nullptr) const;

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

  // The folder `folder` ("" for the root) opened beneath the root, made where missing.
  std::shared_ptr<const FolderHandle> open_folder(const std::string& folder, bool durable, FolderCache* folders) const;
  static void remember(FolderCache* folders, const std::string& folder, const std::shared_ptr<const FolderHandle>& handle);
};

}  // namespace zarrdirect

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

 private:
  std::filesystem::path root_;
  FileIo* io_;
  int root_fd_ = -1;
};

}  // namespace zarrdirect

// Where an array's bytes come from: a folder on a local filesystem (FileStore) or a web server
// (HttpStore). Metadata reading, groups, multiscales and the reader use this interface and do not
// care which; the reader keeps its file fast paths (O_DIRECT, GDS) through StoreObject::local_file.
#pragma once

#include <cstdint>
#include <exception>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "zarrdirect/store_options.hpp"

namespace zarrdirect {

class StoreFile;

// One opened value of a store (a chunk, a shard, a metadata document), whose size is known.
class StoreObject {
 public:
  virtual ~StoreObject() = default;
  virtual std::uint64_t size() const = 0;
  // The file path or URL, for messages.
  virtual const std::string& path() const = 0;
  // Reads [offset, offset + buffer.size()); a value that ends before that is Error(corrupt_data).
  virtual void read_exact(std::uint64_t offset, std::span<std::byte> buffer) const = 0;
  // Reads the whole value into the front of `buffer`; returns its size. The value must fit.
  virtual std::size_t read_all(std::span<std::byte> buffer) const = 0;
  // The local file behind this value, for the paths that need a descriptor (GDS); null otherwise.
  virtual const StoreFile* local_file() const { return nullptr; }
};

// Called once the size of a value is known; returns where its bytes go (at least `size` bytes).
// It may throw (a value too large for what it is): the read then fails with that error.
using DestinationFor = std::function<std::span<std::byte>(std::uint64_t size)>;

// One whole value of a batch read (Store::read_many). The store sets exactly one of `size`,
// `missing` and `error`, or none where an earlier read of the batch failed and it stopped.
struct StoreWholeRead {
  std::string_view key;
  const DestinationFor* destination = nullptr;  // called once the value's size is known
  std::optional<std::uint64_t> size;            // the value's size, its bytes in destination(size)
  bool missing = false;                         // the key does not exist
  std::exception_ptr error;                     // why it failed (naming the file or URL)
};

// One byte range of a value (a shard) of a batch read (Store::read_ranges).
struct StoreRangeRead {
  std::string_view key;
  std::uint64_t offset = 0;
  std::span<std::byte> buffer;  // receives bytes [offset, offset + buffer.size())
};

class Store {
 public:
  virtual ~Store() = default;

  // The folder or URL the store reads, without a trailing slash; `location()/key` names a key.
  virtual const std::string& location() const = 0;
  // Whether reads travel over a network (the reader then runs more requests at once).
  virtual bool remote() const { return false; }

  // Opens `key`: null when it does not exist (a missing chunk). `o_direct` only matters to files.
  virtual std::unique_ptr<StoreObject> open_object(std::string_view key, bool o_direct = false) const = 0;
  // Opens `key` whose size an earlier open_object found (a shard read in two phases): a remote
  // store then asks the server nothing until the bytes are read. Null when it does not exist.
  virtual std::unique_ptr<StoreObject> open_sized(std::string_view key, std::uint64_t /*size*/) const {
    return open_object(key);
  }
  // Reader threads that suit this store when the caller left Settings::threads at 0 (remote
  // stores: requests in flight); 0 for the machine's default.
  virtual unsigned preferred_threads() const { return 0; }
  // Reads the whole value of `key`, refusing values larger than `max_size` bytes; nullopt when
  // it does not exist.
  virtual std::optional<std::vector<std::byte>> read(std::string_view key, std::uint64_t max_size) const = 0;
  // Reads the whole value of `key` into `destination(size)`; returns its size, nullopt when the
  // key does not exist. A remote store writes the response straight into that buffer (one
  // request, no separate size query when the server states the length).
  virtual std::optional<std::uint64_t> read_into(std::string_view key, const DestinationFor& destination) const;

  // Requests a remote store runs at once for one read (0: not remote); the reader shares them
  // among its workers, each running its batches with read_many and read_ranges.
  virtual unsigned request_concurrency() const { return 0; }
  // Reads each value whole into its destination, up to `in_flight` at a time (a remote store:
  // many requests at once on the calling thread; a local one: one after another). Stops at the
  // first failure, which it records in that read (not thrown: the caller names the chunk).
  // `on_ready`, when given, is called with a read's index as soon as it has its size (or is
  // missing), while the others go on arriving (a remote store; a local one after each read).
  // What it throws ends the batch and leaves read_many.
  virtual void read_many(std::span<StoreWholeRead> reads, unsigned in_flight,
                         const std::function<void(std::size_t)>& on_ready = {}) const;
  // Reads every range into its buffer, up to `in_flight` requests at a time. Ranges of one key
  // that follow each other in `reads` (sorted by offset, not overlapping) and lie at most
  // merge_gap() bytes apart share one request (a remote store), its response split back into
  // their buffers. A key that does not exist, or ends before a range, is an Error naming it.
  // `on_ready`, when given, is called with (first, count) as reads [first, first + count) have
  // arrived whole, while the others go on arriving. What it throws leaves read_ranges.
  virtual void read_ranges(std::span<const StoreRangeRead> reads, unsigned in_flight,
                           const std::function<void(std::size_t, std::size_t)>& on_ready = {}) const;
  // The gap between two ranges of one value up to which read_ranges fetches both with one
  // request (0: each range on its own).
  virtual std::uint64_t merge_gap() const { return 0; }

  virtual bool exists(std::string_view key) const = 0;
  // Throws Error(invalid_argument) when `key` is not a valid key or (files) leaves the root.
  virtual void require_beneath(std::string_view key) const = 0;
  // Names of the entries of folder `key` ("" for the root), sorted; empty where the store cannot
  // list (HTTP servers offer no listing).
  virtual std::vector<std::string> list(std::string_view key) const = 0;
};

// True when `location` starts with a URL scheme ("http://", "s3://", ...).
bool is_url(std::string_view location);

// The store for a folder or an http(s) URL, reached with `options` (HTTP headers, token, ...).
// Throws Error(unsupported) naming the scheme for any other URL (s3://, gs://, ...), Error(io)
// when a folder cannot be opened, Error(invalid_argument) for options that do not parse.
std::unique_ptr<Store> open_store(const std::filesystem::path& location, const StoreOptions& options = {});

// Throws Error(unsupported) when `location` is a URL: zarrdirect writes to local folders only.
void require_writable_location(const std::filesystem::path& location);

}  // namespace zarrdirect

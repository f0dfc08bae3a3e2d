// A read-only Zarr store on a web server: keys are paths below a base URL (http:// or https://).
//
// Chunks are fetched with one whole-object GET each (no size query first), shard indexes and
// inner chunks with byte-range GETs after one HEAD for the shard's size. Batches (read_many,
// read_ranges) run their requests at once on the calling thread through one libcurl multi handle
// (http_multi.hpp), up to HttpOptions::concurrency of them; read_ranges merges ranges of one
// shard up to HttpOptions::merge_gap_bytes apart (and kMaxMergedBytes in all) into one request,
// whose response goes straight into the ranges' own buffers. A 404 (or 410) is a
// missing key; other failures are Errors naming the URL (see HttpClient). Listing is not
// possible over HTTP: list() is empty, so a group's members come from consolidated metadata or
// the names asked for. Thread-safe.
#pragma once

#include <algorithm>
#include <memory>
#include <string>

#include "store/http_client.hpp"
#include "store/store.hpp"

namespace zarrdirect {

class HttpStore final : public Store {
 public:
  // The most bytes one merged range request spans: larger runs of ranges are split, so that a
  // batch still spreads over several connections.
  static constexpr std::uint64_t kMaxMergedBytes = std::uint64_t{16} << 20;

  // `base_url`: http(s) URL of the array or group (normalised: no query, no trailing slash).
  // Throws Error(invalid_argument) for a malformed URL, Error(unsupported) for another scheme.
  HttpStore(std::string_view base_url, HttpOptions options);

  const std::string& location() const override { return base_; }
  bool remote() const override { return true; }
  const HttpClient& client() const { return *client_; }

  std::unique_ptr<StoreObject> open_object(std::string_view key, bool o_direct = false) const override;
  std::unique_ptr<StoreObject> open_sized(std::string_view key, std::uint64_t size) const override;
  unsigned request_concurrency() const override { return client_->options().concurrency; }
  // Two requests in flight per reader thread: while some threads decode, others keep transfers going.
  unsigned preferred_threads() const override { return std::max(1u, client_->options().concurrency / 2); }
  void read_many(std::span<StoreWholeRead> reads, unsigned in_flight,
                 const std::function<void(std::size_t)>& on_ready = {}) const override;
  void read_ranges(std::span<const StoreRangeRead> reads, unsigned in_flight,
                   const std::function<void(std::size_t, std::size_t)>& on_ready = {}) const override;
  std::uint64_t merge_gap() const override { return client_->options().merge_gap_bytes; }
  std::optional<std::vector<std::byte>> read(std::string_view key, std::uint64_t max_size) const override;
  std::optional<std::uint64_t> read_into(std::string_view key, const DestinationFor& destination) const override;
  bool exists(std::string_view key) const override;
  void require_beneath(std::string_view key) const override;
  std::vector<std::string> list(std::string_view key) const override;

  // The URL of `key` (checked as FileStore keys are).
  std::string url_of(std::string_view key) const;

 private:
  std::string base_;
  std::shared_ptr<const HttpClient> client_;
};

}  // namespace zarrdirect

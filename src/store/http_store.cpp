#include "store/http_store.hpp"

#include <limits>
#include <vector>

#include <fmt/format.h>

#include "store/byte_ranges.hpp"
#include "store/file_store.hpp"
#include "store/url.hpp"
#include "util/quote.hpp"
#include "zarrdirect/error.hpp"

namespace zarrdirect {
namespace {

// A value on the server whose size a HEAD gave; each read is one range GET into the caller's buffer.
class HttpObject final : public StoreObject {
 public:
  HttpObject(std::shared_ptr<const HttpClient> client, std::string url, std::uint64_t size)
      : client_(std::move(client)), url_(std::move(url)), shown_(printable(url_for_messages(url_))), size_(size) {}

  std::uint64_t size() const override { return size_; }
  const std::string& path() const override { return shown_; }

  void read_exact(std::uint64_t offset, std::span<std::byte> buffer) const override {
    if (offset > size_ || buffer.size() > size_ - offset)
      throw Error(ErrorKind::corrupt_data, fmt::format("{}: expected {} bytes at offset {}, the object is {} bytes",
                                                       shown_, buffer.size(), offset, size_));
    if (!client_->get_range(url_, offset, buffer))
      throw Error(ErrorKind::io, fmt::format("{}: disappeared while being read (HTTP 404)", shown_));
  }

  std::size_t read_all(std::span<std::byte> buffer) const override {
    if (size_ > buffer.size())
      throw Error(ErrorKind::corrupt_data,
                  fmt::format("{}: object is {} bytes, more than the {} it may hold", shown_, size_, buffer.size()));
    read_exact(0, buffer.first(static_cast<std::size_t>(size_)));
    return static_cast<std::size_t>(size_);
  }

 private:
  std::shared_ptr<const HttpClient> client_;
  std::string url_;
  std::string shown_;
  std::uint64_t size_;
};

}  // namespace

HttpStore::HttpStore(std::string_view base_url, HttpOptions options)
    : base_(normalize_base_url(base_url)), client_(std::make_shared<HttpClient>(std::move(options))) {}

std::string HttpStore::url_of(std::string_view key) const {
  FileStore::check_key(key);
  return join_url(base_, key);
}

std::unique_ptr<StoreObject> HttpStore::open_object(std::string_view key, bool) const {
  std::string url = url_of(key);
  auto size = client_->size_of(url);
  if (!size) return nullptr;
  return std::make_unique<HttpObject>(client_, std::move(url), *size);
}

std::unique_ptr<StoreObject> HttpStore::open_sized(std::string_view key, std::uint64_t size) const {
  return std::make_unique<HttpObject>(client_, url_of(key), size);
}

std::optional<std::vector<std::byte>> HttpStore::read(std::string_view key, std::uint64_t max_size) const {
  std::vector<std::byte> bytes;
  auto size = client_->get(
      url_of(key),
      [&](std::uint64_t n) {
        bytes.resize(static_cast<std::size_t>(n));
        return std::span<std::byte>(bytes);
      },
      max_size);
  if (!size) return std::nullopt;
  bytes.resize(static_cast<std::size_t>(*size));
  return bytes;
}

std::optional<std::uint64_t> HttpStore::read_into(std::string_view key, const DestinationFor& destination) const {
  return client_->get(url_of(key), destination, std::numeric_limits<std::uint64_t>::max());
}

void HttpStore::read_many(std::span<StoreWholeRead> reads, unsigned in_flight,
                          const std::function<void(std::size_t)>& on_ready) const {
  std::vector<HttpTransfer> transfers;
  transfers.reserve(reads.size());
  for (std::size_t i = 0; i < reads.size(); ++i) {
    try {
      transfers.push_back(
          HttpTransfer::whole(url_of(reads[i].key), *reads[i].destination, std::numeric_limits<std::uint64_t>::max()));
    } catch (...) {
      reads[i].error = std::current_exception();
      return;
    }
  }
  // Transfer t is read t (a bad key above ended the batch before any request).
  auto record = [&](const HttpTransfer& transfer) -> std::size_t {
    const std::size_t t = static_cast<std::size_t>(&transfer - transfers.data());
    StoreWholeRead& read = reads[t];
    switch (transfer.state()) {
      case HttpTransfer::State::done:
        read.size = transfer.size();
        break;
      case HttpTransfer::State::missing:
        read.missing = true;
        break;
      case HttpTransfer::State::failed:
        read.error = transfer.error();
        break;
      case HttpTransfer::State::waiting:
        break;  // not run: an earlier one failed
    }
    return t;
  };
  const std::function<void(HttpTransfer&)> finished = [&](HttpTransfer& transfer) {
    const std::size_t t = record(transfer);
    if (on_ready) on_ready(t);
  };
  std::vector<HttpTransfer*> running;
  running.reserve(transfers.size());
  for (auto& transfer : transfers) running.push_back(&transfer);
  client_->run(running, in_flight, &finished);
  for (const auto& transfer : transfers) record(transfer);
}

void HttpStore::read_ranges(std::span<const StoreRangeRead> reads, unsigned in_flight,
                            const std::function<void(std::size_t, std::size_t)>& on_ready) const {
  const std::uint64_t gap = merge_gap();
  std::vector<HttpTransfer> transfers;
  std::vector<std::pair<std::size_t, std::size_t>> covers;  // each transfer's reads: [first, end)
  std::size_t i = 0;
  while (i < reads.size()) {
    // A run of ranges of one key, each starting at most `gap` after the one before.
    std::vector<HttpPiece> pieces;
    std::size_t end = i;
    std::uint64_t run_end = 0;
    while (end < reads.size() && reads[end].key == reads[i].key) {
      const StoreRangeRead& next = reads[end];
      if (next.buffer.empty()) {
        ++end;
        continue;
      }
      if (!pieces.empty() && !(joins_run(run_end, next.offset, gap) &&
                               next.offset + next.buffer.size() - pieces.front().offset <= kMaxMergedBytes))
        break;
      pieces.push_back({next.offset, next.buffer});
      run_end = next.offset + next.buffer.size();
      ++end;
    }
    if (!pieces.empty()) {
      transfers.push_back(HttpTransfer::pieces(url_of(reads[i].key), std::move(pieces)));
      covers.emplace_back(i, end);
    } else if (on_ready) {
      on_ready(i, end - i);  // empty ranges only: nothing to fetch
    }
    i = end;
  }
  auto check = [](const HttpTransfer& transfer) {
    if (transfer.state() == HttpTransfer::State::failed) std::rethrow_exception(transfer.error());
    if (transfer.state() == HttpTransfer::State::missing)
      throw Error(ErrorKind::io, fmt::format("{}: disappeared while being read (HTTP 404)", transfer.shown()));
  };
  const std::function<void(HttpTransfer&)> finished = [&](HttpTransfer& transfer) {
    check(transfer);
    const auto [first, end] = covers[static_cast<std::size_t>(&transfer - transfers.data())];
    if (on_ready) on_ready(first, end - first);
  };
  std::vector<HttpTransfer*> running;
  running.reserve(transfers.size());
  for (auto& transfer : transfers) running.push_back(&transfer);
  client_->run(running, in_flight, &finished);
  for (const HttpTransfer& transfer : transfers) check(transfer);
}

bool HttpStore::exists(std::string_view key) const { return client_->size_of(url_of(key)).has_value(); }

void HttpStore::require_beneath(std::string_view key) const { FileStore::check_key(key); }

std::vector<std::string> HttpStore::list(std::string_view key) const {
  if (!key.empty()) FileStore::check_key(key);
  return {};
}

}  // namespace zarrdirect

#include "store/http_store.hpp"

#include <limits>

#include <fmt/format.h>

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

bool HttpStore::exists(std::string_view key) const { return client_->size_of(url_of(key)).has_value(); }

void HttpStore::require_beneath(std::string_view key) const { FileStore::check_key(key); }

std::vector<std::string> HttpStore::list(std::string_view key) const {
  if (!key.empty()) FileStore::check_key(key);
  return {};
}

}  // namespace zarrdirect

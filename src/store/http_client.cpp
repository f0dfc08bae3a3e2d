#include "store/http_client.hpp"

#include <curl/curl.h>

#include "store/http_handle_pool.hpp"
#include "store/http_multi.hpp"
#include "zarrdirect/error.hpp"

namespace zarrdirect {

struct HttpClient::HeaderList {
  curl_slist* list = nullptr;
  ~HeaderList() { curl_slist_free_all(list); }
  void add(const std::string& line) {
    curl_slist* grown = curl_slist_append(list, line.c_str());
    if (!grown) throw Error(ErrorKind::io, "libcurl: out of memory");
    list = grown;
  }
};

HttpClient::HttpClient(HttpOptions options) : options_(std::move(options)), headers_(std::make_unique<HeaderList>()) {
  HttpHandlePool::instance();  // curl_global_init before any request
  for (const auto& line : options_.headers) headers_->add(line);
  // A custom Authorization header is not sent on to another host after a redirect (libcurl).
  if (!options_.bearer_token.empty()) headers_->add("Authorization: Bearer " + options_.bearer_token);
}

HttpClient::~HttpClient() = default;

void HttpClient::run(std::span<HttpTransfer* const> transfers, unsigned in_flight,
                     const std::function<void(HttpTransfer&)>* on_finished) const {
  run_transfers(options_, headers_->list, transfers, in_flight == 0 ? options_.concurrency : in_flight, on_finished);
}

bool HttpClient::run_one(HttpTransfer& transfer) const {
  HttpTransfer* one = &transfer;
  run(std::span<HttpTransfer* const>(&one, 1), 1);
  if (transfer.state() == HttpTransfer::State::failed) std::rethrow_exception(transfer.error());
  return transfer.state() == HttpTransfer::State::done;
}

std::optional<std::uint64_t> HttpClient::size_of(const std::string& url) const {
  HttpTransfer transfer = HttpTransfer::head(url);
  if (!run_one(transfer)) return std::nullopt;
  return transfer.size();
}

std::optional<std::uint64_t> HttpClient::get(const std::string& url, const DestinationFor& destination,
                                             std::uint64_t max_size) const {
  HttpTransfer transfer = HttpTransfer::whole(url, destination, max_size);
  if (!run_one(transfer)) return std::nullopt;
  return transfer.size();
}

bool HttpClient::get_range(const std::string& url, std::uint64_t offset, std::span<std::byte> buffer) const {
  if (buffer.empty()) return true;
  HttpTransfer transfer = HttpTransfer::pieces(url, {HttpPiece{offset, buffer}});
  return run_one(transfer);
}

}  // namespace zarrdirect

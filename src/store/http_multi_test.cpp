// The transfer driver against Debian's nginx on 127.0.0.1 (tests/http_nginx.hpp): a batch of many
// requests of every kind, run at once, each gets its own bytes; a second batch finds its
// connections still open; a batch returns as soon as its last transfer ended; a server that is
// not there fails each request after its retries, bounded in time.
#include "store/http_multi.hpp"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <numeric>

#include <fmt/format.h>

#include "http_nginx.hpp"
#include "store/http_client.hpp"
#include "test_support.hpp"

namespace zarrdirect {
namespace {

class HttpMulti : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!test::NginxServer::find()) return;
    dir_ = std::make_unique<test::TempDir>();
    for (int f = 0; f < 8; ++f) {
      std::vector<std::uint8_t> bytes(std::size_t{100000} + f * 1000);
      for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<std::uint8_t>((i * 7 + f) % 251);
      test::write_bytes(*dir_ / fmt::format("f{}", f), bytes);
      files_.push_back(std::move(bytes));
    }
    server_ = std::make_unique<test::NginxServer>(dir_->path());
  }
  static void TearDownTestSuite() {
    server_.reset();
    dir_.reset();
    files_.clear();
  }
  void SetUp() override {
    if (!server_) GTEST_SKIP() << "nginx not found (Debian nginx-light; scripts/setup.sh installs it)";
  }
  static std::string url(int f) { return fmt::format("{}/f{}", server_->url(), f); }
  static std::unique_ptr<test::TempDir> dir_;
  static std::unique_ptr<test::NginxServer> server_;
  static std::vector<std::vector<std::uint8_t>> files_;
};

std::unique_ptr<test::TempDir> HttpMulti::dir_;
std::unique_ptr<test::NginxServer> HttpMulti::server_;
std::vector<std::vector<std::uint8_t>> HttpMulti::files_;

bool same(std::span<const std::byte> got, const std::vector<std::uint8_t>& file, std::size_t offset) {
  return offset + got.size() <= file.size() && std::memcmp(got.data(), file.data() + offset, got.size()) == 0;
}

TEST_F(HttpMulti, ABatchOfEveryKindOfRequestGivesEachItsOwnBytes) {
  HttpClient client(HttpOptions{});
  // 8 whole GETs, 8 HEADs, 8 x 20 range requests of 3 pieces each, 4 missing objects.
  std::vector<std::vector<std::byte>> wholes(8);
  std::vector<DestinationFor> destinations;
  for (int f = 0; f < 8; ++f)
    destinations.push_back([&wholes, f](std::uint64_t size) {
      wholes[f].resize(size);
      return std::span<std::byte>(wholes[f]);
    });
  std::vector<HttpTransfer> transfers;
  for (int f = 0; f < 8; ++f) transfers.push_back(HttpTransfer::whole(url(f), destinations[f], 1u << 20));
  for (int f = 0; f < 8; ++f) transfers.push_back(HttpTransfer::head(url(f)));
  std::vector<std::vector<std::byte>> pieces(8 * 20 * 3);
  struct Where { int file; std::size_t offset; };
  std::vector<Where> where;
  for (int f = 0; f < 8; ++f)
    for (int r = 0; r < 20; ++r) {
      std::vector<HttpPiece> three;
      const std::size_t base = static_cast<std::size_t>(r) * 4000 + f;
      // The first two touch, the third lies 1567 bytes after the second.
      const std::size_t offsets[3] = {base, base + 100, base + 2000};
      const std::size_t sizes[3] = {100, 333, 1500};
      for (int k = 0; k < 3; ++k) {
        auto& buffer = pieces[where.size()];
        buffer.resize(sizes[k]);
        three.push_back({offsets[k], buffer});
        where.push_back({f, offsets[k]});
      }
      transfers.push_back(HttpTransfer::pieces(url(f), std::move(three)));
    }
  for (int m = 0; m < 4; ++m) transfers.push_back(HttpTransfer::head(fmt::format("{}/none{}", server_->url(), m)));
  std::vector<HttpTransfer*> batch;
  for (auto& t : transfers) batch.push_back(&t);
  client.run(batch, 8);

  for (int f = 0; f < 8; ++f) {
    ASSERT_EQ(transfers[f].state(), HttpTransfer::State::done) << f;
    EXPECT_EQ(transfers[f].size(), files_[f].size());
    EXPECT_TRUE(same(wholes[f], files_[f], 0)) << f;
    ASSERT_EQ(transfers[8 + f].state(), HttpTransfer::State::done);
    EXPECT_EQ(transfers[8 + f].size(), files_[f].size());
  }
  for (std::size_t i = 0; i < where.size(); ++i)
    EXPECT_TRUE(same(pieces[i], files_[where[i].file], where[i].offset)) << "piece " << i;
  for (std::size_t t = 16; t < 16 + 160; ++t) EXPECT_EQ(transfers[t].state(), HttpTransfer::State::done);
  for (std::size_t t = 176; t < transfers.size(); ++t) EXPECT_EQ(transfers[t].state(), HttpTransfer::State::missing);
}

TEST_F(HttpMulti, ALaterBatchFindsItsConnectionsOpen) {
  HttpClient client(HttpOptions{});
  auto batch_of_heads = [&] {
    std::vector<HttpTransfer> transfers;
    for (int i = 0; i < 32; ++i) transfers.push_back(HttpTransfer::head(url(i % 8)));
    std::vector<HttpTransfer*> batch;
    for (auto& t : transfers) batch.push_back(&t);
    client.run(batch, 4);
    for (auto& t : transfers) ASSERT_EQ(t.state(), HttpTransfer::State::done);
  };
  batch_of_heads();
  const std::uint64_t before = http_connections_opened();
  batch_of_heads();
  // A second client (another store, another read) uses the same pool.
  HttpClient other(HttpOptions{});
  EXPECT_TRUE(other.size_of(url(0)).has_value());
  EXPECT_EQ(http_connections_opened(), before);
}

// A batch returns as soon as its last transfer ended: the driver once went on polling with no
// socket left to watch, sleeping its whole poll interval (100 ms) after every batch. 30 batches
// of one small request each take a few milliseconds on loopback; with that sleep, 3 s.
TEST_F(HttpMulti, ABatchReturnsAsSoonAsItsLastTransferEnds) {
  HttpClient client(HttpOptions{});
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 30; ++i) {
    HttpTransfer transfer = HttpTransfer::head(url(i % 8));
    HttpTransfer* batch[] = {&transfer};
    client.run(batch, 1);
    ASSERT_EQ(transfer.state(), HttpTransfer::State::done);
  }
  const auto seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, 1.5);
}

// A port nothing listens on (bound, never listened to, so no one else takes it meanwhile).
class DeadPort {
 public:
  DeadPort() {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address);
    socklen_t length = sizeof address;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &length);
    port_ = ntohs(address.sin_port);
  }
  ~DeadPort() { ::close(fd_); }
  int port() const { return port_; }

 private:
  int fd_ = -1;
  int port_ = 0;
};

TEST(HttpMultiAlone, AServerThatIsNotThereFailsAfterItsRetriesWithoutHanging) {
  DeadPort dead;
  HttpOptions options;
  options.retries = 2;
  options.retry_delay_ms = 20;
  HttpClient client(options);
  std::vector<HttpTransfer> transfers;
  for (int i = 0; i < 5; ++i)
    transfers.push_back(HttpTransfer::head(fmt::format("http://127.0.0.1:{}/x{}", dead.port(), i)));
  std::vector<HttpTransfer*> batch;
  for (auto& t : transfers) batch.push_back(&t);
  const auto start = std::chrono::steady_clock::now();
  client.run(batch, 5);
  const auto seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, 5.0);
  // The first to fail stops the batch; it says how often it tried.
  std::size_t failed = 0;
  for (auto& t : transfers) {
    EXPECT_NE(t.state(), HttpTransfer::State::done);
    if (t.state() != HttpTransfer::State::failed) continue;
    ++failed;
    EXPECT_EQ(t.attempts(), 3u);
    try {
      std::rethrow_exception(t.error());
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("failed after 3 attempts"), std::string::npos) << e.what();
    }
  }
  EXPECT_GE(failed, 1u);
}

}  // namespace
}  // namespace zarrdirect

// The HTTP store's batches against Debian's nginx on 127.0.0.1: read_ranges merges ranges of one
// object up to the merge gap apart into one request (counted in nginx's log) and splits the
// response back; a gap of 0 merges only touching ranges; read_many reads whole objects at once
// and tells the missing ones apart.
#include "store/http_store.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <thread>

#include "http_nginx.hpp"
#include "test_support.hpp"

namespace zarrdirect {
namespace {

class HttpStoreBatches : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!test::NginxServer::find()) GTEST_SKIP() << "nginx not found (Debian nginx-light; scripts/setup.sh installs it)";
    bytes_.resize(std::size_t{3} << 20);
    for (std::size_t i = 0; i < bytes_.size(); ++i) bytes_[i] = static_cast<std::uint8_t>((i * 13) % 253);
    test::write_bytes(dir_ / "shard", bytes_);
    test::write_bytes(dir_ / "small", {1, 2, 3});
    server_ = std::make_unique<test::NginxServer>(dir_.path());
  }

  // GET requests nginx logged for `path` (its log is written as each response ends).
  std::size_t gets_of(const std::string& path) const {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    std::size_t count = 0;
    for (const auto& line : server_->requests()) count += line.starts_with("GET " + path + " ");
    return count;
  }

  // Reads ranges (offset, size) of "shard" with `gap`; checks every byte; returns the GETs.
  std::size_t read(const std::vector<std::pair<std::uint64_t, std::size_t>>& ranges, unsigned gap) {
    HttpOptions options;
    options.merge_gap_bytes = gap;
    HttpStore store(server_->url(), options);
    std::vector<std::vector<std::byte>> buffers;
    std::vector<StoreRangeRead> reads;
    for (auto [offset, size] : ranges) buffers.emplace_back(size);
    for (std::size_t i = 0; i < ranges.size(); ++i) reads.push_back({"shard", ranges[i].first, buffers[i]});
    const std::size_t before = gets_of("/shard");
    store.read_ranges(reads, 4);
    for (std::size_t i = 0; i < ranges.size(); ++i)
      EXPECT_EQ(std::memcmp(buffers[i].data(), bytes_.data() + ranges[i].first, ranges[i].second), 0) << i;
    return gets_of("/shard") - before;
  }

  test::TempDir dir_;
  std::vector<std::uint8_t> bytes_;
  std::unique_ptr<test::NginxServer> server_;
};

TEST_F(HttpStoreBatches, RangesWithinTheGapShareOneRequest) {
  // Four ranges, 1000 bytes and 500 KiB apart: one request with the default gap of 1 MiB.
  const std::vector<std::pair<std::uint64_t, std::size_t>> close = {
      {100, 5000}, {6100, 70000}, {76100 + (500 << 10), 1234}, {1489334, 4096}};
  EXPECT_EQ(read(close, 1u << 20), 1u);
  // A gap of 0: only touching ranges share one.
  EXPECT_EQ(read(close, 0), 4u);
  EXPECT_EQ(read({{0, 10}, {10, 20}, {30, 5}}, 0), 1u);
  // Farther apart than the gap: two requests.
  EXPECT_EQ(read({{0, 10}, {(2u << 20) + 10, 20}}, 1u << 20), 2u);
}

TEST_F(HttpStoreBatches, ReadManyReadsWholeObjectsAndTellsTheMissingApart) {
  HttpStore store(server_->url(), HttpOptions{});
  std::vector<std::vector<std::byte>> buffers(3);
  std::vector<DestinationFor> destinations;
  for (int i = 0; i < 3; ++i)
    destinations.push_back([&buffers, i](std::uint64_t size) {
      buffers[i].resize(size);
      return std::span<std::byte>(buffers[i]);
    });
  std::vector<StoreWholeRead> reads(3);
  reads[0].key = "small";
  reads[1].key = "absent";
  reads[2].key = "shard";
  for (int i = 0; i < 3; ++i) reads[i].destination = &destinations[i];
  store.read_many(reads, 3);
  ASSERT_EQ(reads[0].size, 3u);
  EXPECT_EQ(buffers[0][2], std::byte{3});
  EXPECT_TRUE(reads[1].missing);
  EXPECT_FALSE(reads[1].size);
  ASSERT_EQ(reads[2].size, bytes_.size());
  EXPECT_EQ(std::memcmp(buffers[2].data(), bytes_.data(), bytes_.size()), 0);
  for (const auto& r : reads) EXPECT_FALSE(r.error);
}

TEST_F(HttpStoreBatches, ARangeOfAMissingObjectNamesIt) {
  HttpStore store(server_->url(), HttpOptions{});
  std::vector<std::byte> buffer(10);
  std::vector<StoreRangeRead> reads = {{"absent", 0, buffer}};
  try {
    store.read_ranges(reads, 1);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/absent"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace zarrdirect

// Reading over HTTP from Debian's nginx on 127.0.0.1 (tests/http_nginx.hpp): every conformance
// case opened by URL reads the same bytes as from its folder, whole and in a region; the CLI takes
// URLs; a region of a sharded array asks for the shard's index and inner chunks only.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <memory>

#include <fmt/format.h>

#include "conformance_cases.hpp"
#include "http_nginx.hpp"
#include "test_support.hpp"
#include "zarrdirect/array.hpp"
#include "zarrdirect/error.hpp"
#include "zarrdirect/group.hpp"

namespace zarrdirect {
namespace {

namespace fs = std::filesystem;

class HttpNginx : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (test::NginxServer::find()) server_ = std::make_unique<test::NginxServer>(test::conformance_dir());
  }
  static void TearDownTestSuite() { server_.reset(); }
  void SetUp() override {
    if (!server_) GTEST_SKIP() << "nginx not found (Debian nginx-light; scripts/setup.sh installs it)";
  }
  static std::string url_of(const fs::path& path) {
    return server_->url() + "/" + fs::relative(path, test::conformance_dir()).generic_string();
  }
  static std::unique_ptr<test::NginxServer> server_;
};

std::unique_ptr<test::NginxServer> HttpNginx::server_;

bool same_bytes(const NDArray& a, const NDArray& b) {
  return a.shape() == b.shape() && a.nbytes() == b.nbytes() && std::memcmp(a.data(), b.data(), a.nbytes()) == 0;
}

TEST_F(HttpNginx, EveryConformanceCaseReadsTheSameAsFromItsFolder) {
  std::size_t compared = 0;
  for (const auto& c : test::conformance_cases()) {
    SCOPED_TRACE(c.name);
    const std::string url = url_of(c.array);
    if (test::expected_refusal(c.listed_name)) {
      EXPECT_THROW(Array::open(url).read(), Error);
      continue;
    }
    Array local = Array::open(c.array);
    Array remote = Array::open(url);
    ASSERT_EQ(remote.metadata().shape, local.metadata().shape);
    EXPECT_TRUE(same_bytes(remote.read(), local.read()));
    Region middle;
    for (auto extent : local.metadata().shape) middle.push_back({extent / 4, extent - extent / 4});
    EXPECT_TRUE(same_bytes(remote.read(middle), local.read(middle)));
    ++compared;
  }
  EXPECT_GT(compared, 20u);
}

TEST_F(HttpNginx, MissingMetadataIsNoArrayAndAMissingChunkIsFill) {
  try {
    Array::open(server_->url() + "/no/such/array");
    FAIL() << "opened";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("not a Zarr array"), std::string::npos) << e.what();
  }
}

TEST_F(HttpNginx, TheCliReadsUrls) {
  const auto cases = test::conformance_cases();
  const auto& c = cases.front();
  test::TempDir dir;
  auto info = test::run_command(fmt::format("'{}' info '{}'", test::cli_path(), url_of(c.array)));
  EXPECT_EQ(info.exit_code, 0) << info.output;
  auto read = test::run_command(
      fmt::format("'{}' read -q '{}' -o '{}'", test::cli_path(), url_of(c.array), (dir / "out.npy").string()));
  EXPECT_EQ(read.exit_code, 0) << read.output;
  EXPECT_TRUE(fs::exists(dir / "out.npy"));
  auto s3 = test::run_command(fmt::format("'{}' info s3://bucket/a.zarr", test::cli_path()));
  EXPECT_NE(s3.exit_code, 0);
  EXPECT_NE(s3.output.find("\"s3\""), std::string::npos) << s3.output;
}

TEST_F(HttpNginx, HeadersFromStoreOptionsAreSent) {
  const auto cases = test::conformance_cases();
  const auto& c = cases.front();
  const std::string url = server_->url() + "/private/" + fs::relative(c.array, test::conformance_dir()).generic_string();
  try {
    Array::open(url);
    FAIL() << "opened without the header";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("403"), std::string::npos) << e.what();
  }
  StoreOptions options;
  options.http_headers = {"X-Zarrdirect-Key: k1"};
  EXPECT_TRUE(same_bytes(Array::open(url, options).read(), Array::open(c.array).read()));
}

TEST_F(HttpNginx, TheCliSendsHeaderFlags) {
  const auto cases = test::conformance_cases();
  const auto& c = cases.front();
  const std::string url = server_->url() + "/private/" + fs::relative(c.array, test::conformance_dir()).generic_string();
  auto refused = test::run_command(fmt::format("'{}' info '{}'", test::cli_path(), url));
  EXPECT_EQ(refused.exit_code, 1) << refused.output;
  auto before = test::run_command(fmt::format("'{}' --header 'X-Zarrdirect-Key: k1' info '{}'", test::cli_path(), url));
  EXPECT_EQ(before.exit_code, 0) << before.output;
  auto after = test::run_command(fmt::format("'{}' info '{}' --header 'X-Zarrdirect-Key: k1'", test::cli_path(), url));
  EXPECT_EQ(after.exit_code, 0) << after.output;
  auto malformed = test::run_command(fmt::format("'{}' info '{}' --header 'no-colon-k1secret'", test::cli_path(), url));
  EXPECT_NE(malformed.exit_code, 0);
  EXPECT_EQ(malformed.output.find("k1secret"), std::string::npos) << malformed.output;
}

TEST(HttpNginxSharded, ARegionAsksForTheIndexAndTheInnerChunksItNeeds) {
  if (!test::NginxServer::find()) GTEST_SKIP() << "nginx not found (Debian nginx-light)";
  // One sharded case of the corpus: the region of its first inner chunk only.
  for (const auto& c : test::conformance_cases()) {
    if (c.name.find("sharded") == std::string::npos || test::expected_refusal(c.listed_name)) continue;
    Array local = Array::open(c.array);
    test::NginxServer server(c.array);
    Array remote = Array::open(server.url());
    Region first;
    for (std::size_t d = 0; d < local.metadata().shape.size(); ++d) first.push_back({0, 1});
    EXPECT_TRUE(same_bytes(remote.read(first), local.read(first))) << c.name;
    const auto requests = server.requests();
    // HEAD for the shard's size, its index, the one inner chunk: never more, never the whole shard.
    const auto shard_requests = std::count_if(requests.begin(), requests.end(),
                                              [](const std::string& line) { return line.find("/c/") != std::string::npos; });
    EXPECT_LE(shard_requests, 3) << c.name << ": " << fmt::format("{}", fmt::join(requests, "; "));
    return;
  }
  FAIL() << "no sharded case in the corpus";
}

}  // namespace
}  // namespace zarrdirect

#include "store/http_options.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "zarrdirect/error.hpp"

namespace zarrdirect {
namespace {

// Sets an environment variable for one test, restoring it after.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    ::setenv(name, value, 1);
  }
  ~ScopedEnv() {
    if (old_) ::setenv(name_, old_->c_str(), 1);
    else ::unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

TEST(HttpOptions, HeaderLinesAreParsedAndChecked) {
  auto headers = parse_header_lines("X-A: 1\n\nX-B:two words\r\n", "VAR");
  ASSERT_EQ(headers.size(), 2u);
  EXPECT_EQ(headers[0], "X-A: 1");
  EXPECT_EQ(headers[1], "X-B:two words");
  for (const char* bad : {"no colon here zq9", ": no name zq9", "Bad Name: zq9", "X: a\x01zq9"}) {
    try {
      parse_header_lines(bad, "VAR");
      ADD_FAILURE() << "accepted: " << bad;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::invalid_argument);
      EXPECT_EQ(std::string(e.what()).find("zq9"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("VAR"), std::string::npos) << e.what();
    }
  }
}

TEST(HttpOptions, EnvironmentOverridesDefaults) {
  ScopedEnv concurrency("ZARRDIRECT_HTTP_CONCURRENCY", "7");
  ScopedEnv retries("ZARRDIRECT_HTTP_RETRIES", "0");
  ScopedEnv token("ZARRDIRECT_HTTP_BEARER_TOKEN", "abc");
  ScopedEnv gap("ZARRDIRECT_HTTP_MERGE_GAP_BYTES", "0");
  auto options = HttpOptions::from_environment();
  EXPECT_EQ(options.merge_gap_bytes, 0u);
  EXPECT_EQ(options.concurrency, 7u);
  EXPECT_EQ(options.retries, 0u);
  EXPECT_EQ(options.bearer_token, "abc");
  EXPECT_EQ(options.max_redirects, HttpOptions{}.max_redirects);
}

TEST(HttpOptions, BadNumbersAndTokensAreRefusedWithoutShowingThem) {
  {
    ScopedEnv concurrency("ZARRDIRECT_HTTP_CONCURRENCY", "0");
    EXPECT_THROW(HttpOptions::from_environment(), Error);
  }
  {
    ScopedEnv retries("ZARRDIRECT_HTTP_RETRIES", "many");
    EXPECT_THROW(HttpOptions::from_environment(), Error);
  }
  {
    ScopedEnv gap("ZARRDIRECT_HTTP_MERGE_GAP_BYTES", "2147483648");  // past 1 GiB
    EXPECT_THROW(HttpOptions::from_environment(), Error);
  }
  ScopedEnv token("ZARRDIRECT_HTTP_BEARER_TOKEN", "sec ret");
  try {
    HttpOptions::from_environment();
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).find("sec ret"), std::string::npos) << e.what();
  }
}

TEST(HttpOptions, ExplicitOptionsTakeThePlaceOfTheEnvironment) {
  ScopedEnv concurrency("ZARRDIRECT_HTTP_CONCURRENCY", "7");
  ScopedEnv token("ZARRDIRECT_HTTP_BEARER_TOKEN", "from-env");
  ScopedEnv headers("ZARRDIRECT_HTTP_HEADERS", "X-Kept: 1\nx-replaced: old");
  StoreOptions given;
  given.http_headers = {"X-Replaced: new", "X-Added: 2"};
  given.http_bearer_token = "given";
  given.http_retries = 0;
  auto options = HttpOptions::resolve(given);
  EXPECT_EQ(options.concurrency, 7u);  // not given: the environment's
  EXPECT_EQ(options.retries, 0u);
  EXPECT_EQ(options.bearer_token, "given");
  // Header names compare without case: the environment's x-replaced gives way to X-Replaced.
  EXPECT_EQ(options.headers, (std::vector<std::string>{"X-Kept: 1", "X-Replaced: new", "X-Added: 2"}));
  EXPECT_EQ(HttpOptions::resolve(StoreOptions{}).bearer_token, "from-env");
}

TEST(HttpOptions, BadExplicitOptionsAreRefusedNamingTheFieldNotTheText) {
  auto refused = [](const StoreOptions& given, const std::string& field) {
    try {
      HttpOptions::resolve(given);
      ADD_FAILURE() << "accepted " << field;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::invalid_argument);
      EXPECT_NE(std::string(e.what()).find(field), std::string::npos) << e.what();
      EXPECT_EQ(std::string(e.what()).find("zq9"), std::string::npos) << e.what();
    }
  };
  StoreOptions given;
  given.http_headers = {"X-Fine: 1", "no colon zq9"};
  refused(given, "http_headers[1]");
  given.http_headers = {"X-A: 1\r\nX-Smuggled: zq9"};  // two headers in one entry
  refused(given, "http_headers[0]");
  given.http_headers = {""};
  refused(given, "http_headers[0]");
  given = {};
  given.http_bearer_token = "has space zq9";
  refused(given, "http_bearer_token");
  given = {};
  given.http_concurrency = 5000;
  refused(given, "http_concurrency");
  given = {};
  given.http_retries = 101;
  refused(given, "http_retries");
}

TEST(HttpOptions, HostileHeaderLinesAreRefusedWithoutShowingThem) {
  using namespace std::string_literals;
  // A NUL inside a value, a name outside ASCII, a header the client frames requests with, a name
  // given twice (without case): each refused naming the variable and line, never the text.
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"X-A: a\0zq9"s, "line 1"},
      {"X-Ok: 1\nX\xc3\xa9: zq9", "line 2"},
      {"Range: bytes=0-1zq9", "sets range"},
      {"content-length: 5zq9", "sets content-length"},
      {"Transfer-Encoding: chunkedzq9", "sets transfer-encoding"},
      {"Authorization: Bearer a\nauthorization: Bearer zq9", "line 2 repeats the name"},
      {"X-A: 1\r\nX-B: 2\r\nx-a: zq9", "line 3 repeats the name"},
  };
  for (const auto& [text, words] : bad) {
    try {
      parse_header_lines(text, "VAR");
      ADD_FAILURE() << "accepted: " << text;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::invalid_argument);
      EXPECT_EQ(std::string(e.what()).find("zq9"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("VAR"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  }
  // A very long value is only text: kept whole.
  const std::string long_value = "X-Long: " + std::string(std::size_t{1} << 20, 'v');
  EXPECT_EQ(parse_header_lines(long_value, "VAR"), std::vector<std::string>{long_value});
}

TEST(HttpOptions, HostileExplicitOptionsAreRefusedNamingTheField) {
  using namespace std::string_literals;
  auto refused = [](const StoreOptions& given, const std::string& words) {
    try {
      HttpOptions::resolve(given);
      ADD_FAILURE() << "accepted " << words;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::invalid_argument);
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
      EXPECT_EQ(std::string(e.what()).find("zq9"), std::string::npos) << e.what();
    }
  };
  StoreOptions given;
  given.http_headers = {"X-A: a\0zq9"s};
  refused(given, "http_headers[0]");
  given.http_headers = {"X-A: 1\nX-B: zq9"};  // a bare LF smuggling a second header
  refused(given, "http_headers[0]");
  given.http_headers = {"X-A: 1", "x-a: zq9"};
  refused(given, "http_headers[1] repeats the name of http_headers[0]");
  given.http_headers = {"Range: bytes=5-zq9"};
  refused(given, "sets range");
  for (std::string token : {"a\rzq9"s, "a\nzq9"s, "a\0zq9"s, "a\x7fzq9"s}) {
    given = {};
    given.http_bearer_token = token;
    refused(given, "http_bearer_token");
  }
  given = {};
  given.http_bearer_token = "t";
  given.http_headers = {"authorization: Basic zq9"};
  refused(given, "sets Authorization and StoreOptions::http_bearer_token sets it too");
}

// A token and an Authorization header take each other's place across the environment and the
// explicit options, so that one request never carries two Authorization lines.
TEST(HttpOptions, TokenAndAuthorizationHeaderReplaceEachOther) {
  {
    ScopedEnv token("ZARRDIRECT_HTTP_BEARER_TOKEN", "from-env");
    StoreOptions given;
    given.http_headers = {"Authorization: Basic abc"};
    auto options = HttpOptions::resolve(given);
    EXPECT_EQ(options.bearer_token, "");
    EXPECT_EQ(options.headers, std::vector<std::string>{"Authorization: Basic abc"});
  }
  {
    ScopedEnv headers("ZARRDIRECT_HTTP_HEADERS", "Authorization: Basic abc\nX-Kept: 1");
    StoreOptions given;
    given.http_bearer_token = "mine";
    auto options = HttpOptions::resolve(given);
    EXPECT_EQ(options.bearer_token, "mine");
    EXPECT_EQ(options.headers, std::vector<std::string>{"X-Kept: 1"});
    ScopedEnv token("ZARRDIRECT_HTTP_BEARER_TOKEN", "from-env");
    try {
      HttpOptions::from_environment();
      ADD_FAILURE() << "two Authorization sources accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("ZARRDIRECT_HTTP_BEARER_TOKEN sets it too"), std::string::npos) << e.what();
      EXPECT_EQ(std::string(e.what()).find("abc"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace zarrdirect

#include "store/url.hpp"

#include <gtest/gtest.h>

#include "store/store.hpp"
#include "zarrdirect/error.hpp"

namespace zarrdirect {
namespace {

ErrorKind kind_of(std::string_view url) {
  try {
    normalize_base_url(url);
  } catch (const Error& e) {
    return e.kind();
  }
  ADD_FAILURE() << "accepted: " << url;
  return ErrorKind::cancelled;
}

TEST(Url, SchemesAreRecognisedAndLowerCased) {
  EXPECT_EQ(url_scheme("http://a/b"), "http");
  EXPECT_EQ(url_scheme("HTTPS://a"), "https");
  EXPECT_EQ(url_scheme("s3://bucket/key"), "s3");
  EXPECT_EQ(url_scheme("git+ssh://x"), "git+ssh");
  EXPECT_FALSE(url_scheme("/data/a.zarr"));
  EXPECT_FALSE(url_scheme("relative/a.zarr"));
  EXPECT_FALSE(url_scheme("://nothing"));
  EXPECT_FALSE(url_scheme("1http://x"));
  EXPECT_FALSE(url_scheme("we ird://x"));
  EXPECT_TRUE(is_url("gs://b/a"));
  EXPECT_FALSE(is_url("C:/not/a/url"));
}

TEST(Url, BaseUrlsLoseTrailingSlashesQueriesAndFragments) {
  EXPECT_EQ(normalize_base_url("http://host/a.zarr/"), "http://host/a.zarr");
  EXPECT_EQ(normalize_base_url("https://host:8443/a.zarr//"), "https://host:8443/a.zarr");
  EXPECT_EQ(normalize_base_url("http://host/a.zarr?x=1#frag"), "http://host/a.zarr");
  EXPECT_EQ(normalize_base_url("http://host"), "http://host");
  EXPECT_EQ(normalize_base_url("http://host/"), "http://host");
}

TEST(Url, BadOrForeignUrlsAreRefusedWithTheirKind) {
  EXPECT_EQ(kind_of("s3://bucket/a.zarr"), ErrorKind::unsupported);
  EXPECT_EQ(kind_of("ftp://host/a.zarr"), ErrorKind::unsupported);
  EXPECT_EQ(kind_of("http:///path-only"), ErrorKind::invalid_argument);
  EXPECT_EQ(kind_of("http://host/a b"), ErrorKind::invalid_argument);
  EXPECT_EQ(kind_of("http://host/a\nb"), ErrorKind::invalid_argument);
  EXPECT_EQ(kind_of("https://user:pw9x@host/a.zarr"), ErrorKind::invalid_argument);
  try {
    normalize_base_url("https://user:pw9x@host/a.zarr");
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).find("pw9x"), std::string::npos) << e.what();
  }
}

TEST(Url, UnsupportedSchemesAreNamedByOpenStore) {
  try {
    open_store("s3://bucket/image.zarr");
    FAIL() << "s3 accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::unsupported);
    EXPECT_NE(std::string(e.what()).find("\"s3\""), std::string::npos) << e.what();
  }
}

TEST(Url, WritesToUrlsAreUnsupported) {
  EXPECT_NO_THROW(require_writable_location("/tmp/a.zarr"));
  try {
    require_writable_location("https://user:pw@host/a.zarr");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::unsupported);
    EXPECT_EQ(std::string(e.what()).find("pw"), std::string::npos) << e.what();
  }
}

TEST(Url, KeysArePercentEncodedExceptSlashes) {
  EXPECT_EQ(percent_encode_key("c/0/1"), "c/0/1");
  EXPECT_EQ(percent_encode_key("0.1.2"), "0.1.2");
  EXPECT_EQ(percent_encode_key("level 0/x#y?z%"), "level%200/x%23y%3Fz%25");
  EXPECT_EQ(percent_encode_key("\xc3\xa9"), "%C3%A9");
}

TEST(Url, JoiningAddsOneSlash) {
  EXPECT_EQ(join_url("http://h/a.zarr", "zarr.json"), "http://h/a.zarr/zarr.json");
  EXPECT_EQ(join_url("http://h/a.zarr/", "c/0/0"), "http://h/a.zarr/c/0/0");
  EXPECT_EQ(join_url("http://h/a.zarr", ""), "http://h/a.zarr");
}

TEST(Url, CredentialsNeverReachMessages) {
  EXPECT_EQ(url_for_messages("https://user:secret@host/a.zarr"), "https://host/a.zarr");
  EXPECT_EQ(url_for_messages("http://host/a@b"), "http://host/a@b");
  EXPECT_EQ(url_for_messages("/local/path"), "/local/path");
}

}  // namespace
}  // namespace zarrdirect

#include "store/http_response.hpp"

#include <gtest/gtest.h>

namespace zarrdirect {
namespace {

TEST(HttpResponse, StatusesAreClassified) {
  EXPECT_EQ(classify_status(200), HttpOutcome::ok);
  EXPECT_EQ(classify_status(206), HttpOutcome::ok);
  EXPECT_EQ(classify_status(404), HttpOutcome::missing);
  EXPECT_EQ(classify_status(410), HttpOutcome::missing);
  EXPECT_EQ(classify_status(401), HttpOutcome::refused);
  EXPECT_EQ(classify_status(403), HttpOutcome::refused);
  EXPECT_EQ(classify_status(400), HttpOutcome::client_error);
  EXPECT_EQ(classify_status(416), HttpOutcome::client_error);
  EXPECT_EQ(classify_status(302), HttpOutcome::client_error);  // a redirect left unfollowed
  EXPECT_EQ(classify_status(408), HttpOutcome::retry);
  EXPECT_EQ(classify_status(429), HttpOutcome::retry);
  EXPECT_EQ(classify_status(500), HttpOutcome::retry);
  EXPECT_EQ(classify_status(503), HttpOutcome::retry);
  EXPECT_EQ(classify_status(0), HttpOutcome::client_error);
}

TEST(HttpResponse, StatusLines) {
  EXPECT_EQ(parse_status_line("HTTP/1.1 206 Partial Content\r\n"), 206);
  EXPECT_EQ(parse_status_line("HTTP/2 200\r\n"), 200);
  EXPECT_EQ(parse_status_line("HTTP/1.0 404\r\n"), 404);
  EXPECT_FALSE(parse_status_line("Content-Length: 5\r\n"));
  EXPECT_FALSE(parse_status_line("HTTP/1.1 2x6 Bad\r\n"));
  EXPECT_FALSE(parse_status_line("HTTP/1.1 2000 Bad\r\n"));
  EXPECT_FALSE(parse_status_line("HTTP/1.1"));
}

TEST(HttpResponse, HeaderValuesMatchNamesWithoutCase) {
  EXPECT_EQ(header_value("content-length:  42 \r\n", "Content-Length"), "42");
  EXPECT_EQ(header_value("Content-Range: bytes 0-1/2\r\n", "Content-Range"), "bytes 0-1/2");
  EXPECT_FALSE(header_value("Content-Length-X: 1\r\n", "Content-Length"));
  EXPECT_FALSE(header_value("X: Content-Length: 1\r\n", "Content-Length"));
}

TEST(HttpResponse, ContentLengths) {
  EXPECT_EQ(parse_content_length("0"), 0u);
  EXPECT_EQ(parse_content_length(" 1048576\r\n"), 1048576u);
  EXPECT_FALSE(parse_content_length(""));
  EXPECT_FALSE(parse_content_length("-1"));
  EXPECT_FALSE(parse_content_length("12a"));
  EXPECT_FALSE(parse_content_length("99999999999999999999999"));
}

TEST(HttpResponse, ContentRanges) {
  auto range = parse_content_range("bytes 100-199/1000");
  ASSERT_TRUE(range);
  EXPECT_EQ(range->first, 100u);
  EXPECT_EQ(range->last, 199u);
  EXPECT_EQ(range->total, 1000u);
  range = parse_content_range("bytes 0-0/*");
  ASSERT_TRUE(range);
  EXPECT_FALSE(range->total);
  EXPECT_FALSE(parse_content_range("bytes 5-4/10"));    // backwards
  EXPECT_FALSE(parse_content_range("bytes 0-10/10"));   // past the end
  EXPECT_FALSE(parse_content_range("bytes */10"));      // an unsatisfied range
  EXPECT_FALSE(parse_content_range("items 0-1/2"));
  EXPECT_FALSE(parse_content_range("bytes 0-1"));
}

}  // namespace
}  // namespace zarrdirect

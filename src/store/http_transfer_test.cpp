// The request checks of HttpTransfer, fed header lines and body bytes by hand (no network): the
// split of a merged range response into its pieces, servers that ignore Range, wrong lengths and
// ranges, and what each status and libcurl failure leads to.
#include "store/http_transfer.hpp"

#include <curl/curl.h>
#include <gtest/gtest.h>

#include <numeric>
#include <string>
#include <vector>

#include "zarrdirect/error.hpp"

namespace zarrdirect {
namespace {

constexpr unsigned kRetries = 2;

// An object of 100 bytes 0, 1, ..., 99.
std::string object_bytes() {
  std::string bytes(100, '\0');
  std::iota(bytes.begin(), bytes.end(), '\0');
  return bytes;
}

HttpTransfer::Next finish(HttpTransfer& transfer, long status, int code = CURLE_OK) {
  return transfer.finish_attempt(code, status, "libcurl says no", kRetries, 8, 10, 30);
}

// Feeds one response: status line, headers, then the body in pieces of `step` bytes (stops when
// the transfer cuts it).
void respond(HttpTransfer& transfer, long status, const std::vector<std::string>& headers, std::string_view body,
             std::size_t step = 7) {
  transfer.begin_attempt();
  transfer.on_header_line("HTTP/1.1 " + std::to_string(status) + " X\r\n");
  for (const auto& line : headers) transfer.on_header_line(line + "\r\n");
  for (std::size_t at = 0; at < body.size(); at += step) {
    const std::string_view part = body.substr(at, step);
    if (!transfer.on_body(part.data(), part.size())) return;
  }
}

std::string text(const std::vector<std::byte>& bytes) {
  return std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

std::string error_of(const HttpTransfer& transfer) {
  EXPECT_EQ(transfer.state(), HttpTransfer::State::failed);
  try {
    std::rethrow_exception(transfer.error());
  } catch (const Error& e) {
    return e.what();
  }
  return {};
}

struct ThreePieces {
  std::vector<std::byte> a = std::vector<std::byte>(5), b = std::vector<std::byte>(3), c = std::vector<std::byte>(10);
  // Bytes [10, 15), [15, 18) and [40, 50): two touching, then a gap of 22 bytes.
  HttpTransfer transfer() {
    return HttpTransfer::pieces("http://h/x", {{10, a}, {15, b}, {40, c}});
  }
};

TEST(HttpTransfer, AMergedRangeIsSplitIntoItsPiecesAndTheGapDropped) {
  const std::string object = object_bytes();
  ThreePieces p;
  HttpTransfer transfer = p.transfer();
  EXPECT_EQ(transfer.range_text(), "10-49");
  respond(transfer, 206, {"Content-Range: bytes 10-49/100", "Content-Length: 40"}, object.substr(10, 40), 6);
  EXPECT_EQ(finish(transfer, 206), HttpTransfer::Next::finished);
  EXPECT_EQ(transfer.state(), HttpTransfer::State::done);
  EXPECT_EQ(transfer.size(), 18u);
  EXPECT_EQ(text(p.a), object.substr(10, 5));
  EXPECT_EQ(text(p.b), object.substr(15, 3));
  EXPECT_EQ(text(p.c), object.substr(40, 10));
}

TEST(HttpTransfer, AServerIgnoringRangeIsReadUpToTheLastPieceAndCut) {
  const std::string object = object_bytes();
  ThreePieces p;
  HttpTransfer transfer = p.transfer();
  respond(transfer, 200, {"Content-Length: 100"}, object, 9);
  // The body was cut after byte 50 on purpose: libcurl reports a write error, which is success.
  EXPECT_EQ(finish(transfer, 200, CURLE_WRITE_ERROR), HttpTransfer::Next::finished);
  EXPECT_EQ(transfer.state(), HttpTransfer::State::done);
  EXPECT_EQ(text(p.a), object.substr(10, 5));
  EXPECT_EQ(text(p.c), object.substr(40, 10));
}

TEST(HttpTransfer, AWholeObjectSmallerThanTheRangeIsCorrupt) {
  ThreePieces p;
  HttpTransfer transfer = p.transfer();
  respond(transfer, 200, {"Content-Length: 45"}, object_bytes().substr(0, 45));
  finish(transfer, 200);
  EXPECT_NE(error_of(transfer).find("the object ends after 45"), std::string::npos) << error_of(transfer);
}

TEST(HttpTransfer, A206FromTheWrongOffsetOrTooLongIsAnError) {
  const std::string object = object_bytes();
  {
    ThreePieces p;
    HttpTransfer transfer = p.transfer();
    respond(transfer, 206, {"Content-Range: bytes 11-50/100"}, object.substr(11, 40));
    finish(transfer, 206);
    EXPECT_NE(error_of(transfer).find("sent bytes from 11"), std::string::npos) << error_of(transfer);
    EXPECT_NE(error_of(transfer).find("http://h/x"), std::string::npos);
  }
  {
    ThreePieces p;
    HttpTransfer transfer = p.transfer();
    respond(transfer, 206, {"Content-Range: bytes 10-59/100"}, object.substr(10, 50));
    finish(transfer, 206);
    EXPECT_NE(error_of(transfer).find("longer than the 40 bytes"), std::string::npos) << error_of(transfer);
  }
  {
    ThreePieces p;
    HttpTransfer transfer = p.transfer();
    respond(transfer, 206, {}, object.substr(10, 40));
    finish(transfer, 206);
    EXPECT_NE(error_of(transfer).find("no valid Content-Range"), std::string::npos) << error_of(transfer);
  }
}

TEST(HttpTransfer, AShortBodyIsRetriedThenFailsNamingTheAttempts) {
  const std::string object = object_bytes();
  ThreePieces p;
  HttpTransfer transfer = p.transfer();
  for (unsigned attempt = 1; attempt <= kRetries + 1; ++attempt) {
    respond(transfer, 206, {"Content-Range: bytes 10-49/100"}, object.substr(10, 20));
    const auto next = finish(transfer, 206);
    if (attempt <= kRetries) {
      EXPECT_EQ(next, HttpTransfer::Next::retry);
      EXPECT_EQ(transfer.state(), HttpTransfer::State::waiting);
    }
  }
  const std::string message = error_of(transfer);
  EXPECT_NE(message.find("failed after 3 attempts"), std::string::npos) << message;
  EXPECT_NE(message.find("ended after 8 of 18 bytes"), std::string::npos) << message;
}

TEST(HttpTransfer, AWholeGetGoesStraightIntoItsDestination) {
  const std::string object = object_bytes();
  std::vector<std::byte> buffer;
  std::uint64_t asked = 0;
  DestinationFor destination = [&](std::uint64_t size) {
    asked = size;
    buffer.resize(size);
    return std::span<std::byte>(buffer);
  };
  HttpTransfer transfer = HttpTransfer::whole("http://h/c/0", destination, 1000);
  respond(transfer, 200, {"Content-Length: 100"}, object);
  EXPECT_EQ(finish(transfer, 200), HttpTransfer::Next::finished);
  EXPECT_EQ(asked, 100u);
  EXPECT_EQ(transfer.size(), 100u);
  EXPECT_EQ(text(buffer), object);

  // Without a Content-Length (chunked): collected first, then copied.
  HttpTransfer chunked = HttpTransfer::whole("http://h/c/0", destination, 1000);
  respond(chunked, 200, {}, object.substr(0, 30));
  finish(chunked, 200);
  EXPECT_EQ(chunked.size(), 30u);
  EXPECT_EQ(text(buffer), object.substr(0, 30));

  // Larger than it may be: refused before anything is allocated.
  asked = 0;
  HttpTransfer large = HttpTransfer::whole("http://h/c/0", destination, 50);
  respond(large, 200, {"Content-Length: 100"}, object);
  finish(large, 200);
  EXPECT_EQ(asked, 0u);
  EXPECT_NE(error_of(large).find("more than the 50"), std::string::npos);

  // A body longer than its Content-Length.
  HttpTransfer longer = HttpTransfer::whole("http://h/c/0", destination, 1000);
  respond(longer, 200, {"Content-Length: 10"}, object.substr(0, 20));
  finish(longer, 200);
  EXPECT_NE(error_of(longer).find("longer than the 10 bytes"), std::string::npos) << error_of(longer);
}

TEST(HttpTransfer, StatusesAndFailuresLeadWhereTheySay) {
  auto ended = [](long status, int code) {
    HttpTransfer transfer = HttpTransfer::head("http://user:pw@h/a");
    transfer.begin_attempt();
    transfer.on_header_line("HTTP/1.1 " + std::to_string(status) + " X\r\n");
    const auto next = finish(transfer, status, code);
    return std::make_pair(next, transfer.state());
  };
  EXPECT_EQ(ended(404, CURLE_OK).second, HttpTransfer::State::missing);
  EXPECT_EQ(ended(410, CURLE_OK).second, HttpTransfer::State::missing);
  EXPECT_EQ(ended(403, CURLE_OK).second, HttpTransfer::State::failed);
  EXPECT_EQ(ended(400, CURLE_OK).second, HttpTransfer::State::failed);
  EXPECT_EQ(ended(503, CURLE_OK).first, HttpTransfer::Next::retry);
  EXPECT_EQ(ended(429, CURLE_OK).first, HttpTransfer::Next::retry);
  EXPECT_EQ(ended(0, CURLE_RECV_ERROR).first, HttpTransfer::Next::retry);
  EXPECT_EQ(ended(0, CURLE_OPERATION_TIMEDOUT).first, HttpTransfer::Next::retry);
  EXPECT_EQ(ended(0, CURLE_TOO_MANY_REDIRECTS).second, HttpTransfer::State::failed);
  EXPECT_EQ(ended(0, CURLE_UNSUPPORTED_PROTOCOL).second, HttpTransfer::State::failed);

  // A HEAD needs a length; messages never show the URL's password.
  HttpTransfer head = HttpTransfer::head("http://user:pw@h/a");
  respond(head, 200, {}, {});
  finish(head, 200);
  EXPECT_NE(error_of(head).find("no Content-Length"), std::string::npos);
  EXPECT_EQ(error_of(head).find("pw"), std::string::npos) << error_of(head);
  HttpTransfer sized = HttpTransfer::head("http://h/a");
  respond(sized, 200, {"Content-Length: 1234"}, {});
  finish(sized, 200);
  EXPECT_EQ(sized.size(), 1234u);
}

TEST(HttpTransfer, PiecesMustBeSortedAndApart) {
  std::vector<std::byte> a(4), b(4);
  EXPECT_THROW(HttpTransfer::pieces("http://h/x", {}), Error);
  EXPECT_THROW(HttpTransfer::pieces("http://h/x", {{10, a}, {12, b}}), Error);  // overlapping
  EXPECT_THROW(HttpTransfer::pieces("http://h/x", {{10, a}, {0, b}}), Error);   // unsorted
  EXPECT_THROW(HttpTransfer::pieces("http://h/x", {{10, {}}}), Error);          // empty
  EXPECT_NO_THROW(HttpTransfer::pieces("http://h/x", {{10, a}, {14, b}}));
}

}  // namespace
}  // namespace zarrdirect

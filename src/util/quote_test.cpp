#include "util/quote.hpp"

#include <gtest/gtest.h>

#include "zarrdirect/error.hpp"

namespace zarrdirect {
namespace {

using namespace std::string_literals;

TEST(Quote, PlainTextIsQuotedAsItIs) {
  EXPECT_EQ(quote("zarr.json"), "\"zarr.json\"");
  EXPECT_EQ(quote(""), "\"\"");
  EXPECT_EQ(quote("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"), "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"");
}

TEST(Quote, QuotesBackslashesAndControlBytesAreEscaped) {
  EXPECT_EQ(quote("a\"b\\c"), R"("a\"b\\c")");
  EXPECT_EQ(quote("line\nerror: forged\r\t"), R"("line\nerror: forged\r\t")");
  EXPECT_EQ(quote("\x1b[31mred\x7f"), R"("\x1b[31mred\x7f")");
  EXPECT_EQ(quote("a\0b"s), R"("a\x00b")");
}

TEST(Quote, InvalidUtf8IsEscapedByteByByte) {
  EXPECT_EQ(quote("bad\xff\xfe"), R"("bad\xff\xfe")");
  EXPECT_EQ(quote("\xc3"), R"("\xc3")");                       // a sequence cut short
  EXPECT_EQ(quote("\xc0\xaf"), R"("\xc0\xaf")");               // overlong '/'
  EXPECT_EQ(quote("\xed\xa0\x80"), R"("\xed\xa0\x80")");       // a UTF-16 surrogate
  EXPECT_EQ(quote("\xf4\x90\x80\x80"), R"("\xf4\x90\x80\x80")");  // past U+10FFFF
}

TEST(Quote, TerminalAndBidiControlsAreEscapedThoughValidUtf8) {
  EXPECT_EQ(quote("\xc2\x9b" "31m"), R"("\u009b31m")");  // C1 CSI
  EXPECT_EQ(quote("abc\xe2\x80\xae" "cba"), R"("abc\u202ecba")");  // right-to-left override
}

TEST(Quote, LongTextIsCutAtACharacterWithItsLength) {
  std::string big(40u << 20, 'x');
  std::string quoted = quote(big);
  EXPECT_EQ(quoted, "\"" + std::string(80, 'x') + "...\" (41943040 bytes)");
  // Never inside a UTF-8 sequence: 79 bytes of ASCII, then a two-byte character that would end at 81.
  std::string text = std::string(79, 'a') + "\xc3\xa9" + "tail";
  EXPECT_EQ(quote(text), "\"" + std::string(79, 'a') + "...\" (85 bytes)");
  EXPECT_EQ(quote("abcdef", 3), "\"abc...\" (6 bytes)");
  EXPECT_EQ(quote("abc", 3), "\"abc\"");
}

TEST(Printable, EscapesWithoutQuoting) {
  EXPECT_EQ(printable("/data/a \"b\"\\c"), "/data/a \"b\"\\c");
  EXPECT_EQ(printable("/data/0\nerror: x\x1b[2J\xff"), R"(/data/0\nerror: x\x1b[2J\xff)");
  EXPECT_EQ(printable("abcdef", 2), "ab... (6 bytes)");
  EXPECT_TRUE(is_printable("caf\xc3\xa9 ok"));
  EXPECT_FALSE(is_printable("a\nb"));
  EXPECT_FALSE(is_printable("a\xff"));
  EXPECT_FALSE(is_printable("\xe2\x80\xae"));
}

// Whatever a call site forgets, an Error's message is one printable line of bounded length.
TEST(Error, MessagesAreOnePrintableLineOfBoundedSize) {
  Error forged(ErrorKind::invalid_metadata, "a\nerror: forged\x1b[31m\xff");
  EXPECT_STREQ(forged.what(), R"(a\nerror: forged\x1b[31m\xff)");
  Error huge(ErrorKind::invalid_metadata, std::string(40u << 20, 'v'));
  EXPECT_LT(std::string(huge.what()).size(), 20000u);
  EXPECT_NE(std::string(huge.what()).find("(41943040 bytes)"), std::string::npos);
  Error plain(ErrorKind::io, "x: \"quoted\" \\ kept");
  EXPECT_STREQ(plain.what(), "x: \"quoted\" \\ kept");
  EXPECT_STREQ(forged.with_context("p\nq").what(), R"(p\nq: a\nerror: forged\x1b[31m\xff)");
}

}  // namespace
}  // namespace zarrdirect

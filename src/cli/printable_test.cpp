#include "cli/printable.hpp"

#include <gtest/gtest.h>

namespace zarrdirect::cli {
namespace {

TEST(PrintableLine, PlainTextIsUnchanged) {
  EXPECT_EQ(printable_line("/data/v.zarr/c/0/1: crc32c mismatch"), "/data/v.zarr/c/0/1: crc32c mismatch");
  EXPECT_EQ(printable_line("Größe µm 細胞 🦠"), "Größe µm 細胞 🦠");  // UTF-8 passes through
  EXPECT_EQ(printable_line(""), "");
}

TEST(PrintableLine, ControlCharactersAreEscaped) {
  EXPECT_EQ(printable_line("a\nerror: forged"), "a\\nerror: forged");
  EXPECT_EQ(printable_line("x\x1b[31mred\x1b[0m"), "x\\x1b[31mred\\x1b[0m");
  EXPECT_EQ(printable_line("\r\t\x7f"), "\\r\\t\\x7f");
  EXPECT_EQ(printable_line(std::string_view("a\0b", 3)), "a\\x00b");
  // C1 controls (CSI as U+009B), line separators and a right-to-left override.
  EXPECT_EQ(printable_line("\xc2\x9b" "2J"), "\\u009b2J");
  EXPECT_EQ(printable_line("a\xe2\x80\xa8" "b\xe2\x80\xae" "c"), "a\\u2028b\\u202ec");
}

TEST(PrintableLine, InvalidUtf8IsEscapedBytewise) {
  EXPECT_EQ(printable_line("ok\xff\xfe"), "ok\\xff\\xfe");
  EXPECT_EQ(printable_line("\xc3"), "\\xc3");                  // truncated sequence
  EXPECT_EQ(printable_line("\xc0\xaf"), "\\xc0\\xaf");          // overlong '/'
  EXPECT_EQ(printable_line("\xed\xa0\x80"), "\\xed\\xa0\\x80");  // a surrogate
  EXPECT_EQ(printable_line("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80");  // past U+10FFFF
}

TEST(PrintableLine, LongTextKeepsItsStartAndEnd) {
  const std::string text = "/path/to/zarr.json: fill_value " + std::string(40'000'000, '7') + " is out of range";
  const std::string line = printable_line(text, 300);
  EXPECT_LE(line.size(), 300u);
  EXPECT_EQ(line.rfind("/path/to/zarr.json: fill_value 777", 0), 0u) << line;
  EXPECT_TRUE(line.ends_with("777 is out of range")) << line;
  EXPECT_NE(line.find(" bytes left out] "), std::string::npos) << line;
}

TEST(PrintableLine, ShorteningNeverSplitsACharacterOrAnEscape) {
  std::string text;
  for (int i = 0; i < 500; ++i) text += "é\x1b";
  const std::string line = printable_line(text, 200);
  EXPECT_LE(line.size(), 200u);
  // Every '\' starts a whole escape, and the text is valid UTF-8 (no escape inside it).
  for (std::size_t i = line.find('\\'); i != std::string::npos; i = line.find('\\', i + 1))
    EXPECT_EQ(line.substr(i, 4), "\\x1b") << line;
  EXPECT_EQ(printable_line(line, 100000), line);  // nothing left to escape: valid and printable
}

}  // namespace
}  // namespace zarrdirect::cli

#include "cli/text.hpp"

#include <gtest/gtest.h>

namespace zarrdirect::cli {
namespace {

using nlohmann::json;

TEST(HumanSize, BinaryUnitsWithTheExactCount) {
  EXPECT_EQ(human_size(0), "0 bytes");
  EXPECT_EQ(human_size(1), "1 byte");
  EXPECT_EQ(human_size(1023), "1023 bytes");
  EXPECT_EQ(human_size(1024), "1.0 KiB (1024 bytes)");
  EXPECT_EQ(human_size(1536), "1.5 KiB (1536 bytes)");
  EXPECT_EQ(human_size(1610612736), "1.5 GiB (1610612736 bytes)");
  EXPECT_EQ(human_size(1048575), "1.0 MiB (1048575 bytes)");  // not "1024.0 KiB"
  EXPECT_EQ(human_size(UINT64_MAX), "16.0 EiB (18446744073709551615 bytes)");
}

TEST(CodecLines, OneCodecALineWithItsConfiguration) {
  json codecs = json::parse(R"([{"name": "bytes", "configuration": {"endian": "little"}},
                                {"name": "zstd", "configuration": {"level": 1, "checksum": false}},
                                {"name": "crc32c"}])");
  EXPECT_EQ(codec_lines(codecs),
            (std::vector<std::string>{"bytes: endian=little", "zstd: checksum=false, level=1", "crc32c"}));
}

TEST(CodecLines, ShardingShowsItsChainsIndented) {
  json codecs = json::parse(R"([{"name": "sharding_indexed", "configuration": {
      "chunk_shape": [8, 8], "index_location": "end",
      "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "gzip", "configuration": {"level": 5}}],
      "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}]}}])");
  EXPECT_EQ(codec_lines(codecs), (std::vector<std::string>{"sharding_indexed: chunk_shape=[8,8], index_location=end",
                                                           "  inner: bytes: endian=little", "  inner: gzip: level=5",
                                                           "  index: bytes: endian=little", "  index: crc32c"}));
}

TEST(CodecLines, LongOrHostileValuesStayOnOneShortLine) {
  json codecs = json::array({{{"name", "x\ny"}, {"configuration", {{"table", std::string(5000, 'a')}}}}});
  auto lines = codec_lines(codecs);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].find('\n'), std::string::npos);
  EXPECT_LT(lines[0].size(), 200u);
  EXPECT_EQ(lines[0].rfind("x\\ny: table=aaa", 0), 0u) << lines[0];
}

}  // namespace
}  // namespace zarrdirect::cli

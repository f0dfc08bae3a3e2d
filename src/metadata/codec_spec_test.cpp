#include "zarrdirect/codec_spec.hpp"

#include <gtest/gtest.h>

#include "zarrdirect/error.hpp"
#include "zarrdirect/metadata.hpp"

namespace zarrdirect {
namespace {

using json = nlohmann::json;
const DataType kU16{ScalarKind::unsigned_int, 2};

std::string refusal(const std::function<void()>& call) {
  try {
    call();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::invalid_argument) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "accepted";
  return {};
}

TEST(CodecSpec, V3Specs) {
  EXPECT_EQ(v3_codecs_from_spec("raw", kU16).size(), 1u);
  EXPECT_EQ(v3_codecs_from_spec("raw", kU16)[0]["name"], "bytes");
  auto zstd = v3_codecs_from_spec("zstd:7", kU16);
  EXPECT_EQ(zstd[1]["name"], "zstd");
  EXPECT_EQ(zstd[1]["configuration"]["level"], 7);
  EXPECT_EQ(v3_codecs_from_spec("zstd", kU16)[1]["configuration"]["level"], 3);
  EXPECT_EQ(v3_codecs_from_spec("zstd:3", kU16, 1)[1]["configuration"]["level"], 1);  // --level wins
  auto blosc = v3_codecs_from_spec("blosc:zstd:5:bitshuffle", kU16)[1]["configuration"];
  EXPECT_EQ(blosc["cname"], "zstd");
  EXPECT_EQ(blosc["clevel"], 5);
  EXPECT_EQ(blosc["shuffle"], "bitshuffle");
  EXPECT_EQ(blosc["typesize"], 2);
  EXPECT_EQ(v3_codecs_from_spec("gzip:6", kU16)[1]["name"], "gzip");
  EXPECT_EQ(v3_codecs_from_spec("zlib:2", kU16)[1]["name"], "numcodecs.zlib");
  EXPECT_EQ(v3_codecs_from_spec("bz2", kU16)[1]["name"], "numcodecs.bz2");
  EXPECT_EQ(v3_codecs_from_spec("lzma:2", kU16)[1]["name"], "numcodecs.lzma");
  EXPECT_EQ(v3_codecs_from_spec("lzma:2", kU16)[1]["configuration"]["preset"], 2);
  EXPECT_EQ(v2_compressor_from_spec("lzma", kU16)["preset"], 6);
  EXPECT_EQ(v2_compressor_from_spec("lzma", kU16)["format"], 1);
  EXPECT_EQ(v3_codecs_from_spec("lz4", kU16)[1]["name"], "numcodecs.lz4");
  auto checked = v3_codecs_from_spec("zstd:1+crc32c", kU16);
  EXPECT_EQ(checked.size(), 3u);
  EXPECT_EQ(checked[2]["name"], "crc32c");
  auto list = v3_codecs_from_spec(R"([{"name":"bytes","configuration":{"endian":"big"}}])", kU16);
  EXPECT_EQ(list[0]["configuration"]["endian"], "big");
}

TEST(CodecSpec, V2Specs) {
  EXPECT_TRUE(v2_compressor_from_spec("raw", kU16).is_null());
  EXPECT_EQ(v2_compressor_from_spec("zstd:3", kU16), (json{{"id", "zstd"}, {"level", 3}}));
  EXPECT_EQ(v2_compressor_from_spec("blosc:lz4:5:shuffle", kU16),
            (json{{"id", "blosc"}, {"cname", "lz4"}, {"clevel", 5}, {"shuffle", 1}, {"blocksize", 0}}));
  EXPECT_EQ(v2_compressor_from_spec("gzip:6", kU16), (json{{"id", "gzip"}, {"level", 6}}));
}

TEST(CodecSpec, BadSpecsNameThePart) {
  EXPECT_NE(refusal([] { v3_codecs_from_spec("snappy", kU16); }).find("\"snappy\""), std::string::npos);
  EXPECT_NE(refusal([] { v3_codecs_from_spec("zstd:high", kU16); }).find("level"), std::string::npos);
  EXPECT_NE(refusal([] { v3_codecs_from_spec("gzip:12", kU16); }).find("0 to 9"), std::string::npos);
  EXPECT_NE(refusal([] { v3_codecs_from_spec("blosc:lz5", kU16); }).find("lz5"), std::string::npos);
  EXPECT_NE(refusal([] { v3_codecs_from_spec("blosc:lz4:5:shuffled", kU16); }).find("shuffled"), std::string::npos);
  refusal([] { v3_codecs_from_spec("zstd:3:4", kU16); });
  refusal([] { v3_codecs_from_spec("", kU16); });
  refusal([] { v3_codecs_from_spec("zstd+md5", kU16); });
  refusal([] { v3_codecs_from_spec("[not json", kU16); });
  refusal([] { v2_compressor_from_spec("zstd+crc32c", kU16); });
  refusal([] { v2_compressor_from_spec("[]", kU16); });
  // Control characters are escaped in the message (one line).
  auto message = refusal([] { v3_codecs_from_spec("bad\nname", kU16); });
  EXPECT_EQ(message.find('\n'), std::string::npos);
}

TEST(CodecSpec, MetadataParsesBackThroughTheReaders) {
  ArrayLayout layout;
  layout.shape = {100, 60};
  layout.dtype = kU16;
  layout.chunks = {16, 20};
  layout.codec = "blosc:lz4:5:shuffle";
  layout.attributes = {{"a", 1}};
  layout.dimension_names = {std::string("y"), std::nullopt};
  auto v3 = parse_v3_array_metadata(make_array_metadata(layout), "v3");
  EXPECT_EQ(v3.chunk_shape, (std::vector<std::uint64_t>{16, 20}));
  EXPECT_EQ(v3.dimension_names.size(), 2u);
  layout.shards = {32, 60};
  auto sharded = parse_v3_array_metadata(make_array_metadata(layout), "sharded");
  EXPECT_EQ(sharded.chunk_shape, (std::vector<std::uint64_t>{32, 60}));
  EXPECT_EQ(sharded.codecs[0]["name"], "sharding_indexed");
  layout.shards = {30, 60};
  EXPECT_NE(refusal([&] { make_array_metadata(layout); }).find("multiple"), std::string::npos);
  layout.shards = {};
  layout.zarr_format = 2;
  layout.dimension_names = {};
  json v2_doc = make_array_metadata(layout);
  json attrs = v2_doc["attributes"];
  v2_doc.erase("attributes");
  auto v2 = parse_v2_array_metadata(v2_doc, attrs, "v2");
  EXPECT_EQ(v2.zarr_format, 2);
  layout.chunks = {16};
  refusal([&] { make_array_metadata(layout); });
}

}  // namespace
}  // namespace zarrdirect

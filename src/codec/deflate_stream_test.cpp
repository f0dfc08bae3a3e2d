#include "codec/deflate_stream.hpp"

#include <gtest/gtest.h>
#include <zlib.h>

#include <limits>

#include "codec/codec_test_support.hpp"

namespace zarrdirect::codec {
namespace {

using namespace test;

// Text-like bytes that compress, so streams are short but not trivial.
ByteBuffer compressible(std::size_t size) {
  ByteBuffer data(size);
  for (std::size_t i = 0; i < size; ++i) data[i] = static_cast<std::byte>("zarr chunk "[i % 11] + (i / 1000) % 7);
  return data;
}

// Bytes that do not compress at all.
ByteBuffer incompressible(std::size_t size) {
  ByteBuffer data(size);
  std::uint64_t state = 0x2545F4914F6CDD1Dull;
  for (auto& b : data) {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    b = static_cast<std::byte>(state >> 32);
  }
  return data;
}

ByteBuffer deflated(DeflateWrapper wrapper, ByteSpan data, int level = 6) {
  ByteBuffer encoded;
  deflate_whole("test", wrapper, level, data, encoded);
  return encoded;
}

ByteBuffer inflated(DeflateWrapper wrapper, ByteSpan encoded, std::uint64_t limit = 1 << 26) {
  ByteBuffer decoded;
  inflate_bounded("test", wrapper, encoded, decoded, limit);
  return decoded;
}

ByteBuffer concatenated(std::initializer_list<ByteSpan> parts) {
  ByteBuffer all;
  for (ByteSpan part : parts) all.insert(all.end(), part.begin(), part.end());
  return all;
}

constexpr DeflateWrapper kWrappers[] = {DeflateWrapper::zlib, DeflateWrapper::gzip};
const char* name_of(DeflateWrapper wrapper) { return wrapper == DeflateWrapper::gzip ? "gzip" : "zlib"; }

TEST(DeflateStream, RoundTripsAtEveryLevelInBothWrappers) {
  const ByteBuffer data = compressible(300'000);
  for (DeflateWrapper wrapper : kWrappers)
    for (int level : {-1, 0, 1, 6, 9}) {
      SCOPED_TRACE(fmt::format("{} level {}", name_of(wrapper), level));
      ByteBuffer encoded = deflated(wrapper, data, level);
      EXPECT_LE(encoded.size(), deflate_bound(wrapper, data.size()));
      if (level != 0) {
        EXPECT_LT(encoded.size(), data.size() / 4);
      }
      EXPECT_EQ(inflated(wrapper, encoded), data);
    }
}

TEST(DeflateStream, WritesTheWrapperAsked) {
  const ByteBuffer data = compressible(1000);
  ByteBuffer gzip = deflated(DeflateWrapper::gzip, data);
  ASSERT_GE(gzip.size(), 18u);
  EXPECT_EQ(gzip[0], std::byte{0x1f});
  EXPECT_EQ(gzip[1], std::byte{0x8b});
  ByteBuffer zlib = deflated(DeflateWrapper::zlib, data);
  ASSERT_GE(zlib.size(), 6u);
  EXPECT_EQ(zlib[0], std::byte{0x78});
  // The zlib header is a multiple of 31 (RFC 1950).
  EXPECT_EQ((std::to_integer<unsigned>(zlib[0]) * 256 + std::to_integer<unsigned>(zlib[1])) % 31, 0u);
  // Each wrapper refuses the other.
  expect_error(ErrorKind::corrupt_data, {"codec test"}, [&] { inflated(DeflateWrapper::zlib, gzip); });
  expect_error(ErrorKind::corrupt_data, {"codec test"}, [&] { inflated(DeflateWrapper::gzip, zlib); });
}

TEST(DeflateStream, EmptyInputIsAValidStream) {
  for (DeflateWrapper wrapper : kWrappers) {
    ByteBuffer encoded = deflated(wrapper, ByteSpan());
    EXPECT_FALSE(encoded.empty()) << name_of(wrapper);
    ByteBuffer decoded(100, std::byte{1});  // a reused buffer is trimmed to what was decoded
    inflate_bounded("test", wrapper, encoded, decoded, 0);
    EXPECT_TRUE(decoded.empty()) << name_of(wrapper);
  }
}

TEST(DeflateStream, IncompressibleDataFitsTheBound) {
  const ByteBuffer data = incompressible(1 << 20);
  for (DeflateWrapper wrapper : kWrappers)
    for (int level : {0, 9}) {
      ByteBuffer encoded = deflated(wrapper, data, level);
      EXPECT_GT(encoded.size(), data.size());
      EXPECT_LE(encoded.size(), deflate_bound(wrapper, data.size()));
      EXPECT_EQ(inflated(wrapper, encoded), data);
    }
}

TEST(DeflateStream, BoundAllowsForGzipHeaders) {
  for (std::uint64_t size : {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{1} << 20, std::uint64_t{3} << 30}) {
    const std::uint64_t zlib = deflate_bound(DeflateWrapper::zlib, size);
    EXPECT_GE(zlib, size + 6) << size;  // the zlib wrapper alone is 6 bytes
    EXPECT_EQ(deflate_bound(DeflateWrapper::gzip, size), zlib + 1024) << size;
  }
  EXPECT_LT(deflate_bound(DeflateWrapper::zlib, 1 << 20), deflate_bound(DeflateWrapper::zlib, 2 << 20));
}

TEST(DeflateStream, GzipMembersAndZeroPaddingAreRead) {
  const ByteBuffer data = compressible(50'000);
  ByteSpan all(data);
  ByteBuffer first = deflated(DeflateWrapper::gzip, all.first(20'000), 1);
  ByteBuffer second = deflated(DeflateWrapper::gzip, all.subspan(20'000, 29'999), 9);
  ByteBuffer third = deflated(DeflateWrapper::gzip, all.subspan(49'999), 0);
  ByteBuffer empty = deflated(DeflateWrapper::gzip, ByteSpan());
  EXPECT_EQ(inflated(DeflateWrapper::gzip, concatenated({first, empty, second, third})), data);
  ByteBuffer zeros(37, std::byte{0});
  EXPECT_EQ(inflated(DeflateWrapper::gzip, concatenated({first, second, third, zeros})), data);
}

TEST(DeflateStream, ZlibStreamsStandAlone) {
  // Neither a second stream nor zero padding may follow a zlib stream: both are garbage.
  const ByteBuffer data = compressible(5000);
  ByteBuffer stream = deflated(DeflateWrapper::zlib, data);
  ByteBuffer zeros(4, std::byte{0});
  expect_error(ErrorKind::corrupt_data, {"codec test", "garbage"},
               [&] { inflated(DeflateWrapper::zlib, concatenated({stream, stream})); });
  expect_error(ErrorKind::corrupt_data, {"codec test", "4 bytes of garbage"},
               [&] { inflated(DeflateWrapper::zlib, concatenated({stream, zeros})); });
}

TEST(DeflateStream, GarbageAfterTheLastGzipMemberIsRefused) {
  const ByteBuffer data = compressible(5000);
  ByteBuffer member = deflated(DeflateWrapper::gzip, data);
  ByteBuffer garbage = to_bytes("abc");
  expect_error(ErrorKind::corrupt_data, {"codec test", "3 bytes of garbage"},
               [&] { inflated(DeflateWrapper::gzip, concatenated({member, garbage})); });
  // Padding counts only when it is all zeros up to the end.
  ByteBuffer zeros_then_member = concatenated({member, ByteBuffer(8, std::byte{0}), member});
  expect_error(ErrorKind::corrupt_data, {"codec test", "garbage"},
               [&] { inflated(DeflateWrapper::gzip, zeros_then_member); });
  // A second member that is damaged is an error, not the end of the data.
  ByteBuffer second = member;
  second[second.size() / 2] ^= std::byte{0x55};
  second[second.size() - 5] ^= std::byte{0x01};  // and the CRC, in case the flip still inflates
  expect_error(ErrorKind::corrupt_data, {"codec test"},
               [&] { inflated(DeflateWrapper::gzip, concatenated({member, second})); });
}

TEST(DeflateStream, EveryTruncationIsCorruptData) {
  const ByteBuffer data = compressible(3000);
  for (DeflateWrapper wrapper : kWrappers) {
    ByteBuffer encoded = deflated(wrapper, data);
    for (std::size_t keep = 0; keep < encoded.size(); ++keep) {
      SCOPED_TRACE(fmt::format("{}: {} of {} bytes", name_of(wrapper), keep, encoded.size()));
      expect_error(ErrorKind::corrupt_data, {"codec test"},
                   [&] { inflated(wrapper, ByteSpan(encoded).first(keep)); });
    }
    // Cut inside the compressed data (not its header or trailer), the message says so.
    expect_error(ErrorKind::corrupt_data, {"truncated"},
                 [&] { inflated(wrapper, ByteSpan(encoded).first(encoded.size() / 2)); });
  }
}

TEST(DeflateStream, OutputLimitIsExactAndStopsBombs) {
  const ByteBuffer data = compressible(100'000);
  for (DeflateWrapper wrapper : kWrappers) {
    SCOPED_TRACE(name_of(wrapper));
    ByteBuffer encoded = deflated(wrapper, data);
    EXPECT_EQ(inflated(wrapper, encoded, data.size()), data);  // exactly the limit is fine
    expect_error(ErrorKind::corrupt_data, {"codec test", "more than the 99999 bytes"},
                 [&] { inflated(wrapper, encoded, data.size() - 1); });
    // 64 MiB of zeros in about 64 KiB: refused without allocating anywhere near that.
    ByteBuffer bomb = deflated(wrapper, zeros(64 << 20), 9);
    ASSERT_LT(bomb.size(), 1u << 20);
    ByteBuffer out;
    expect_error(ErrorKind::corrupt_data, {"more than the 1000000 bytes"},
                 [&] { inflate_bounded("test", wrapper, bomb, out, 1'000'000); });
    EXPECT_LE(out.capacity(), 2'000'002u);
  }
}

TEST(DeflateStream, PresetDictionariesAreRefused) {
  // zlib streams may ask for a preset dictionary; Zarr never writes one.
  const ByteBuffer data = compressible(2000);
  const std::string dictionary = "zarr chunk zarr chunk";
  z_stream stream{};
  ASSERT_EQ(deflateInit(&stream, 6), Z_OK);
  ASSERT_EQ(deflateSetDictionary(&stream, reinterpret_cast<const Bytef*>(dictionary.data()),
                                 static_cast<uInt>(dictionary.size())),
            Z_OK);
  ByteBuffer encoded(deflateBound(&stream, static_cast<uLong>(data.size())));
  stream.next_in = const_cast<Bytef*>(reinterpret_cast<const Bytef*>(data.data()));
  stream.avail_in = static_cast<uInt>(data.size());
  stream.next_out = reinterpret_cast<Bytef*>(encoded.data());
  stream.avail_out = static_cast<uInt>(encoded.size());
  ASSERT_EQ(deflate(&stream, Z_FINISH), Z_STREAM_END);
  encoded.resize(stream.total_out);
  deflateEnd(&stream);
  expect_error(ErrorKind::corrupt_data, {"codec test", "dictionary"},
               [&] { inflated(DeflateWrapper::zlib, encoded); });
}

TEST(DeflateStream, AFailedStreamDoesNotSpoilTheNextOnTheSameThread) {
  // The inflate state is kept per thread and reset for each stream: errors, wrapper changes and
  // streams abandoned half way must not leak into the next one.
  const ByteBuffer data = compressible(20'000);
  const ByteBuffer other = incompressible(7000);
  ByteBuffer gzip = deflated(DeflateWrapper::gzip, data);
  ByteBuffer zlib = deflated(DeflateWrapper::zlib, other);
  ByteBuffer damaged = gzip;
  damaged[damaged.size() / 2] ^= std::byte{0xff};
  for (int round = 0; round < 3; ++round) {
    EXPECT_THROW(inflated(DeflateWrapper::gzip, ByteSpan(gzip).first(gzip.size() / 2)), Error);
    EXPECT_EQ(inflated(DeflateWrapper::zlib, zlib), other);
    EXPECT_THROW(inflated(DeflateWrapper::gzip, damaged), Error);
    EXPECT_EQ(inflated(DeflateWrapper::gzip, gzip), data);
    EXPECT_THROW(inflated(DeflateWrapper::zlib, zlib, 100), Error);
    EXPECT_EQ(inflated(DeflateWrapper::gzip, gzip), data);
  }
}

TEST(DeflateStream, ImpossibleLevelsAreRefusedWhenCompressing) {
  const ByteBuffer data = compressible(100);
  ByteBuffer encoded;
  expect_error(ErrorKind::invalid_argument, {"codec mine", "deflate setup"},
               [&] { deflate_whole("mine", DeflateWrapper::gzip, 10, data, encoded); });
  expect_error(ErrorKind::invalid_argument, {"codec mine"},
               [&] { deflate_whole("mine", DeflateWrapper::zlib, -2, data, encoded); });
}

TEST(DeflateStream, ReadsTheLevel) {
  using nlohmann::json;
  EXPECT_EQ(read_deflate_level(json::object(), "gzip", 5), 5);
  EXPECT_EQ(read_deflate_level(json{{"level", -1}}, "gzip", 5), -1);
  EXPECT_EQ(read_deflate_level(json{{"level", 0}}, "gzip", 5), 0);
  EXPECT_EQ(read_deflate_level(json{{"level", 9}}, "zlib", 1), 9);
  EXPECT_EQ(read_deflate_level(json::parse(R"({"level": 3})"), "zlib", 1), 3);  // parsed: unsigned
  for (const char* config : {R"({"level": 10})", R"({"level": -2})", R"({"level": 1.5})", R"({"level": "9"})",
                             R"({"level": null})", R"({"level": 4294967297})", R"({"level": 18446744073709551615})"})
    expect_error(ErrorKind::invalid_metadata, {"numcodecs.zlib", "level"},
                 [&] { read_deflate_level(json::parse(config), "numcodecs.zlib", 1); });
}

}  // namespace
}  // namespace zarrdirect::codec

#include "codec/lzma_codec.hpp"

#include <gtest/gtest.h>

#include <string>

#include "codec/codec_test_support.hpp"

namespace zarrdirect::codec {
namespace {

using namespace test;

TEST(LzmaCodec, RoundTripsEachContainerPresetAndCheck) {
  const ArraySpec spec = make_spec({40, 30}, dtype("int32"));
  const auto data = sample_data(spec);
  for (const char* configuration :
       {"{}", R"({"format":1,"check":-1,"preset":null,"filters":null})", R"({"preset":0})", R"({"preset":9})",
        R"({"preset":2147483649})", R"({"check":0})", R"({"check":1})", R"({"check":10})", R"({"format":2})",
        R"({"format":2,"preset":1})"}) {
    SCOPED_TRACE(configuration);
    expect_round_trip(bytes_then("numcodecs.lzma", configuration), spec, data);
  }
}

TEST(LzmaCodec, EachContainerIsRecognisedAndFormatZeroReadsBoth) {
  const ArraySpec spec = make_spec({500}, dtype("uint16"));
  const auto data = sample_data(spec);
  ByteBuffer xz, alone;
  make_compressor("numcodecs.lzma", R"({"format":1})", spec)->encode(data, xz);
  make_compressor("numcodecs.lzma", R"({"format":2})", spec)->encode(data, alone);
  // .xz begins FD '7zXZ' 00; .lzma with its properties byte (0x5d for the presets' lc3 lp0 pb2).
  ASSERT_GE(xz.size(), 6u);
  EXPECT_EQ(xz[0], std::byte{0xfd});
  EXPECT_EQ(xz[1], std::byte{'7'});
  EXPECT_EQ(alone[0], std::byte{0x5d});
  auto automatic = make_compressor("numcodecs.lzma", R"({"format":0})", spec);
  for (const ByteBuffer* stored : {&xz, &alone}) {
    ByteBuffer out;
    automatic->decode(*stored, out, 1000);
    EXPECT_EQ(out, data);
  }
  ByteBuffer out;
  expect_error(ErrorKind::corrupt_data, {"numcodecs.lzma", "not a .xz stream"},
               [&] { make_compressor("numcodecs.lzma", R"({"format":1})", spec)->decode(alone, out, 1000); });
}

TEST(LzmaCodec, ConcatenatedStreamsReadAsPythonDoes) {
  expect_concatenated_streams_decode("numcodecs.lzma", R"({"format":1})");
  expect_concatenated_streams_decode("numcodecs.lzma", R"({"format":2})");
}

TEST(LzmaCodec, DamageTruncationBombsAndGarbageAreCorruptData) {
  const ArraySpec spec = make_spec({4000}, dtype("uint8"));
  ByteBuffer data(4000, std::byte{7});  // compresses to a few dozen bytes
  for (const char* configuration : {R"({"format":1})", R"({"format":2})"}) {
    SCOPED_TRACE(configuration);
    auto codec = make_compressor("numcodecs.lzma", configuration, spec);
    ByteBuffer encoded;
    codec->encode(data, encoded);
    ByteBuffer out;
    expect_error(ErrorKind::corrupt_data, {"numcodecs.lzma", "more than the 3999 bytes"},
                 [&] { codec->decode(encoded, out, 3999); });
    expect_error(ErrorKind::corrupt_data, {"numcodecs.lzma", "truncated"},
                 [&] { codec->decode(ByteSpan(encoded).first(encoded.size() - 5), out, 4000); });
    ByteBuffer garbage = encoded;
    garbage.push_back(std::byte{0x42});
    expect_error(ErrorKind::corrupt_data, {"numcodecs.lzma"}, [&] { codec->decode(garbage, out, 4000); });
    // Every single-byte change fails cleanly or decodes to something within the limit.
    for (std::size_t at = 0; at < encoded.size(); ++at) {
      ByteBuffer damaged = encoded;
      damaged[at] ^= std::byte{0x5a};
      try {
        codec->decode(damaged, out, 4000);
        EXPECT_LE(out.size(), 4000u);
      } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::corrupt_data) << e.what();
      }
    }
  }
}

TEST(LzmaCodec, AStreamAskingForAHugeDictionaryIsRefusedBeforeAllocating) {
  // A .lzma header: properties 0x5d, a 1.5 GiB dictionary, unknown size; then nothing useful.
  ByteBuffer header = {std::byte{0x5d}, std::byte{0x00}, std::byte{0x00}, std::byte{0x00}, std::byte{0x60}};
  for (int i = 0; i < 8; ++i) header.push_back(std::byte{0xff});
  header.resize(header.size() + 16, std::byte{0});
  const ArraySpec spec = make_spec({64}, dtype("uint8"));
  ByteBuffer out;
  expect_error(ErrorKind::corrupt_data, {"numcodecs.lzma", "bytes of memory to decode"},
               [&] { make_compressor("numcodecs.lzma", R"({"format":2})", spec)->decode(header, out, 64); });
}

TEST(LzmaCodec, ConfigurationsItCannotHonourAreRefusedByName) {
  const ArraySpec spec = make_spec({8}, dtype("uint8"));
  const ByteBuffer data(8, std::byte{1});
  ByteBuffer out;
  expect_error(ErrorKind::invalid_metadata, {"numcodecs.lzma", "format", "7"},
               [&] { make_compressor("numcodecs.lzma", R"({"format":7})", spec); });
  expect_error(ErrorKind::invalid_metadata, {"numcodecs.lzma", "check", "3"},
               [&] { make_compressor("numcodecs.lzma", R"({"check":3})", spec); });
  expect_error(ErrorKind::invalid_metadata, {"numcodecs.lzma", "preset", "12"},
               [&] { make_compressor("numcodecs.lzma", R"({"preset":12})", spec); });
  expect_error(ErrorKind::invalid_metadata, {"numcodecs.lzma", "filters"},
               [&] { make_compressor("numcodecs.lzma", R"({"filters":3})", spec); });
  expect_error(ErrorKind::unsupported, {"numcodecs.lzma", "format 3", "raw"},
               [&] { make_compressor("numcodecs.lzma", R"({"format":3,"filters":[{"id":33}]})", spec)->decode(data, out, 8); });
  expect_error(ErrorKind::unsupported, {"numcodecs.lzma", "filters"}, [&] {
    make_compressor("numcodecs.lzma", R"({"filters":[{"id":33,"preset":1}]})", spec)->encode(data, out);
  });
  expect_error(ErrorKind::unsupported, {"numcodecs.lzma", "writing"},
               [&] { make_compressor("numcodecs.lzma", R"({"format":0})", spec)->encode(data, out); });
}

}  // namespace
}  // namespace zarrdirect::codec

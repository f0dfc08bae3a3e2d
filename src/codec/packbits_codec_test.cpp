#include "codec/packbits_codec.hpp"

#include <gtest/gtest.h>

#include "codec/codec_test_support.hpp"

namespace zarrdirect::codec {
namespace {

using namespace test;

ByteBuffer bytes(std::initializer_list<unsigned> values) {
  ByteBuffer out;
  for (unsigned v : values) out.push_back(static_cast<std::byte>(v));
  return out;
}

TEST(PackBitsCodec, PacksAsNumcodecsDoes) {
  const ArraySpec spec = make_spec({4}, dtype("bool"));
  auto codec = make_compressor("numcodecs.packbits", "{}", spec);
  ByteBuffer encoded;
  // numcodecs' own example: [True, False, False, True] -> [4, 144].
  codec->encode(bytes({1, 0, 0, 1}), encoded);
  EXPECT_EQ(encoded, bytes({4, 144}));
  // Nonzero is true; eight elements need no padding; nine spill into a second byte.
  codec->encode(bytes({1, 1, 0, 0, 0, 0, 0, 7}), encoded);
  EXPECT_EQ(encoded, bytes({0, 0xc1}));
  codec->encode(bytes({0, 0, 0, 0, 0, 0, 0, 0, 1}), encoded);
  EXPECT_EQ(encoded, bytes({7, 0, 0x80}));
  codec->encode({}, encoded);
  EXPECT_EQ(encoded, bytes({0}));
}

TEST(PackBitsCodec, RoundTripsEveryLengthInAChain) {
  for (std::uint64_t n : {1u, 7u, 8u, 9u, 35u, 1000u}) {
    const ArraySpec spec = make_spec({n}, dtype("bool"));
    ByteBuffer data(n);
    for (std::uint64_t i = 0; i < n; ++i) data[i] = static_cast<std::byte>((i * 7 + i / 3) % 3 == 0);
    expect_round_trip(R"([{"name":"bytes"},{"name":"numcodecs.packbits"},{"name":"numcodecs.zlib"}])", spec, data);
  }
}

TEST(PackBitsCodec, BadPaddingAndWrongSizesAreCorruptData) {
  const ArraySpec spec = make_spec({4}, dtype("bool"));
  auto codec = make_compressor("numcodecs.packbits", "{}", spec);
  ByteBuffer out;
  expect_error(ErrorKind::corrupt_data, {"numcodecs.packbits", "padding count"}, [&] { codec->decode({}, out, 4); });
  expect_error(ErrorKind::corrupt_data, {"numcodecs.packbits", "8 padding bits"},
               [&] { codec->decode(bytes({8, 0xff}), out, 4); });
  expect_error(ErrorKind::corrupt_data, {"numcodecs.packbits", "3 padding bits, of 0"},
               [&] { codec->decode(bytes({3}), out, 4); });
  expect_error(ErrorKind::corrupt_data, {"numcodecs.packbits", "more than the 4 expected"},
               [&] { codec->decode(bytes({0, 0xff}), out, 4); });
  codec->decode(bytes({4, 0x90}), out, 4);
  EXPECT_EQ(out, bytes({1, 0, 0, 1}));
  ByteBuffer exact(5);
  EXPECT_FALSE(codec->decode_exact(bytes({4, 0x90}), exact));
}

}  // namespace
}  // namespace zarrdirect::codec

#include "codec/zfpy_codec.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>
#include <string>

#include "codec/codec_test_support.hpp"

namespace zarrdirect::codec {
namespace {

using namespace test;

// The largest difference between `a` and `b` read as values of `type`.
double largest_error(const ByteBuffer& a, const ByteBuffer& b, const DataType& type) {
  double worst = 0;
  visit_element_type(type, "test", [&]<class T>(T) {
    if constexpr (!std::is_arithmetic_v<T>) return;  // zfp takes int32, int64, float32 and float64 only
    else for (std::size_t i = 0; i < a.size() / sizeof(T); ++i) {
      T x, y;
      std::memcpy(&x, a.data() + i * sizeof(T), sizeof(T));
      std::memcpy(&y, b.data() + i * sizeof(T), sizeof(T));
      worst = std::max(worst, std::fabs(static_cast<double>(x) - static_cast<double>(y)));
    }
  });
  return worst;
}

TEST(ZfpyCodec, FixedPrecisionRoundTripsEveryTypeAndRankWithinItsLoss) {
  for (const char* type : {"int32", "int64", "float32", "float64"})
    for (std::vector<std::uint64_t> shape : {std::vector<std::uint64_t>{100}, {7, 13}, {3, 4, 5}, {2, 3, 4, 5}}) {
      SCOPED_TRACE(std::string(type) + " rank " + std::to_string(shape.size()));
      const ArraySpec spec = make_spec(shape, dtype(type));
      const auto data = sample_data(spec);
      CodecChain chain = make_chain(bytes_then("numcodecs.zfpy", R"({"mode":3,"precision":48,"tolerance":-1,"rate":-1})"), spec);
      const auto decoded = decode_chunk(chain, chain.encode(data));
      ASSERT_EQ(decoded.size(), data.size());
      // zfp is lossy even at this precision: integers pass a transform that drops low bits
      // (errors of 2-18 here for int32, 54 for int64), floats keep about 24 and 48 bits.
      const double bound = std::string(type) == "int32" ? 64 : std::string(type) == "int64" ? 1 << 16
                           : std::string(type) == "float32" ? 1e-5 : 1e-9;
      EXPECT_LE(largest_error(decoded, data, spec.dtype), bound);
    }
}

TEST(ZfpyCodec, FixedAccuracyStaysWithinItsTolerance) {
  const ArraySpec spec = make_spec({16, 16, 16}, dtype("float64"));
  const auto data = sample_data(spec);
  CodecChain chain = make_chain(bytes_then("numcodecs.zfpy", R"({"mode":4,"tolerance":0.01})"), spec);
  const ByteBuffer encoded = chain.encode(data);
  EXPECT_LT(encoded.size(), data.size());
  const auto decoded = decode_chunk(chain, encoded);
  ASSERT_EQ(decoded.size(), data.size());
  EXPECT_LE(largest_error(decoded, data, spec.dtype), 0.01);
}

TEST(ZfpyCodec, AStreamOfAnotherTypeOrSizeIsCorruptData) {
  const ArraySpec floats = make_spec({8, 8}, dtype("float32"));
  const ArraySpec more = make_spec({8, 9}, dtype("float32"));
  ByteBuffer encoded;
  make_compressor("numcodecs.zfpy", R"({"mode":3,"precision":32})", floats)->encode(sample_data(floats), encoded);
  ByteBuffer out;
  expect_error(ErrorKind::corrupt_data, {"numcodecs.zfpy", "float32 values, the chunk is int32"}, [&] {
    make_compressor("numcodecs.zfpy", "{}", make_spec({8, 8}, dtype("int32")))->decode(encoded, out, 256);
  });
  expect_error(ErrorKind::corrupt_data, {"numcodecs.zfpy", "the stream holds 64 values, the chunk 72"},
               [&] { make_compressor("numcodecs.zfpy", "{}", more)->decode(encoded, out, 255); });
}

TEST(ZfpyCodec, DamagedAndTruncatedStreamsFailCleanlyOrDecodeWithinTheChunk) {
  const ArraySpec spec = make_spec({12, 10}, dtype("float64"));
  const auto data = sample_data(spec);
  for (const char* configuration : {R"({"mode":4,"tolerance":0.5})", R"({"mode":2,"rate":8})", R"({"mode":3,"precision":20})"}) {
    SCOPED_TRACE(configuration);
    auto codec = make_compressor("numcodecs.zfpy", configuration, spec);
    ByteBuffer encoded;
    codec->encode(data, encoded);
    ByteBuffer out;
    // Every truncation: the missing bytes read as zeros from the padded copy, never past it.
    for (std::size_t keep = 0; keep < encoded.size(); ++keep) {
      try {
        codec->decode(ByteSpan(encoded).first(keep), out, data.size());
        EXPECT_EQ(out.size(), data.size());
      } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::corrupt_data) << e.what();
      }
    }
    for (std::size_t at = 0; at < encoded.size(); ++at) {
      ByteBuffer damaged = encoded;
      damaged[at] ^= std::byte{0xa5};
      try {
        codec->decode(damaged, out, data.size());
        EXPECT_EQ(out.size(), data.size());
      } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::corrupt_data) << e.what();
      }
    }
  }
  ByteBuffer out;
  expect_error(ErrorKind::corrupt_data, {"numcodecs.zfpy", "no valid zfp header"},
               [&] { make_compressor("numcodecs.zfpy", "{}", spec)->decode(to_bytes("not zfp at all"), out, 960); });
}

TEST(ZfpyCodec, TypesAndConfigurationsItCannotHonourAreRefusedByName) {
  const ArraySpec bytes_spec = make_spec({4}, dtype("uint8"));
  ByteBuffer out;
  expect_error(ErrorKind::unsupported, {"numcodecs.zfpy", "uint8"}, [&] {
    make_compressor("numcodecs.zfpy", "{}", bytes_spec)->encode(sample_data(bytes_spec), out);
  });
  const ArraySpec five_d = make_spec({2, 2, 2, 2, 2}, dtype("float32"));
  expect_error(ErrorKind::unsupported, {"numcodecs.zfpy", "4 dimensions"},
               [&] { make_compressor("numcodecs.zfpy", "{}", five_d)->encode(sample_data(five_d), out); });
  expect_error(ErrorKind::invalid_metadata, {"numcodecs.zfpy", "mode", "7"},
               [&] { make_compressor("numcodecs.zfpy", R"({"mode":7})", bytes_spec); });
  expect_error(ErrorKind::invalid_metadata, {"numcodecs.zfpy", "tolerance"},
               [&] { make_compressor("numcodecs.zfpy", R"({"tolerance":"x"})", bytes_spec); });
}

}  // namespace
}  // namespace zarrdirect::codec

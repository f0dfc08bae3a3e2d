#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#define ZSTD_STATIC_LINKING_ONLY  // ZSTD_getFrameHeader, to check the window a frame asks for
#include <zstd.h>

#include "codec/codec_test_support.hpp"

namespace zarrdirect::codec {
namespace {

using namespace test;

// A zstd frame that does not say how much it decodes to, as streaming writers produce.
ByteBuffer frame_without_content_size(ByteSpan data) {
  std::unique_ptr<ZSTD_CCtx, decltype(&ZSTD_freeCCtx)> context(ZSTD_createCCtx(), &ZSTD_freeCCtx);
  ZSTD_CCtx_setParameter(context.get(), ZSTD_c_contentSizeFlag, 0);
  ByteBuffer out(ZSTD_compressBound(data.size()));
  ZSTD_inBuffer input{data.data(), data.size(), 0};
  ZSTD_outBuffer output{out.data(), out.size(), 0};
  EXPECT_EQ(ZSTD_compressStream2(context.get(), &output, &input, ZSTD_e_end), 0u);
  out.resize(output.pos);
  EXPECT_EQ(ZSTD_getFrameContentSize(out.data(), out.size()), ZSTD_CONTENTSIZE_UNKNOWN);
  return out;
}

ByteBuffer zstd_frame(ByteSpan data) {
  ByteBuffer out(ZSTD_compressBound(data.size()));
  out.resize(ZSTD_compress(out.data(), out.size(), data.data(), data.size(), 3));
  return out;
}

TEST(ZstdCodec, RoundTripsThroughChainsOfSeveralTypesAndShapes) {
  for (const char* type : {"uint8", "int16", "uint32", "float32", "float64", "int64"})
    for (std::vector<std::uint64_t> shape : {std::vector<std::uint64_t>{1000}, {7, 13}, {4, 5, 6}, {}}) {
      ArraySpec spec = make_spec(shape, dtype(type));
      auto data = sample_data(spec);
      expect_round_trip(R"([{"name":"bytes","configuration":{"endian":"little"}},
                            {"name":"zstd","configuration":{"level":3,"checksum":false}}])", spec, data);
      expect_round_trip(R"([{"name":"bytes","configuration":{"endian":"big"}},
                            {"name":"zstd","configuration":{"level":-5,"checksum":true}}])", spec, data);
      expect_round_trip(R"([{"name":"bytes","configuration":{"endian":"little"}},
                            {"name":"numcodecs.zstd","configuration":{"level":1}}])", spec, data);
    }
}

TEST(ZstdCodec, FramesAskingForAHugeWindowDecodeWithoutIt) {
  // A streaming writer may declare a 128 MiB window for a small chunk: decoding must not reserve
  // it (the chain decodes in one shot into a buffer the chunk's size), and must still succeed.
  ArraySpec spec = make_spec({4096}, dtype("uint16"));
  auto data = sample_data(spec);
  std::unique_ptr<ZSTD_CCtx, decltype(&ZSTD_freeCCtx)> context(ZSTD_createCCtx(), &ZSTD_freeCCtx);
  ZSTD_CCtx_setParameter(context.get(), ZSTD_c_contentSizeFlag, 0);
  ZSTD_CCtx_setParameter(context.get(), ZSTD_c_windowLog, 27);
  ByteBuffer frame(ZSTD_compressBound(data.size()));
  ZSTD_inBuffer input{data.data(), data.size(), 0};
  ZSTD_outBuffer output{frame.data(), frame.size(), 0};
  // Fed as a stream (continue, then end), so the compressor cannot shrink the window to the input.
  ASSERT_FALSE(ZSTD_isError(ZSTD_compressStream2(context.get(), &output, &input, ZSTD_e_continue)));
  ASSERT_EQ(ZSTD_compressStream2(context.get(), &output, &input, ZSTD_e_end), 0u);
  frame.resize(output.pos);
  ZSTD_frameHeader header{};
  ASSERT_EQ(ZSTD_getFrameHeader(&header, frame.data(), frame.size()), 0u);
  ASSERT_GE(header.windowSize, 1ull << 27);  // what a streaming decoder would reserve

  CodecChain chain = make_chain(R"([{"name":"bytes","configuration":{"endian":"little"}},{"name":"zstd"}])", spec);
  EXPECT_EQ(decode_chunk(chain, frame), data);
  // And through the bytes->bytes codec alone, which decodes into a buffer it sizes itself.
  auto codec = make_bytes_to_bytes("zstd", nlohmann::json::object(), spec);
  ByteBuffer decoded;
  codec->decode(frame, decoded, spec.nbytes());
  EXPECT_EQ(decoded, data);
  expect_error(ErrorKind::corrupt_data, {"zstd", "more than the 100 bytes"},
               [&] { codec->decode(frame, decoded, 100); });
}

TEST(ZstdCodec, DecodesFramesWithoutContentSizeAndSeveralFrames) {
  ArraySpec spec = make_spec({2000}, dtype("uint16"));
  auto data = sample_data(spec);
  CodecChain chain = make_chain(R"([{"name":"bytes","configuration":{"endian":"little"}},{"name":"zstd"}])", spec);
  EXPECT_EQ(decode_chunk(chain, frame_without_content_size(data)), data);

  ByteSpan all(data);
  ByteBuffer two_frames = zstd_frame(all.first(1234));
  ByteBuffer second = frame_without_content_size(all.subspan(1234));
  two_frames.insert(two_frames.end(), second.begin(), second.end());
  EXPECT_EQ(decode_chunk(chain, two_frames), data);
}

TEST(ZstdCodec, CorruptInputIsCorruptData) {
  ArraySpec spec = make_spec({500}, dtype("int32"));
  auto data = sample_data(spec);
  CodecChain chain = make_chain(R"([{"name":"bytes","configuration":{"endian":"little"}},
                                    {"name":"zstd","configuration":{"level":3,"checksum":true}}])", spec);
  ByteBuffer encoded = chain.encode(data);

  expect_error(ErrorKind::corrupt_data, {"codec zstd"}, [&] { decode_chunk(chain, to_bytes("definitely not zstd")); });
  expect_error(ErrorKind::corrupt_data, {"codec zstd", "empty"}, [&] { decode_chunk(chain, {}); });

  ByteBuffer damaged = encoded;
  damaged[damaged.size() - 2] ^= std::byte{0x5a};  // inside the checksum
  expect_error(ErrorKind::corrupt_data, {"codec zstd"}, [&] { decode_chunk(chain, damaged); });

  ByteBuffer trailing = encoded;
  trailing.push_back(std::byte{0x42});
  expect_error(ErrorKind::corrupt_data, {"codec zstd", "byte"}, [&] { decode_chunk(chain, trailing); });
}

TEST(ZstdCodec, TruncatedInputIsCorruptData) {
  ArraySpec spec = make_spec({500}, dtype("float64"));
  auto data = sample_data(spec);
  CodecChain chain = make_chain(R"([{"name":"bytes","configuration":{"endian":"little"}},{"name":"zstd"}])", spec);
  ByteBuffer encoded = chain.encode(data);
  for (std::size_t keep : {std::size_t{1}, std::size_t{8}, encoded.size() / 2, encoded.size() - 1}) {
    ByteSpan cut(encoded.data(), keep);
    expect_error(ErrorKind::corrupt_data, {"codec zstd"}, [&] { decode_chunk(chain, cut); });
  }
  ByteBuffer streamed = frame_without_content_size(data);
  streamed.resize(streamed.size() - 3);
  expect_error(ErrorKind::corrupt_data, {"codec zstd"}, [&] { decode_chunk(chain, streamed); });
}

TEST(ZstdCodec, DecompressionBombFailsBeforeAllocatingWhatItClaims) {
  ArraySpec spec = make_spec({1000}, dtype("uint8"));
  auto codec = make_compressor("zstd", "{}", spec);
  auto bomb = zeros(64 << 20);

  // A frame that declares 64 MiB: refused from its header.
  ByteBuffer declared = zstd_frame(bomb);
  ByteBuffer out;
  expect_error(ErrorKind::corrupt_data, {"codec zstd", "claim"}, [&] { codec->decode(declared, out, 1000); });
  EXPECT_LE(out.capacity(), 1000u);

  // A frame that does not say: decoding stops one byte past the limit.
  ByteBuffer undeclared = frame_without_content_size(bomb);
  expect_error(ErrorKind::corrupt_data, {"codec zstd", "more than the 1000 bytes"},
               [&] { codec->decode(undeclared, out, 1000); });
  EXPECT_LE(out.capacity(), 2002u);
}

TEST(ZstdCodec, DecodesOnManyThreadsAtOnce) {
  ArraySpec spec = make_spec({64, 64}, dtype("uint16"));
  auto data = sample_data(spec);
  CodecChain chain = make_chain(R"([{"name":"bytes","configuration":{"endian":"little"}},{"name":"zstd"}])", spec);
  ByteBuffer encoded = chain.encode(data);
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 50; ++i)
        if (decode_chunk(chain, encoded) != data) ++failures;
    });
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(failures, 0);
}

TEST(ZstdCodec, BadConfigurationIsInvalidMetadata) {
  ArraySpec spec = make_spec({10}, dtype("uint8"));
  expect_error(ErrorKind::invalid_metadata, {"zstd", "level"},
               [&] { make_compressor("zstd", R"({"level":"high"})", spec); });
  expect_error(ErrorKind::invalid_metadata, {"zstd", "checksum"},
               [&] { make_compressor("zstd", R"({"level":1,"checksum":"yes"})", spec); });
  expect_error(ErrorKind::invalid_metadata, {"numcodecs.zstd", "level"},
               [&] { make_compressor("numcodecs.zstd", R"({"level":1.5})", spec); });
}

}  // namespace
}  // namespace zarrdirect::codec

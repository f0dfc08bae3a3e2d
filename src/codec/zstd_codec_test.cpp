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

// One frame declaring a 128 MiB window and no content size, as a streaming writer may write it
// for a small chunk: fed as a stream (continue, then end), so the compressor cannot shrink the
// window to the input.
ByteBuffer frame_with_huge_window(ByteSpan data) {
  std::unique_ptr<ZSTD_CCtx, decltype(&ZSTD_freeCCtx)> context(ZSTD_createCCtx(), &ZSTD_freeCCtx);
  ZSTD_CCtx_setParameter(context.get(), ZSTD_c_contentSizeFlag, 0);
  ZSTD_CCtx_setParameter(context.get(), ZSTD_c_windowLog, 27);
  ByteBuffer frame(ZSTD_compressBound(data.size()));
  ZSTD_inBuffer input{data.data(), data.size(), 0};
  ZSTD_outBuffer output{frame.data(), frame.size(), 0};
  EXPECT_FALSE(ZSTD_isError(ZSTD_compressStream2(context.get(), &output, &input, ZSTD_e_continue)));
  EXPECT_EQ(ZSTD_compressStream2(context.get(), &output, &input, ZSTD_e_end), 0u);
  frame.resize(output.pos);
  return frame;
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
  ByteBuffer frame = frame_with_huge_window(data);
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


// ---- Prefix decoding: a read that needs the start of a chunk decodes no further ----------------

// The first n bytes decode_prefix leaves in a whole chunk's room.
ByteBuffer prefix_of(const CodecChain& chain, ByteSpan encoded, std::size_t n, bool* done) {
  ByteBuffer room(static_cast<std::size_t>(chain.decoded_spec().nbytes()), std::byte{0xEE});
  Scratch scratch;
  *done = chain.decode_prefix(encoded, room, n, scratch);
  room.resize(n);
  return room;
}

TEST(ZstdCodec, PrefixDecodingEqualsTheStartOfTheWholeChunk) {
  // 1 MiB: eight of zstd's 128 KiB blocks, so most prefixes end inside a later block.
  ArraySpec spec = make_spec({524288}, dtype("uint16"));
  auto data = sample_data(spec);
  const std::string codecs = R"([{"name":"bytes","configuration":{"endian":"little"}},{"name":"zstd","configuration":{"level":LEVEL,"checksum":false}}])";
  for (int level : {-3, 1, 3, 19}) {
    std::string json = codecs;
    json.replace(json.find("LEVEL"), 5, std::to_string(level));
    CodecChain chain = make_chain(json, spec);
    ByteBuffer encoded = chain.encode(data);
    for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{4095}, std::size_t{131071}, std::size_t{131072},
                          std::size_t{300001}, data.size() - 1, data.size()}) {
      SCOPED_TRACE("level " + std::to_string(level) + " prefix " + std::to_string(n));
      bool done = false;
      ByteBuffer got = prefix_of(chain, encoded, n, &done);
      ASSERT_TRUE(done);
      EXPECT_TRUE(std::equal(got.begin(), got.end(), data.begin()));
    }
  }
}

TEST(ZstdCodec, PrefixDecodingCrossesFramesAndUndeclaredSizes) {
  ArraySpec spec = make_spec({200000}, dtype("uint16"));
  auto data = sample_data(spec);
  CodecChain chain = make_chain(R"([{"name":"bytes","configuration":{"endian":"little"}},{"name":"zstd"}])", spec);
  ByteSpan all(data);
  ByteBuffer frames = zstd_frame(all.first(150000));
  ByteBuffer second = frame_without_content_size(all.subspan(150000));
  frames.insert(frames.end(), second.begin(), second.end());
  for (std::size_t n : {std::size_t{100}, std::size_t{150000}, std::size_t{150001}, std::size_t{399999}, data.size()}) {
    bool done = false;
    ByteBuffer got = prefix_of(chain, frames, n, &done);
    ASSERT_TRUE(done) << n;
    EXPECT_TRUE(std::equal(got.begin(), got.end(), data.begin())) << n;
  }
}

TEST(ZstdCodec, PrefixDecodingLeavesChecksumsAndOtherChainsToTheWholeDecode) {
  ArraySpec spec = make_spec({100000}, dtype("uint16"));
  auto data = sample_data(spec);
  bool done = true;
  // A content checksum covers the whole frame: only decode() can verify it.
  CodecChain checksummed = make_chain(
      R"([{"name":"bytes","configuration":{"endian":"little"}},{"name":"zstd","configuration":{"level":1,"checksum":true}}])",
      spec);
  prefix_of(checksummed, checksummed.encode(data), 1000, &done);
  EXPECT_FALSE(done);
  // A byte swap or a transpose between the compressor and the array needs the whole chunk.
  CodecChain big = make_chain(R"([{"name":"bytes","configuration":{"endian":"big"}},{"name":"zstd"}])", spec);
  done = true;
  prefix_of(big, big.encode(data), 1000, &done);
  EXPECT_FALSE(done);
  ArraySpec square = make_spec({200, 500}, dtype("uint16"));
  CodecChain transposed = make_chain(R"([{"name":"transpose","configuration":{"order":[1,0]}},
      {"name":"bytes","configuration":{"endian":"little"}},{"name":"zstd"}])", square);
  done = true;
  prefix_of(transposed, transposed.encode(data), 1000, &done);
  EXPECT_FALSE(done);
  // A frame asking for a window beyond the chunk (a streaming writer's) is valid, and decoded in
  // place like the others.
  ByteBuffer frame = frame_with_huge_window(data);
  CodecChain plain = make_chain(R"([{"name":"bytes","configuration":{"endian":"little"}},{"name":"zstd"}])", spec);
  done = false;
  ByteBuffer got = prefix_of(plain, frame, 1000, &done);
  EXPECT_TRUE(done);  // decoded in place: no window to reserve
  EXPECT_TRUE(std::equal(got.begin(), got.end(), data.begin()));
  EXPECT_EQ(decode_chunk(plain, frame), data);
}

ByteBuffer two_chunks(const std::vector<std::byte>& data) {
  ByteBuffer both(data.begin(), data.end());
  both.insert(both.end(), data.begin(), data.end());
  return both;
}

TEST(ZstdCodec, PrefixDecodingOfDamagedChunksFailsCleanly) {
  ArraySpec spec = make_spec({200000}, dtype("uint16"));
  auto data = sample_data(spec);
  CodecChain chain = make_chain(R"([{"name":"bytes","configuration":{"endian":"little"}},{"name":"zstd"}])", spec);
  ByteBuffer encoded = chain.encode(data);
  bool done = false;
  // Cut short: the frame walk refuses it before decoding.
  ByteBuffer cut(encoded.begin(), encoded.begin() + static_cast<std::ptrdiff_t>(encoded.size() / 2));
  expect_error(ErrorKind::corrupt_data, {"zstd"}, [&] { prefix_of(chain, cut, 1000, &done); });
  // A frame that decodes to fewer bytes than asked (a whole valid chunk of half the size).
  ByteBuffer half = zstd_frame(ByteSpan(data).first(data.size() / 2));
  expect_error(ErrorKind::corrupt_data, {"zstd", "fewer than"}, [&] { prefix_of(chain, half, data.size(), &done); });
  // Bytes flipped all through the compressed blocks: an error or bytes, never a crash or a hang.
  for (std::size_t at = 20; at < encoded.size(); at += 97) {
    ByteBuffer damaged = encoded;
    damaged[at] ^= std::byte{0x5A};
    try {
      prefix_of(chain, damaged, data.size() / 2, &done);
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::corrupt_data) << e.what();
    }
  }
  // More than the chunk holds, or room for less, is the caller's mistake.
  ByteBuffer room(data.size());
  ByteBuffer small(data.size() - 1);
  Scratch scratch;
  expect_error(ErrorKind::invalid_argument, {"decode_prefix"},
               [&] { chain.decode_prefix(encoded, room, data.size() + 1, scratch); });
  expect_error(ErrorKind::invalid_argument, {"decode_prefix"}, [&] { chain.decode_prefix(encoded, small, 10, scratch); });
  // A frame that decodes to more than the chunk holds.
  ByteBuffer doubled = zstd_frame(ByteSpan(two_chunks(data)));
  expect_error(ErrorKind::corrupt_data, {"zstd"}, [&] { prefix_of(chain, doubled, data.size(), &done); });
}

}  // namespace
}  // namespace zarrdirect::codec

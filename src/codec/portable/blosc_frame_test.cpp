#include "codec/portable/blosc_frame.hpp"

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <blosc.h>
#include <gtest/gtest.h>

namespace zarrdirect::codec::portable {
namespace {

using Bytes = std::vector<std::uint8_t>;

Bytes compress(const Bytes& data, const char* cname, int clevel, int shuffle, std::size_t typesize,
               std::size_t blocksize = 0) {
  Bytes out(data.size() + BLOSC_MAX_OVERHEAD);
  const int n = blosc_compress_ctx(clevel, shuffle, typesize, data.size(), data.data(), out.data(), out.size(), cname,
                                   blocksize, 1);
  EXPECT_GT(n, 0) << cname;
  out.resize(static_cast<std::size_t>(n > 0 ? n : 0));
  return out;
}

struct Decoded {
  DecodeStatus status = DecodeStatus::ok;
  Bytes bytes;
  BloscFrame frame;
};

// Plan, then every block on its own with its own scratch (heap buffers of exactly the planned
// sizes, so AddressSanitizer sees any byte written past them), in reverse order to show blocks
// do not depend on each other.
Decoded ours(const Bytes& buffer, std::uint64_t max_nbytes) {
  Decoded result;
  result.status = blosc_plan(buffer.data(), buffer.size(), max_nbytes, result.frame);
  if (result.status != DecodeStatus::ok) return result;
  result.bytes.assign(result.frame.nbytes, 0xcd);
  for (std::uint32_t i = result.frame.nblocks; i-- > 0;) {
    std::vector<std::uint8_t> scratch(result.frame.scratch_size());
    result.status = blosc_decode_block(result.frame, buffer.data(), i, result.bytes.data(),
                                       scratch.empty() ? nullptr : scratch.data());
    if (result.status != DecodeStatus::ok) return result;
  }
  return result;
}

bool reference(const Bytes& frame, std::size_t nbytes, Bytes& out) {
  out.assign(nbytes, 0);
  const int n = blosc_decompress_ctx(frame.data(), out.data(), out.size(), 1);
  return n >= 0 && static_cast<std::size_t>(n) == nbytes;
}

Bytes signal(std::size_t n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  Bytes out(n);
  for (std::size_t i = 0; i < n; ++i) {
    const auto sample = static_cast<std::uint32_t>(1000 + (i / 64) % 300 + rng() % 8);
    out[i] = static_cast<std::uint8_t>(i % 2 == 0 ? sample & 0xff : sample >> 8);
  }
  return out;
}

Bytes noise(std::size_t n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  Bytes out(n);
  for (auto& b : out) b = static_cast<std::uint8_t>(rng());
  return out;
}

void expect_matches(const Bytes& data, const char* cname, int clevel, int shuffle, std::size_t typesize,
                    std::size_t blocksize) {
  SCOPED_TRACE(testing::Message() << cname << " clevel " << clevel << " shuffle " << shuffle << " typesize "
                                  << typesize << " blocksize " << blocksize << ", " << data.size() << " bytes");
  const Bytes frame = compress(data, cname, clevel, shuffle, typesize, blocksize);
  ASSERT_FALSE(frame.empty());
  const Decoded decoded = ours(frame, data.size());
  ASSERT_EQ(decoded.status, DecodeStatus::ok) << describe(decoded.status);
  EXPECT_EQ(decoded.bytes, data);
  // The frame is read only as far as its header says: bytes after it change nothing.
  Bytes padded = frame;
  padded.resize(frame.size() + 16, 0xee);
  EXPECT_EQ(ours(padded, data.size()).bytes, data);
  // A caller that accepts one byte less is refused before anything is decoded.
  if (!data.empty()) {
    EXPECT_EQ(ours(frame, data.size() - 1).status, DecodeStatus::output_overflow);
  }
}

TEST(PortableBlosc, MatchesCBloscForEveryShuffleAndTypesize) {
  for (const char* cname : {"lz4", "lz4hc"})
    for (const int shuffle : {BLOSC_NOSHUFFLE, BLOSC_SHUFFLE, BLOSC_BITSHUFFLE})
      for (const std::size_t typesize : {1u, 2u, 4u, 8u, 3u, 16u, 24u})
        for (const std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{127}, std::size_t{1000},
                                    std::size_t{4096 * 3 + 5}, std::size_t{200000 + 24}}) {
          expect_matches(signal(n, static_cast<std::uint32_t>(n)), cname, 5, shuffle, typesize, 0);
          // Forced small blocks: many blocks, a partial last one (n is not a multiple).
          if (n > 1000) expect_matches(signal(n, 7), cname, 9, shuffle, typesize, 4096);
        }
}

TEST(PortableBlosc, IncompressibleAndMemcpyedFrames) {
  for (const std::size_t typesize : {1u, 4u})
    for (const int shuffle : {BLOSC_NOSHUFFLE, BLOSC_SHUFFLE, BLOSC_BITSHUFFLE}) {
      // Noise: streams stored raw (size equal to the decoded size) or the whole frame memcpyed.
      expect_matches(noise(100000 + 3, 1), "lz4", 5, shuffle, typesize, 0);
      expect_matches(noise(100000 + 3, 2), "lz4", 5, shuffle, typesize, 8192);
      // clevel 0: memcpyed, whatever the compressor (so blosclz too).
      for (const char* cname : {"lz4", "blosclz", "zstd"}) {
        const Bytes data = signal(50000 + 1, 3);
        const Bytes frame = compress(data, cname, 0, shuffle, typesize);
        ASSERT_NE(frame[2] & BLOSC_MEMCPYED, 0);
        const Decoded decoded = ours(frame, data.size());
        ASSERT_EQ(decoded.status, DecodeStatus::ok) << cname;
        EXPECT_EQ(decoded.bytes, data);
      }
    }
}

TEST(PortableBlosc, SplitAndUnsplitBlocks) {
  // c-blosc decides per frame whether blocks are split into one stream per byte of the type; the
  // flag it records must be honoured both ways.
  const Bytes data = signal(300000 + 8, 11);
  for (const int mode : {BLOSC_NEVER_SPLIT, BLOSC_ALWAYS_SPLIT, BLOSC_FORWARD_COMPAT_SPLIT}) {
    blosc_set_splitmode(mode);
    for (const std::size_t typesize : {2u, 4u, 8u})
      for (const int shuffle : {BLOSC_SHUFFLE, BLOSC_BITSHUFFLE}) {
        const Bytes frame = compress(data, "lz4", 5, shuffle, typesize, 16384);
        const bool split_flag_clear = (frame[2] & 0x10) == 0;
        EXPECT_EQ(split_flag_clear, mode != BLOSC_NEVER_SPLIT) << mode;
        const Decoded decoded = ours(frame, data.size());
        ASSERT_EQ(decoded.status, DecodeStatus::ok) << "split mode " << mode << " typesize " << typesize;
        EXPECT_EQ(decoded.bytes, data);
        // (c-blosc enlarges the blocks of a split frame, so the frame's own blocksize is asked about.)
        EXPECT_EQ(blosc_stream_count(decoded.frame, decoded.frame.blocksize), split_flag_clear ? typesize : 1u);
      }
  }
  blosc_set_splitmode(BLOSC_FORWARD_COMPAT_SPLIT);  // c-blosc's default, for the tests after this one
}

TEST(PortableBlosc, BlockStreamsTileEachBlockInsideTheFrame) {
  const Bytes data = signal(300000 + 8, 12);
  for (const int mode : {BLOSC_NEVER_SPLIT, BLOSC_ALWAYS_SPLIT}) {
    blosc_set_splitmode(mode);
    const Bytes frame = compress(data, "lz4", 5, BLOSC_SHUFFLE, 4, 16384);
    BloscFrame plan;
    ASSERT_EQ(blosc_plan(frame.data(), frame.size(), data.size(), plan), DecodeStatus::ok);
    for (std::uint32_t b = 0; b < plan.nblocks; ++b) {
      BloscStream streams[blosc_detail::kMaxSplits];
      std::uint32_t count = 0;
      ASSERT_EQ(blosc_block_streams(plan, frame.data(), b, streams, count), DecodeStatus::ok);
      ASSERT_EQ(count, blosc_stream_count(plan, plan.block_size(b)));
      std::uint32_t out = 0;
      for (std::uint32_t s = 0; s < count; ++s) {
        EXPECT_EQ(streams[s].out_offset, out);  // in order, back to back
        out += streams[s].size;
        EXPECT_LE(std::uint64_t{streams[s].offset} + streams[s].stored, plan.cbytes);
        if (s > 0) {
          EXPECT_EQ(streams[s].offset, streams[s - 1].offset + streams[s - 1].stored + 4);
        }
      }
      EXPECT_EQ(out, plan.block_size(b));
    }
    std::uint32_t count = 7;
    BloscStream streams[blosc_detail::kMaxSplits];
    EXPECT_EQ(blosc_block_streams(plan, frame.data(), plan.nblocks, streams, count), DecodeStatus::corrupt);
    EXPECT_EQ(count, 0u);
  }
  blosc_set_splitmode(BLOSC_FORWARD_COMPAT_SPLIT);
}

TEST(PortableBlosc, OtherCompressorsAreLeftToTheCpu) {
  const Bytes data = signal(100000, 5);
  for (const char* cname : {"blosclz", "zstd", "zlib"}) {
    const Bytes frame = compress(data, cname, 5, BLOSC_SHUFFLE, 2);
    BloscFrame plan;
    EXPECT_EQ(blosc_plan(frame.data(), frame.size(), data.size(), plan), DecodeStatus::unsupported) << cname;
  }
  Bytes frame = compress(data, "lz4", 5, BLOSC_SHUFFLE, 2);
  BloscFrame plan;
  for (const int version : {0, 1, 3, 4}) {  // c-blosc 1 reads version 2 only (3 and up: blosc 2)
    frame[0] = static_cast<std::uint8_t>(version);
    EXPECT_EQ(blosc_plan(frame.data(), frame.size(), data.size(), plan), DecodeStatus::unsupported);
  }
  frame[0] = 2;
  frame[2] |= 0x8;  // a flag blosc 1 does not define
  EXPECT_EQ(blosc_plan(frame.data(), frame.size(), data.size(), plan), DecodeStatus::unsupported);
}

void put_le32(Bytes& frame, std::size_t at, std::uint32_t value) {
  for (int i = 0; i < 4; ++i) frame[at + static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(value >> (8 * i));
}

TEST(PortableBlosc, RefusesBadHeadersAndTables) {
  const Bytes data = signal(400000, 9);
  const Bytes good = compress(data, "lz4", 5, BLOSC_SHUFFLE, 2, 8192);
  BloscFrame plan;
  ASSERT_EQ(blosc_plan(good.data(), good.size(), data.size(), plan), DecodeStatus::ok);
  ASSERT_GT(plan.nblocks, 2u);
  const auto status_of = [&](const Bytes& frame) { return ours(frame, data.size()).status; };

  EXPECT_EQ(status_of(Bytes(good.begin(), good.begin() + 15)), DecodeStatus::truncated);
  EXPECT_EQ(status_of(Bytes(good.begin(), good.end() - 1)), DecodeStatus::truncated);  // cbytes > input
  Bytes bad = good;
  put_le32(bad, 12, 15);  // cbytes smaller than the header
  EXPECT_EQ(status_of(bad), DecodeStatus::corrupt);
  bad = good;
  put_le32(bad, 4, 0xffffffffu);  // nbytes beyond the caller's limit
  EXPECT_EQ(status_of(bad), DecodeStatus::output_overflow);
  bad = good;
  put_le32(bad, 8, 0);  // blocksize 0
  EXPECT_EQ(status_of(bad), DecodeStatus::corrupt);
  bad = good;
  put_le32(bad, 8, 1);  // 100000 blocks: the start table cannot fit the frame
  EXPECT_EQ(status_of(bad), DecodeStatus::truncated);
  bad = good;
  bad[3] = 0;  // typesize 0
  EXPECT_EQ(status_of(bad), DecodeStatus::corrupt);
  bad = good;
  put_le32(bad, 16 + 4, static_cast<std::uint32_t>(good.size()));  // block 1 starts past the frame
  EXPECT_EQ(status_of(bad), DecodeStatus::corrupt);
  bad = good;
  put_le32(bad, 16 + 4, 16);  // block 1 starts inside the start table
  EXPECT_EQ(status_of(bad), DecodeStatus::corrupt);
  bad = good;
  // Block 0's first stream claims more bytes than the frame holds.
  put_le32(bad, 16 + 4 * plan.nblocks, 0x10000000u);
  EXPECT_EQ(status_of(bad), DecodeStatus::truncated);
  bad = good;
  put_le32(bad, 16 + 4 * plan.nblocks, 0x80000000u);  // negative stream size
  EXPECT_EQ(status_of(bad), DecodeStatus::corrupt);
  // Memcpyed, but shorter than nbytes.
  Bytes copied = compress(data, "lz4", 0, BLOSC_NOSHUFFLE, 1);
  copied.resize(copied.size() - 1);
  put_le32(copied, 12, static_cast<std::uint32_t>(copied.size()));
  EXPECT_EQ(status_of(copied), DecodeStatus::truncated);
  // Memcpyed, with a byte more than nbytes (c-blosc refuses it too).
  copied = compress(data, "lz4", 0, BLOSC_NOSHUFFLE, 1);
  copied.push_back(0);
  put_le32(copied, 12, static_cast<std::uint32_t>(copied.size()));
  EXPECT_EQ(status_of(copied), DecodeStatus::corrupt);
}

// Random byte flips and truncations of valid frames: never a read or write out of bounds (run
// under the sanitizer build), and whatever we decode, c-blosc decodes to the same bytes.
TEST(PortableBlosc, DamagedFramesAgreeWithCBlosc) {
  std::mt19937 rng(777);
  int decoded_ok = 0;
  int refused = 0;
  for (int round = 0; round < 1000; ++round) {
    const std::size_t n = 200 + rng() % 40000;
    const std::size_t typesize = std::size_t{1} << (rng() % 4);
    const int shuffle = static_cast<int>(rng() % 3);
    const Bytes data = signal(n, static_cast<std::uint32_t>(rng()));
    Bytes frame = compress(data, round % 2 == 0 ? "lz4" : "lz4hc", 1 + static_cast<int>(rng() % 9), shuffle,
                           typesize, rng() % 2 == 0 ? 0 : 1024);
    const auto kind = static_cast<unsigned>(rng() % 3);
    if (kind != 1) {
      const auto flips = 1 + static_cast<unsigned>(rng() % 3);
      // Mostly past the header (the header's own damage is covered above), sometimes in it.
      for (unsigned f = 0; f < flips; ++f) {
        const std::size_t at = rng() % 8 == 0 ? rng() % 16 : rng() % frame.size();
        frame[at] ^= static_cast<std::uint8_t>(1 + rng() % 255);
      }
    }
    if (kind != 0) frame.resize(rng() % frame.size());
    SCOPED_TRACE(testing::Message() << "round " << round);
    const Decoded decoded = ours(frame, n);
    if (decoded.status != DecodeStatus::ok) {
      ++refused;
      continue;
    }
    ++decoded_ok;
    Bytes expected;
    ASSERT_TRUE(reference(frame, decoded.frame.nbytes, expected))
        << "kind " << kind << " size " << frame.size() << " flags " << int(frame[2]) << " typesize " << typesize
        << " n " << n << " blocks " << decoded.frame.nblocks << " blocksize " << decoded.frame.blocksize
        << " cbytes " << decoded.frame.cbytes;
    ASSERT_EQ(decoded.bytes, expected);
  }
  EXPECT_GT(decoded_ok, 50);
  EXPECT_GT(refused, 50);
}

}  // namespace
}  // namespace zarrdirect::codec::portable

#include "codec/portable/lz4_block.hpp"

#include <cstdint>
#include <random>
#include <vector>

#include <gtest/gtest.h>
#include <lz4.h>
#include <lz4hc.h>

namespace zarrdirect::codec::portable {
namespace {

using Bytes = std::vector<std::uint8_t>;

Bytes compress(const Bytes& data, bool high_compression, int level = 9) {
  Bytes out(static_cast<std::size_t>(LZ4_compressBound(static_cast<int>(data.size()))));
  const char* src = reinterpret_cast<const char*>(data.data());
  char* dst = reinterpret_cast<char*>(out.data());
  const int n = high_compression
                    ? LZ4_compress_HC(src, dst, static_cast<int>(data.size()), static_cast<int>(out.size()), level)
                    : LZ4_compress_default(src, dst, static_cast<int>(data.size()), static_cast<int>(out.size()));
  EXPECT_GT(n, 0);
  out.resize(static_cast<std::size_t>(n));
  return out;
}

// liblz4's answer for a whole block of `capacity` decoded bytes: the bytes, or nothing on error.
bool reference_decode(const Bytes& block, std::size_t capacity, Bytes& out) {
  out.assign(capacity, 0);
  const int n = LZ4_decompress_safe(reinterpret_cast<const char*>(block.data()), reinterpret_cast<char*>(out.data()),
                                    static_cast<int>(block.size()), static_cast<int>(capacity));
  if (n < 0) return false;
  out.resize(static_cast<std::size_t>(n));
  return true;
}

// Ours, into a buffer exactly `capacity` long (a heap buffer, so AddressSanitizer sees any write
// past it).
DecodeOutcome ours(const Bytes& block, std::size_t capacity, Bytes& out) {
  out.assign(capacity, 0);
  const DecodeOutcome outcome = lz4_decode_block(block.data(), block.size(), out.data(), out.size());
  if (outcome.status == DecodeStatus::ok) out.resize(outcome.written);
  return outcome;
}

void expect_round_trip(const Bytes& data, const char* what) {
  for (const bool hc : {false, true}) {
    SCOPED_TRACE(testing::Message() << what << (hc ? " (HC)" : " (default)") << ", " << data.size() << " bytes");
    const Bytes block = compress(data, hc);
    Bytes decoded;
    const DecodeOutcome outcome = ours(block, data.size(), decoded);
    ASSERT_EQ(outcome.status, DecodeStatus::ok) << describe(outcome.status);
    EXPECT_EQ(outcome.written, data.size());
    EXPECT_EQ(decoded, data);
    Bytes exact(data.size());
    EXPECT_EQ(lz4_decode_block_exact(block.data(), block.size(), exact.data(), exact.size()), DecodeStatus::ok);
    // One byte less room is refused, never written past.
    if (!data.empty()) {
      Bytes small;
      EXPECT_NE(ours(block, data.size() - 1, small).status, DecodeStatus::ok);
    }
  }
}

Bytes random_bytes(std::size_t n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  Bytes out(n);
  for (auto& b : out) b = static_cast<std::uint8_t>(rng());
  return out;
}

// A smooth signal with a little noise, 2 bytes a sample (like the sample's microscopy data).
Bytes compressible_bytes(std::size_t n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  Bytes out(n);
  for (std::size_t i = 0; i < n; ++i) {
    const auto sample = static_cast<std::uint32_t>(1000 + (i / 64) % 300 + rng() % 4);
    out[i] = static_cast<std::uint8_t>(i % 2 == 0 ? sample & 0xff : sample >> 8);
  }
  return out;
}

TEST(PortableLz4Block, MatchesLiblz4OnGeneratedData) {
  for (const std::size_t n : {std::size_t{1}, std::size_t{2}, std::size_t{5}, std::size_t{12}, std::size_t{13},
                              std::size_t{16}, std::size_t{100}, std::size_t{4096}, std::size_t{65536 + 7},
                              std::size_t{1} << 20}) {
    expect_round_trip(random_bytes(n, static_cast<std::uint32_t>(n)), "random");
    expect_round_trip(compressible_bytes(n, static_cast<std::uint32_t>(n)), "compressible");
  }
}

TEST(PortableLz4Block, EmptyBlockIsTheSingleZeroToken) {
  const Bytes block = compress({}, false);
  ASSERT_EQ(block, Bytes{0});
  Bytes decoded;
  const DecodeOutcome outcome = ours(block, 0, decoded);
  EXPECT_EQ(outcome.status, DecodeStatus::ok);
  EXPECT_EQ(outcome.written, 0u);
  EXPECT_EQ(ours(Bytes{1}, 0, decoded).status, DecodeStatus::output_overflow);
  EXPECT_EQ(ours(Bytes{}, 0, decoded).status, DecodeStatus::truncated);
  EXPECT_EQ(ours(Bytes{}, 10, decoded).status, DecodeStatus::truncated);
}

TEST(PortableLz4Block, LongAndOverlappingMatches) {
  // One byte repeated (offset 1), short periods (offsets 2..15, overlapping copies), and a long
  // run whose match length needs many 255 extension bytes.
  expect_round_trip(Bytes(300000, 7), "one byte repeated");
  for (std::size_t period = 2; period < 16; ++period) {
    Bytes data(5000 + period);
    for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<std::uint8_t>(i % period * 37 + 1);
    expect_round_trip(data, "short period");
  }
  // Long literal runs (random) between long matches (zeros).
  Bytes mixed;
  for (int part = 0; part < 6; ++part) {
    const Bytes noise = random_bytes(1000 + 300 * part, static_cast<std::uint32_t>(part));
    mixed.insert(mixed.end(), noise.begin(), noise.end());
    mixed.insert(mixed.end(), 70000, 0);
  }
  expect_round_trip(mixed, "literal runs between long matches");
}

TEST(PortableLz4Block, LastLiteralsOfExactly15Bytes) {
  // A final literal run of exactly 15 bytes needs one extension byte of 0 and ends the input
  // exactly 15 bytes after it: valid, and easy to get wrong by one.
  const Bytes data = random_bytes(15, 3);
  Bytes block{0xf0, 0x00};
  block.insert(block.end(), data.begin(), data.end());
  Bytes reference, decoded;
  ASSERT_TRUE(reference_decode(block, 15, reference));
  ASSERT_EQ(ours(block, 15, decoded).status, DecodeStatus::ok);
  EXPECT_EQ(decoded, data);
}

// Hand-made blocks the format forbids.
TEST(PortableLz4Block, RefusesBadOffsetsAndEndRules) {
  Bytes decoded, reference;
  // 4 literals "abcd", then a match of offset 0 (never written by an encoder), then 5 literals.
  const Bytes offset_zero{0x40, 'a', 'b', 'c', 'd', 0x00, 0x00, 0x50, 'v', 'w', 'x', 'y', 'z'};
  EXPECT_EQ(ours(offset_zero, 64, decoded).status, DecodeStatus::corrupt);
  // Offset 5 with only 4 bytes written: would read before the output's start.
  const Bytes before_start{0x40, 'a', 'b', 'c', 'd', 0x05, 0x00, 0x50, 'v', 'w', 'x', 'y', 'z'};
  EXPECT_EQ(ours(before_start, 64, decoded).status, DecodeStatus::corrupt);
  EXPECT_FALSE(reference_decode(before_start, 64, reference));
  // Offset 4 is fine: "abcd" + "abcd" + "stuvwxyz" (the first literals end 12 bytes before the
  // end, as the format requires of a sequence that is not the last).
  const Bytes good{0x40, 'a', 'b', 'c', 'd', 0x04, 0x00, 0x80, 's', 't', 'u', 'v', 'w', 'x', 'y', 'z'};
  ASSERT_EQ(ours(good, 16, decoded).status, DecodeStatus::ok);
  EXPECT_EQ(decoded, (Bytes{'a', 'b', 'c', 'd', 'a', 'b', 'c', 'd', 's', 't', 'u', 'v', 'w', 'x', 'y', 'z'}));
  ASSERT_TRUE(reference_decode(good, 16, reference));
  EXPECT_EQ(reference, decoded);
  // The same block into 15 bytes: too little room; refused by both.
  EXPECT_NE(ours(good, 15, decoded).status, DecodeStatus::ok);
  EXPECT_FALSE(reference_decode(good, 15, reference));
  // A match of 8 that would end within the last 5 bytes (4 + 8 + 5 > 16); padded so that its
  // literals are not taken for the last ones.
  const Bytes match_into_tail{0x44, 'a', 'b', 'c', 'd', 0x04, 0x00, 0x40, 'w', 'x', 'y', 'z', 0, 0, 0, 0};
  EXPECT_EQ(ours(match_into_tail, 16, decoded).status, DecodeStatus::output_overflow);
  EXPECT_FALSE(reference_decode(match_into_tail, 16, reference));
  // A block that ends with a match (no last literals) is refused.
  const Bytes ends_in_match{0x40, 'a', 'b', 'c', 'd', 0x04, 0x00};
  EXPECT_NE(ours(ends_in_match, 64, decoded).status, DecodeStatus::ok);
  EXPECT_FALSE(reference_decode(ends_in_match, 64, reference));
  // Bytes after the last literals.
  const Bytes trailing{0x30, 'a', 'b', 'c', 0x00};
  EXPECT_EQ(ours(trailing, 64, decoded).status, DecodeStatus::corrupt);
  EXPECT_FALSE(reference_decode(trailing, 64, reference));
  // A literal length that runs off the input (255-extension bytes to the end).
  Bytes endless_length(41, 0xff);
  endless_length[0] = 0xf0;
  EXPECT_EQ(ours(endless_length, 1 << 20, decoded).status, DecodeStatus::truncated);
  // Literals longer than the room.
  const Bytes too_long{0x50, 'a', 'b', 'c', 'd', 'e'};
  EXPECT_EQ(ours(too_long, 4, decoded).status, DecodeStatus::output_overflow);
  // Exact size wanted, fewer decoded.
  Bytes six(6);
  EXPECT_EQ(lz4_decode_block_exact(too_long.data(), too_long.size(), six.data(), six.size()),
            DecodeStatus::size_mismatch);
}

// Random byte flips and truncations of valid blocks: never a read or write out of bounds (run
// under the sanitizer build), and whatever we accept, liblz4 accepts with the same bytes. liblz4
// accepting what we refuse is allowed only for a match offset of 0, which we refuse on purpose.
TEST(PortableLz4Block, DamagedBlocksAgreeWithLiblz4) {
  std::mt19937 rng(12345);  // 32-bit results: the casts below lose nothing
  int agreed_ok = 0;
  int agreed_error = 0;
  for (int round = 0; round < 3000; ++round) {
    const std::size_t n = 1 + rng() % 3000;
    const Bytes data = round % 3 == 0 ? random_bytes(n, static_cast<std::uint32_t>(rng()))
                                      : compressible_bytes(n, static_cast<std::uint32_t>(rng()));
    Bytes block = compress(data, round % 2 == 1, 1 + static_cast<int>(rng() % 12));
    const auto kind = static_cast<unsigned>(rng() % 3);
    if (kind == 0 || kind == 2) {
      const unsigned flips = 1 + rng() % 4;
      for (unsigned f = 0; f < flips; ++f) block[rng() % block.size()] ^= static_cast<std::uint8_t>(1 + rng() % 255);
    }
    if (kind == 1 || kind == 2) block.resize(rng() % block.size());
    const std::size_t capacity = rng() % 4 == 0 ? n + rng() % 64 : n;
    SCOPED_TRACE(testing::Message() << "round " << round << ", " << block.size() << " bytes into " << capacity);
    Bytes mine, reference;
    const DecodeOutcome outcome = ours(block, capacity, mine);
    const bool reference_ok = reference_decode(block, capacity, reference);
    if (outcome.status == DecodeStatus::ok) {
      ASSERT_TRUE(reference_ok);
      ASSERT_EQ(mine, reference);
      ++agreed_ok;
    } else if (reference_ok) {
      ASSERT_EQ(outcome.status, DecodeStatus::corrupt) << "liblz4 accepts what we call " << describe(outcome.status);
    } else {
      ++agreed_error;
    }
  }
  // Both outcomes must actually occur, or the loop tests nothing.
  EXPECT_GT(agreed_ok, 100);
  EXPECT_GT(agreed_error, 100);
}

}  // namespace
}  // namespace zarrdirect::codec::portable

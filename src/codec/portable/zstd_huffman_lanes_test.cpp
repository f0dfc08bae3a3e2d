// A Huffman stream split over lanes decodes to what the serial decoder gives, for every number of
// lanes: the same symbols for valid streams, the same refusal for damaged ones, nothing written
// past the symbols asked for. Streams come from a small encoder here (random complete codes, the
// table built by the real tree reader) and from random and damaged bytes.
#include "codec/portable/zstd_huffman_lanes.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

namespace zarrdirect::codec::portable::zstd_detail {
namespace {

using Bytes = std::vector<std::uint8_t>;

constexpr std::uint32_t kLaneCounts[] = {1, 2, 3, 5, 8, 13, 32};
constexpr std::size_t kGuard = 16;
constexpr std::uint8_t kGuardByte = 0xcd;

// A random complete prefix code over `symbols` of the byte values 0-128 (the directly stored
// weights hold at most 128), no code longer than max_length: leaves of a binary tree split at random.
struct Code {
  std::vector<std::uint32_t> lengths = std::vector<std::uint32_t>(129, 0);  // 0: absent
};
Code random_code(std::mt19937& rng, std::uint32_t symbols, std::uint32_t max_length) {
  symbols = std::min(symbols, 1u << max_length);
  std::vector<std::uint32_t> leaves{0};
  while (leaves.size() < symbols) {
    const std::size_t pick = rng() % leaves.size();
    if (leaves[pick] >= max_length) continue;
    const std::uint32_t depth = leaves[pick] + 1;
    leaves[pick] = depth;
    leaves.push_back(depth);
  }
  std::vector<std::uint32_t> values(129);
  for (std::uint32_t v = 0; v < 129; ++v) values[v] = v;
  std::shuffle(values.begin(), values.end(), rng);
  Code code;
  for (std::size_t i = 0; i < leaves.size(); ++i) code.lengths[values[i]] = leaves[i];
  return code;
}

// The tree description with directly stored weights, read by huffman_read_table.
HuffmanTable table_of(const Code& code) {
  std::uint32_t longest = 0;
  std::uint32_t last = 0;
  for (std::uint32_t s = 0; s < code.lengths.size(); ++s) {
    longest = std::max(longest, code.lengths[s]);
    if (code.lengths[s] > 0) last = s;
  }
  const std::uint32_t stored = last;  // every weight before the last symbol's, which is implied
  Bytes description{static_cast<std::uint8_t>(127 + stored)};
  for (std::uint32_t s = 0; s < stored; ++s) {
    const std::uint32_t weight = code.lengths[s] == 0 ? 0 : longest + 1 - code.lengths[s];
    if (s % 2 == 0) description.push_back(static_cast<std::uint8_t>(weight << 4));
    else description.back() |= static_cast<std::uint8_t>(weight);
  }
  HuffmanTable table;
  std::uint64_t used = 0;
  EXPECT_EQ(huffman_read_table(description.data(), description.size(), table, used), DecodeStatus::ok);
  EXPECT_EQ(used, description.size());
  EXPECT_EQ(table.max_bits, longest);
  return table;
}

// A backward stream of `symbols`: the first symbol's code in the highest bits below the end marker.
Bytes encode(const HuffmanTable& table, const std::vector<std::uint8_t>& symbols) {
  std::uint32_t first_entry[256];
  std::fill(std::begin(first_entry), std::end(first_entry), UINT32_MAX);
  for (std::uint32_t i = (1u << table.max_bits); i-- > 0;) first_entry[table.entries[i] & 0xff] = i;
  std::uint64_t total = 0;
  for (const std::uint8_t s : symbols) total += table.entries[first_entry[s]] >> 8;
  Bytes stream(total / 8 + 1, 0);
  std::uint64_t position = total;
  for (const std::uint8_t s : symbols) {
    const std::uint32_t length = table.entries[first_entry[s]] >> 8;
    const std::uint32_t value = first_entry[s] >> (table.max_bits - length);
    position -= length;
    for (std::uint32_t b = 0; b < length; ++b)
      if ((value >> b) & 1) stream[(position + b) / 8] |= static_cast<std::uint8_t>(1u << ((position + b) % 8));
  }
  stream[total / 8] |= static_cast<std::uint8_t>(1u << (total % 8));
  return stream;
}

std::vector<std::uint8_t> random_symbols(std::mt19937& rng, const Code& code, std::size_t n) {
  std::vector<std::uint8_t> present;
  for (std::uint32_t s = 0; s < code.lengths.size(); ++s)
    if (code.lengths[s] > 0) present.push_back(static_cast<std::uint8_t>(s));
  // Skewed towards the short codes, as real literals are: the lower of two picks by code length.
  std::vector<std::uint8_t> out(n);
  for (auto& s : out) {
    const std::uint8_t a = present[rng() % present.size()];
    const std::uint8_t b = present[rng() % present.size()];
    s = code.lengths[a] <= code.lengths[b] ? a : b;
  }
  return out;
}

struct Decoded {
  DecodeStatus status;
  Bytes symbols;
};

Decoded serial(const HuffmanTable& table, const Bytes& stream, std::uint64_t count) {
  Bytes out(count + kGuard, kGuardByte);
  const DecodeStatus status = huffman_decode_stream(table, stream.data(), stream.size(), out.data(), count);
  return {status, out};
}

Decoded with_lanes(const HuffmanTable& table, const Bytes& stream, std::uint64_t count, std::uint32_t lanes) {
  Bytes out(count + kGuard, kGuardByte);
  const DecodeStatus status = huffman_decode_stream_lanes(table, stream.data(), stream.size(), out.data(), count, lanes);
  for (std::size_t k = 0; k < kGuard; ++k) EXPECT_EQ(out[count + k], kGuardByte) << "written past the symbols";
  return {status, out};
}

TEST(ZstdHuffmanLanes, ValidStreamsDecodeToTheirSymbolsWithAnyLanes) {
  std::mt19937 rng(3);
  for (int trial = 0; trial < 60; ++trial) {
    const auto symbols = static_cast<std::uint32_t>(2 + rng() % 127);
    const std::uint32_t longest = std::max<std::uint32_t>(8, std::min<std::uint32_t>(kHuffmanMaxBits, 1 + trial % 11));
    const Code code = random_code(rng, symbols, longest);
    const HuffmanTable table = table_of(code);
    const std::size_t n = trial % 7 == 0 ? rng() % 40 : rng() % 40000;
    const auto original = random_symbols(rng, code, n);
    const Bytes stream = encode(table, original);
    for (const std::uint32_t lanes : kLaneCounts) {
      SCOPED_TRACE(testing::Message() << "trial " << trial << ", " << n << " symbols, " << lanes << " lanes");
      const Decoded got = with_lanes(table, stream, n, lanes);
      ASSERT_EQ(got.status, DecodeStatus::ok) << describe(got.status);
      ASSERT_TRUE(std::equal(original.begin(), original.end(), got.symbols.begin()));
    }
  }
}

TEST(ZstdHuffmanLanes, DamagedStreamsAndWrongCountsAreRefusedAsTheSerialDecoderRefusesThem) {
  std::mt19937 rng(5);
  int refused = 0;
  int accepted = 0;
  for (int trial = 0; trial < 400; ++trial) {
    const Code code = random_code(rng, static_cast<std::uint32_t>(2 + rng() % 127),
                                  static_cast<std::uint32_t>(1 + rng() % kHuffmanMaxBits));
    const HuffmanTable table = table_of(code);
    const std::size_t n = rng() % 3000;
    Bytes stream = encode(table, random_symbols(rng, code, n));
    std::uint64_t count = n;
    switch (trial % 5) {
      case 0:  // bits flipped
        for (int f = 0; f < 1 + trial % 4; ++f) stream[rng() % stream.size()] ^= static_cast<std::uint8_t>(1u << (rng() % 8));
        break;
      case 1:  // a count one off
        count = n == 0 || rng() % 2 ? n + 1 : n - 1;
        break;
      case 2:  // cut short, the marker moved into the new last byte
        stream.resize(1 + rng() % stream.size());
        stream.back() |= 0x80;
        break;
      case 3:  // random bytes
        for (auto& b : stream) b = static_cast<std::uint8_t>(rng());
        break;
      default:  // bytes before the stream's start taken as part of it
        stream.insert(stream.begin(), static_cast<std::uint8_t>(rng()));
        break;
    }
    const Decoded expected = serial(table, stream, count);
    (expected.status == DecodeStatus::ok ? accepted : refused) += 1;
    for (const std::uint32_t lanes : kLaneCounts) {
      SCOPED_TRACE(testing::Message() << "trial " << trial << ", " << lanes << " lanes");
      const Decoded got = with_lanes(table, stream, count, lanes);
      ASSERT_EQ(got.status, expected.status) << describe(got.status);
      if (got.status == DecodeStatus::ok) {
        ASSERT_TRUE(std::equal(got.symbols.begin(), got.symbols.begin() + static_cast<std::ptrdiff_t>(count),
                               expected.symbols.begin()));
      }
    }
  }
  EXPECT_GT(refused, 200);  // the damage was seen
  EXPECT_GT(accepted, 20);  // flips that left a valid stream decode as the serial decoder decodes them
}

TEST(ZstdHuffmanLanes, CodesThatNeverResynchronizeStillDecodeExactly) {
  // Four symbols of two bits each: a lane whose share starts an odd number of bits from a code
  // boundary never meets the true boundaries, so each lane's start is settled one round at a time.
  Code code;
  for (std::uint32_t s = 0; s < 4; ++s) code.lengths[s] = 2;
  const HuffmanTable table = table_of(code);
  std::mt19937 rng(7);
  for (const std::size_t n : {1u, 3u, 31u, 33u, 997u, 20001u}) {
    std::vector<std::uint8_t> original(n);
    for (auto& s : original) s = static_cast<std::uint8_t>(rng() % 4);
    const Bytes stream = encode(table, original);
    for (const std::uint32_t lanes : kLaneCounts) {
      SCOPED_TRACE(testing::Message() << n << " symbols, " << lanes << " lanes");
      const Decoded got = with_lanes(table, stream, n, lanes);
      ASSERT_EQ(got.status, DecodeStatus::ok) << describe(got.status);
      ASSERT_TRUE(std::equal(original.begin(), original.end(), got.symbols.begin()));
    }
  }
}

TEST(ZstdHuffmanLanes, TinyAndMalformedStreams) {
  Code code;
  code.lengths[0] = code.lengths[1] = 1;
  const HuffmanTable table = table_of(code);
  const Bytes marker_only{0x01};  // no bits: no symbols
  for (const std::uint32_t lanes : kLaneCounts) {
    EXPECT_EQ(with_lanes(table, marker_only, 0, lanes).status, DecodeStatus::ok);
    EXPECT_EQ(with_lanes(table, marker_only, 1, lanes).status, DecodeStatus::corrupt);
    EXPECT_EQ(with_lanes(table, Bytes{0x00}, 0, lanes).status, DecodeStatus::corrupt);  // no end marker
    EXPECT_EQ(with_lanes(table, Bytes{}, 0, lanes).status, DecodeStatus::corrupt);
    const Decoded five = with_lanes(table, Bytes{0b00110110}, 5, lanes);  // 5 one-bit codes: 1,0,1,1,0
    ASSERT_EQ(five.status, DecodeStatus::ok);
    EXPECT_EQ(Bytes(five.symbols.begin(), five.symbols.begin() + 5), (Bytes{1, 0, 1, 1, 0}));
  }
  EXPECT_EQ(huffman_decode_stream_lanes(table, marker_only.data(), 1, nullptr, 0, 0), DecodeStatus::corrupt);
  EXPECT_EQ(huffman_decode_stream_lanes(table, marker_only.data(), 1, nullptr, 0, kHuffmanMaxLanes + 1),
            DecodeStatus::corrupt);
  HuffmanTable none;
  EXPECT_EQ(huffman_decode_stream_lanes(none, marker_only.data(), 1, nullptr, 0, 8), DecodeStatus::corrupt);
}

TEST(ZstdHuffmanLanes, SharesCoverTheStreamOnce) {
  for (const std::int64_t bits : {0, 1, 7, 31, 32, 33, 1000, 262143}) {
    for (const std::uint32_t lanes : kLaneCounts) {
      std::int64_t expected_start = bits;
      for (std::uint32_t lane = 0; lane < lanes; ++lane) {
        const HuffmanShare share = huffman_lane_share(bits, lane, lanes);
        EXPECT_EQ(share.start, expected_start);
        EXPECT_LE(share.stop, share.start);
        EXPECT_GE(share.stop, 0);
        expected_start = share.stop;
      }
      EXPECT_EQ(expected_start, 0) << bits << " bits, " << lanes << " lanes";
    }
  }
}

}  // namespace
}  // namespace zarrdirect::codec::portable::zstd_detail

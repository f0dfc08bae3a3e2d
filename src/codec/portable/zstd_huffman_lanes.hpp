// One Huffman stream of zstd literals decoded by several lanes at once (a GPU warp's, or part of
// one), so that a batch of few blocks does not wait on one thread walking each stream's 30,000-odd
// codes one after another.
//
// A stream's codes have no markers between them, so a lane cannot know where a code starts inside
// the stream without decoding everything before it. Prefix codes resynchronize, though: a decoder
// started at an arbitrary bit soon lands on a true code boundary, and from there it decodes what a
// decoder from the start would. So each lane takes an equal share of the stream's bits and:
//
//   1. counts the codes that start in its share, beginning at the top of its share as if a code
//      started there (huffman_count_segment); where it stops (the first code start at or below its
//      share's end) is where the next lane's first code truly starts, if this lane began right;
//   2. repeatedly, each lane whose start changed (it is given the previous lane's end) decodes
//      from the new start and the old one in step until both reach one position, after which the
//      old count holds (huffman_resync_segment); the first lane's start is right, so after k rounds
//      the first k + 1 lanes are right: at most `lanes` rounds, one or two on a real stream;
//   3. the counts' prefix sums give each lane where its symbols go; the stream is valid exactly
//      when the codes end at the stream's first bit and number what the section says, as the
//      serial decoder (huffman_decode_stream) requires; then each lane decodes its share again,
//      writing (huffman_write_segment).
//
// Positions are BackwardBits positions (bits left above the stream's start; a code starting at p
// reads bits [p - length, p)). A lane's share is the code starts in (stop, start]. Every loop
// advances by a code's length, at least one bit, so each lane's work is bounded by its share plus
// one code, whatever the bytes hold; the rounds of step 2 by the lanes.
#pragma once

#include <cstdint>

#include "codec/portable/decode_status.hpp"
#include "codec/portable/zstd_bits.hpp"
#include "codec/portable/zstd_huffman.hpp"

namespace zarrdirect::codec::portable::zstd_detail {

// The most lanes one stream is split over (a warp).
constexpr std::uint32_t kHuffmanMaxLanes = 32;

// The position of a stream's first code (the bits below its end marker), or -1 for an empty stream
// or a last byte without the marker (corrupt).
ZD_HOST_DEVICE inline std::int64_t huffman_stream_bits(const std::uint8_t* stream, std::uint64_t size) {
  if (size == 0 || stream[size - 1] == 0) return -1;
  return static_cast<std::int64_t>((size - 1) * 8 + highbit(stream[size - 1]));
}

// Lane `lane` of `lanes`' share of a stream of `bits` bits: code starts in (stop, start].
struct HuffmanShare {
  std::int64_t start = 0;
  std::int64_t stop = 0;
};
ZD_HOST_DEVICE inline HuffmanShare huffman_lane_share(std::int64_t bits, std::uint32_t lane, std::uint32_t lanes) {
  const std::int64_t length = (bits + lanes - 1) / lanes;
  const std::int64_t start = bits - length * lane;
  const std::int64_t stop = start - length;
  return {start > 0 ? start : 0, stop > 0 ? stop : 0};
}

// Where a lane's decoding stopped (the first code start at or below its share's stop, or its start
// when that was already there) and the codes it decoded.
struct HuffmanRun {
  std::int64_t end = 0;
  std::uint32_t count = 0;
};

namespace huffman_lanes_detail {

// A backward reader placed at `at` (its window is loaded by the first read).
ZD_HOST_DEVICE ZD_ZSTD_INLINE BackwardBits reader_at(const std::uint8_t* stream, std::uint64_t size, std::int64_t at) {
  BackwardBits bits;
  bits.data = stream;
  bits.size = size;
  bits.pos = at;
  bits.window_low = INT64_MAX / 2;  // below any read: the first peek refills
  return bits;
}

// Consumes the code at the reader's position; returns its length.
ZD_HOST_DEVICE ZD_ZSTD_INLINE std::uint32_t skip_code(const HuffmanTable& table, BackwardBits& bits) {
  const std::uint32_t length = table.entries[bits.peek(table.max_bits)] >> 8;
  bits.skip(length);
  return length;
}

}  // namespace huffman_lanes_detail

// Step 1: the codes from `start` while they start above `stop` (table built: max_bits > 0).
ZD_HOST_DEVICE inline HuffmanRun huffman_count_segment(const HuffmanTable& table, const std::uint8_t* stream,
                                                       std::uint64_t size, std::int64_t start, std::int64_t stop) {
  BackwardBits bits = huffman_lanes_detail::reader_at(stream, size, start);
  const std::uint32_t code_shift = 64 - table.max_bits;
  std::uint32_t count = 0;
  // Four codes a reload while the fourth surely starts above stop (the first three take at most
  // 33 bits), as the serial decoder's loop does; then one at a time.
  while (bits.pos > stop + 3 * static_cast<std::int64_t>(kHuffmanMaxBits)) {
    std::uint64_t window = bits.left_aligned();
    std::uint32_t consumed = 0;
    for (std::uint32_t k = 0; k < 4; ++k) {
      const std::uint32_t length = table.entries[window >> code_shift] >> 8;
      window <<= length;
      consumed += length;
    }
    bits.skip(consumed);
    count += 4;
  }
  while (bits.pos > stop) {
    huffman_lanes_detail::skip_code(table, bits);
    ++count;
  }
  return {bits.pos, count};
}

// Step 2: the run of a lane whose start moved from old_start (where `old_run` was counted) to
// new_start. Both paths advance, the one further behind first, until they meet (from there the
// old run's codes are the new one's) or both pass stop (the new path is the whole answer).
ZD_HOST_DEVICE inline HuffmanRun huffman_resync_segment(const HuffmanTable& table, const std::uint8_t* stream,
                                                        std::uint64_t size, std::int64_t old_start, HuffmanRun old_run,
                                                        std::int64_t new_start, std::int64_t stop) {
  BackwardBits old_path = huffman_lanes_detail::reader_at(stream, size, old_start);
  BackwardBits new_path = huffman_lanes_detail::reader_at(stream, size, new_start);
  std::uint32_t old_codes = 0;
  std::uint32_t new_codes = 0;
  while (old_path.pos != new_path.pos && (old_path.pos > stop || new_path.pos > stop)) {
    if (old_path.pos > new_path.pos) {
      huffman_lanes_detail::skip_code(table, old_path);
      ++old_codes;
    } else {
      huffman_lanes_detail::skip_code(table, new_path);
      ++new_codes;
    }
  }
  // Met: the old path took old_codes of its run to get there (at most all of it, which it counted
  // while above stop); the rest is shared.
  if (old_path.pos == new_path.pos) return {old_run.end, old_run.count - old_codes + new_codes};
  return {new_path.pos, new_codes};
}

// Step 3: `count` symbols from `start` into out; true when they end at `end` (as counted).
ZD_HOST_DEVICE inline bool huffman_write_segment(const HuffmanTable& table, const std::uint8_t* stream,
                                                 std::uint64_t size, std::int64_t start, std::int64_t end,
                                                 std::uint8_t* out, std::uint64_t count) {
  BackwardBits bits = huffman_lanes_detail::reader_at(stream, size, start);
  huffman_decode_symbols(table, bits, out, count);
  return bits.pos == end;
}

// The three steps run lane after lane on one thread: what the GPU's lanes compute together (the
// kernel's driver, in cuda/zstd_decode_kernels.cu, trades the arrays below for warp shuffles). For
// the host tests and the host run of GPU jobs. lanes: 1 to kHuffmanMaxLanes.
ZD_HOST_DEVICE inline DecodeStatus huffman_decode_stream_lanes(const HuffmanTable& table, const std::uint8_t* stream,
                                                               std::uint64_t size, std::uint8_t* out,
                                                               std::uint64_t count, std::uint32_t lanes) {
  const std::int64_t bits = huffman_stream_bits(stream, size);
  if (bits < 0 || table.max_bits == 0 || lanes == 0 || lanes > kHuffmanMaxLanes) return DecodeStatus::corrupt;
  std::int64_t starts[kHuffmanMaxLanes];
  std::int64_t stops[kHuffmanMaxLanes];
  HuffmanRun runs[kHuffmanMaxLanes];
  for (std::uint32_t lane = 0; lane < lanes; ++lane) {
    const HuffmanShare share = huffman_lane_share(bits, lane, lanes);
    starts[lane] = share.start;
    stops[lane] = share.stop;
    runs[lane] = huffman_count_segment(table, stream, size, starts[lane], stops[lane]);
  }
  // Lane by lane in order, one pass settles every start (the GPU's rounds converge to the same).
  for (std::uint32_t lane = 1; lane < lanes; ++lane) {
    const std::int64_t start = runs[lane - 1].end;
    if (start == starts[lane]) continue;
    runs[lane] = huffman_resync_segment(table, stream, size, starts[lane], runs[lane], start, stops[lane]);
    starts[lane] = start;
  }
  std::uint64_t total = 0;
  for (std::uint32_t lane = 0; lane < lanes; ++lane) total += runs[lane].count;
  if (runs[lanes - 1].end != 0 || total != count) return DecodeStatus::corrupt;
  std::uint64_t at = 0;
  for (std::uint32_t lane = 0; lane < lanes; ++lane) {
    if (!huffman_write_segment(table, stream, size, starts[lane], runs[lane].end, out + at, runs[lane].count))
      return DecodeStatus::corrupt;
    at += runs[lane].count;
  }
  return DecodeStatus::ok;
}

}  // namespace zarrdirect::codec::portable::zstd_detail

// The LZ4 block format (no frame): what numcodecs' `lz4` codec stores after its 4-byte size header
// and what blosc stores in each of its lz4 / lz4hc streams. Written once for the CPU and the GPU
// (header-only, no CUDA in its logic): the host tests it against liblz4, the kernels in src/cuda/
// run the same code on the device.
//
// Safe on hostile input: every literal run, match offset and match length is checked against the
// bytes left in the input and the room left in the output before anything is read or written, so
// no input can make it touch memory outside [src, src + src_size) and [dst, dst + dst_capacity).
// It accepts what LZ4_decompress_safe accepts for a whole block whose decoded size is dst_capacity
// (including the format's end-of-block rules: the last 5 bytes are literals, the last match starts
// at least 12 bytes before the end), except that it also refuses a match offset of 0, which no
// encoder writes.
#pragma once

#include <cstdint>

#include "codec/portable/decode_status.hpp"

namespace zarrdirect::codec::portable {

namespace lz4_detail {

// The format's constants (lz4_Block_format.md): a match is at least 4 bytes; the last 5 bytes of a
// block are literals; the last match starts at least 12 bytes before the block's end. The decoder
// of the reference library enforces the last two against the output capacity and, for the input,
// requires that a sequence whose literals reach within 8 bytes of the input's end be the last.
constexpr std::uint64_t kMinMatch = 4;
constexpr std::uint64_t kLastLiterals = 5;
constexpr std::uint64_t kMatchFindLimit = 12;
constexpr std::uint64_t kInputMargin = 8;  // token + 2-byte offset + 5 last literals

}  // namespace lz4_detail

// Decodes one LZ4 block of src_size bytes into at most dst_capacity bytes. On `ok`, `written` is
// the decoded size, which may be less than dst_capacity (callers that know the exact size compare:
// see lz4_decode_block_exact). src and dst must not overlap.
ZD_HOST_DEVICE inline DecodeOutcome lz4_decode_block(const std::uint8_t* src, std::uint64_t src_size,
                                                     std::uint8_t* dst, std::uint64_t dst_capacity) {
  using namespace lz4_detail;
  DecodeOutcome result;
  if (src_size == 0) {
    result.status = DecodeStatus::truncated;
    return result;
  }
  // An empty block is the single token 0 (what LZ4_compress_default writes for no bytes).
  if (dst_capacity == 0) {
    result.status = (src_size == 1 && src[0] == 0) ? DecodeStatus::ok : DecodeStatus::output_overflow;
    return result;
  }
  std::uint64_t ip = 0;  // next input byte
  std::uint64_t op = 0;  // next output byte
  for (;;) {
    // A sequence that is not the last leaves at least kInputMargin bytes after its literals, so the
    // token is always there; the check stays for clarity and costs nothing measurable.
    if (ip >= src_size) {
      result.status = DecodeStatus::truncated;
      return result;
    }
    const std::uint32_t token = src[ip++];

    // Literal run length: 4 bits, then 255-continued bytes. A run this long has at least 15
    // literal bytes, so the extension bytes must leave 15 input bytes behind them (the reference's
    // limit; it also bounds the reads here).
    std::uint64_t literals = token >> 4;
    if (literals == 15) {
      if (ip + 15 >= src_size) {
        result.status = DecodeStatus::truncated;
        return result;
      }
      std::uint32_t extra = 255;
      do {
        extra = src[ip++];
        literals += extra;
        if (ip + 15 > src_size) {
          result.status = DecodeStatus::truncated;
          return result;
        }
      } while (extra == 255);
    }

    // The last sequence: its literals reach the end of the input (exactly) and nothing follows.
    // The reference treats any run that ends within kMatchFindLimit of the output's capacity or
    // within kInputMargin of the input's end as the last one.
    if (op + literals + kMatchFindLimit > dst_capacity || ip + literals + kInputMargin > src_size) {
      if (ip + literals > src_size) {
        result.status = DecodeStatus::truncated;
        return result;
      }
      if (op + literals > dst_capacity) {
        result.status = DecodeStatus::output_overflow;
        return result;
      }
      if (ip + literals != src_size) {  // bytes after what must be the last literals
        result.status = DecodeStatus::corrupt;
        return result;
      }
      for (std::uint64_t i = 0; i < literals; ++i) dst[op + i] = src[ip + i];
      result.written = op + literals;
      return result;
    }
    for (std::uint64_t i = 0; i < literals; ++i) dst[op + i] = src[ip + i];
    ip += literals;
    op += literals;

    // Match: a 2-byte little-endian offset (in bounds: kInputMargin bytes were left above).
    const std::uint64_t offset = static_cast<std::uint64_t>(src[ip]) | (static_cast<std::uint64_t>(src[ip + 1]) << 8);
    ip += 2;
    if (offset == 0 || offset > op) {  // 0 copies unwritten bytes; past op reads before the output
      result.status = DecodeStatus::corrupt;
      return result;
    }
    std::uint64_t length = token & 15u;
    if (length == 15) {
      // Extension bytes must leave the last literals behind them (the reference's limit: 4 bytes
      // at least). The first read is in bounds: kInputMargin bytes were left after the literals.
      std::uint32_t extra = 255;
      do {
        extra = src[ip++];
        length += extra;
        if (ip + kLastLiterals - 1 > src_size) {
          result.status = DecodeStatus::truncated;
          return result;
        }
      } while (extra == 255);
    }
    length += kMinMatch;
    // A match may not reach into the last 5 bytes of the block (those are literals).
    if (op + length + kLastLiterals > dst_capacity) {
      result.status = DecodeStatus::output_overflow;
      return result;
    }
    // Byte by byte so that an offset shorter than the length repeats the bytes it just wrote (the
    // format's run-length case), which a block copy would not.
    const std::uint64_t from = op - offset;
    for (std::uint64_t i = 0; i < length; ++i) dst[op + i] = dst[from + i];
    op += length;
  }
}

// As lz4_decode_block, for callers that know the decoded size (numcodecs' header, blosc's
// streams): anything but exactly dst_size bytes is size_mismatch.
ZD_HOST_DEVICE inline DecodeStatus lz4_decode_block_exact(const std::uint8_t* src, std::uint64_t src_size,
                                                          std::uint8_t* dst, std::uint64_t dst_size) {
  const DecodeOutcome outcome = lz4_decode_block(src, src_size, dst, dst_size);
  if (outcome.status != DecodeStatus::ok) return outcome.status;
  return outcome.written == dst_size ? DecodeStatus::ok : DecodeStatus::size_mismatch;
}

}  // namespace zarrdirect::codec::portable

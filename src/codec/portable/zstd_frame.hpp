// One zstd frame (RFC 8878), as numcodecs' and zarr's `zstd` codec store a chunk: a frame with
// its content size, decoded into a caller's buffer. Written once for the CPU and the GPU
// (header-only, no CUDA in its logic): the host tests it against libzstd, the kernels in src/cuda/
// run the same code on the device.
//
// Supported: raw, RLE and compressed blocks; raw, RLE, Huffman (one or four streams, new or
// repeated tree) literals; predefined, RLE, FSE-compressed and repeated sequence tables; repeat
// offsets; the optional content checksum (verified). The whole decoded content is the window, so
// any window size the header names works as long as the content fits the output.
//
// Left to the CPU library (status `unsupported`, never a wrong result): frames that need a
// dictionary, frames without a content size, skippable and legacy frames, anything after the frame
// (another frame), windows over 2 GiB (libzstd refuses them too), content over the caller's limit,
// and 12-bit Huffman tables (beyond the format's 11, which libzstd still reads).
//
// Safe on hostile input: every header field, table description, bit read, literal length, match
// offset and length is checked before it is used; nothing is read outside [src, src + src_size)
// or written outside [dst, dst + content size), and each loop is bounded by the input or output.
//
// State: all per-frame state is one ZstdWorkspace (9720 bytes, fixed): the Huffman table, the
// three sequence tables and the repeat offsets. Decoded Huffman and RLE literals go to the end of
// the output itself (see zstd_literals.hpp), so no block-sized buffer is needed.
#pragma once

#include <cstdint>

#include "codec/portable/decode_status.hpp"
#include "codec/portable/zstd_bits.hpp"
#include "codec/portable/zstd_huffman.hpp"
#include "codec/portable/zstd_literals.hpp"
#include "codec/portable/zstd_sequences.hpp"
#include "codec/portable/zstd_xxhash.hpp"

namespace zarrdirect::codec::portable {

constexpr std::uint32_t kZstdMagic = 0xFD2FB528u;
constexpr std::uint64_t kZstdBlockMax = 128 * 1024;  // the format's largest block
constexpr std::uint64_t kZstdNoLimit = ~std::uint64_t{0};

// The per-frame state a decoder keeps (tables carried from block to block). A GPU thread keeps it
// in caller-provided scratch: sizeof(ZstdWorkspace) bytes (9720), 8-byte aligned.
struct ZstdWorkspace {
  zstd_detail::HuffmanTable huffman;
  zstd_detail::SequenceState sequences;

  ZD_HOST_DEVICE void reset() {
    huffman.max_bits = 0;
    sequences.literal_lengths.ready = false;
    sequences.match_lengths.ready = false;
    sequences.offsets.ready = false;
    sequences.repeat[0] = 1;
    sequences.repeat[1] = 4;
    sequences.repeat[2] = 8;
    zstd_detail::fill_code_tables(sequences);
  }
};
static_assert(sizeof(ZstdWorkspace) <= 10 * 1024, "a zstd workspace is meant to stay small");

// What the frame header says: the decoded size and what the decoder needs to know of the frame.
struct ZstdFramePlan {
  DecodeStatus status = DecodeStatus::ok;
  std::uint64_t content_size = 0;  // decoded bytes (valid when status is ok)
  std::uint64_t window_size = 0;
  std::uint32_t header_size = 0;   // magic number and frame header
  bool checksum = false;           // a 4-byte content checksum follows the last block
};

// Parses the frame header at src (cheap: a few bytes, no decoding). `ok` only for a frame this
// decoder handles; `unsupported` for a valid frame it leaves to libzstd (see above), including a
// content size over max_content_size; `truncated` or `corrupt` for bytes that are no zstd frame.
ZD_HOST_DEVICE inline ZstdFramePlan zstd_frame_plan(const std::uint8_t* src, std::uint64_t src_size,
                                                    std::uint64_t max_content_size = kZstdNoLimit) {
  using namespace zstd_detail;
  ZstdFramePlan plan;
  if (src_size < 4) {
    plan.status = DecodeStatus::truncated;
    return plan;
  }
  const std::uint32_t magic = le32(src);
  if (magic != kZstdMagic) {
    // Skippable frames (0x184D2A50-5F) and the legacy formats (0xFD2FB521-27) are libzstd's.
    const bool skippable = (magic & 0xFFFFFFF0u) == 0x184D2A50u;
    const bool legacy = magic >= 0xFD2FB521u && magic < kZstdMagic;
    plan.status = skippable || legacy ? DecodeStatus::unsupported : DecodeStatus::corrupt;
    return plan;
  }
  if (src_size < 5) {
    plan.status = DecodeStatus::truncated;
    return plan;
  }
  const std::uint32_t descriptor = src[4];
  const std::uint32_t size_flag = descriptor >> 6;
  const bool single_segment = ((descriptor >> 5) & 1) != 0;
  const bool reserved = ((descriptor >> 3) & 1) != 0;
  const std::uint32_t dictionary_flag = descriptor & 3;
  plan.checksum = ((descriptor >> 2) & 1) != 0;
  if (reserved) {
    plan.status = DecodeStatus::corrupt;
    return plan;
  }
  const std::uint32_t size_bytes = size_flag == 0 ? (single_segment ? 1 : 0) : 1u << size_flag;
  const std::uint32_t dictionary_bytes = dictionary_flag == 3 ? 4 : dictionary_flag;
  plan.header_size = 5 + (single_segment ? 0 : 1) + dictionary_bytes + size_bytes;
  if (src_size < plan.header_size) {
    plan.status = DecodeStatus::truncated;
    return plan;
  }
  std::uint32_t at = 5;
  if (!single_segment) {
    const std::uint32_t exponent = src[at] >> 3;
    const std::uint32_t mantissa = src[at] & 7;
    ++at;
    const std::uint32_t window_log = 10 + exponent;
    if (window_log > 31) {
      plan.status = DecodeStatus::unsupported;
      return plan;
    }
    const std::uint64_t base = std::uint64_t{1} << window_log;
    plan.window_size = base + (base / 8) * mantissa;
  }
  std::uint32_t dictionary = 0;
  for (std::uint32_t i = 0; i < dictionary_bytes; ++i) dictionary |= static_cast<std::uint32_t>(src[at + i]) << (8 * i);
  at += dictionary_bytes;
  if (dictionary != 0 || size_bytes == 0) {  // needs a dictionary; or no content size
    plan.status = DecodeStatus::unsupported;
    return plan;
  }
  switch (size_bytes) {
    case 1: plan.content_size = src[at]; break;
    case 2: plan.content_size = le16(src + at) + 256; break;
    case 4: plan.content_size = le32(src + at); break;
    default: plan.content_size = le64(src + at); break;
  }
  if (single_segment) plan.window_size = plan.content_size;
  if (plan.content_size > max_content_size) plan.status = DecodeStatus::unsupported;
  return plan;
}

// Decodes the single frame that is all of src into dst (dst_capacity bytes; the frame's content
// size must fit). On `ok`, `written` is the content size. `workspace` holds the tables while the
// frame decodes; its earlier contents do not matter.
ZD_HOST_DEVICE inline DecodeOutcome zstd_decode_frame(const std::uint8_t* src, std::uint64_t src_size, std::uint8_t* dst,
                                                      std::uint64_t dst_capacity, ZstdWorkspace& workspace,
                                                      std::uint64_t max_content_size = kZstdNoLimit) {
  using namespace zstd_detail;
  DecodeOutcome result;
  const ZstdFramePlan plan = zstd_frame_plan(src, src_size, max_content_size);
  if (plan.status != DecodeStatus::ok) {
    result.status = plan.status;
    return result;
  }
  if (plan.content_size > dst_capacity) {
    result.status = DecodeStatus::output_overflow;
    return result;
  }
  workspace.reset();
  const std::uint64_t end = plan.content_size;
  const std::uint64_t block_max = plan.window_size < kZstdBlockMax ? plan.window_size : kZstdBlockMax;
  std::uint64_t at = plan.header_size;
  std::uint64_t produced = 0;
  DecodeStatus status = DecodeStatus::ok;
  for (bool last = false; !last;) {
    if (src_size - at < 3) {
      result.status = DecodeStatus::truncated;
      return result;
    }
    const std::uint32_t header = le24(src + at);
    at += 3;
    last = (header & 1) != 0;
    const std::uint32_t type = (header >> 1) & 3;
    const std::uint64_t size = header >> 3;
    if (type == 3 || size > block_max) {
      result.status = DecodeStatus::corrupt;
      return result;
    }
    const std::uint64_t stored = type == 1 ? 1 : size;  // an RLE block stores its one byte
    if (src_size - at < stored) {
      result.status = DecodeStatus::truncated;
      return result;
    }
    if (type < 2) {
      if (size > end - produced) {
        result.status = DecodeStatus::output_overflow;
        return result;
      }
      for (std::uint64_t i = 0; i < size; ++i) dst[produced + i] = type == 0 ? src[at + i] : src[at];
      produced += size;
    } else {
      Literals literals;
      std::uint64_t used = 0;
      status = decode_literals(src + at, size, dst, end, produced, block_max, workspace.huffman, literals, used);
      if (status == DecodeStatus::ok)
        status = decode_sequences(src + at + used, size - used, literals, dst, end, produced, workspace.sequences);
      if (status != DecodeStatus::ok) {
        result.status = status;
        return result;
      }
    }
    at += stored;
  }
  if (produced != end) {
    result.status = DecodeStatus::size_mismatch;
    return result;
  }
  if (plan.checksum) {
    if (src_size - at < 4) {
      result.status = DecodeStatus::truncated;
      return result;
    }
    if (static_cast<std::uint32_t>(xxhash64(dst, produced)) != le32(src + at)) {
      result.status = DecodeStatus::checksum_mismatch;
      return result;
    }
    at += 4;
  }
  if (at != src_size) {  // more frames (or skippable ones) after this one: libzstd's to decode
    result.status = DecodeStatus::unsupported;
    return result;
  }
  result.written = produced;
  return result;
}

}  // namespace zarrdirect::codec::portable

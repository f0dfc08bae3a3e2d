// The literals section of a zstd compressed block (RFC 8878, 3.1.1.3.1): raw, RLE, Huffman-coded
// with a new tree, or Huffman-coded with the previous block's tree ("treeless"), in one stream or
// four.
//
// Where decoded literals live: raw literals stay in the source. RLE and Huffman literals are
// written at the very end of the frame's output, [end - size, end): the sequences then copy them
// forward to the write position, which never passes the literals not yet copied (the block's
// output would not fit otherwise, and the sequence executor checks that), so no literal buffer is
// needed beside the output.
#pragma once

#include <cstdint>

#include "codec/portable/decode_status.hpp"
#include "codec/portable/zstd_bits.hpp"
#include "codec/portable/zstd_huffman.hpp"

namespace zarrdirect::codec::portable::zstd_detail {

struct Literals {
  const std::uint8_t* data = nullptr;
  std::uint64_t size = 0;
  bool in_output = false;  // at the output's end (RLE, Huffman), not in the source (raw)
};

// What a literals section's header says (RFC 8878, 3.1.1.3.1.1).
struct LiteralsHeader {
  std::uint32_t type = 0;        // 0 raw, 1 RLE, 2 Huffman with a tree, 3 treeless
  std::uint32_t header = 0;      // header bytes
  std::uint64_t regenerated = 0; // decoded literal bytes
  std::uint64_t stored = 0;      // bytes after the header: raw: regenerated; RLE: 1; Huffman: compressed
  bool four_streams = false;     // Huffman: four streams (else one)
};

// Reads and checks the header of the literals section at the start of a block's `size` bytes:
// each field inside the block, the regenerated size at most block_max, four streams of at least
// 6 literals (libzstd's minimum). The section is header + stored bytes.
ZD_HOST_DEVICE inline DecodeStatus read_literals_header(const std::uint8_t* src, std::uint64_t size,
                                                        std::uint64_t block_max, LiteralsHeader& literals) {
  if (size == 0) return DecodeStatus::truncated;
  literals.type = src[0] & 3;
  const std::uint32_t size_format = (src[0] >> 2) & 3;
  if (literals.type < 2) {
    // Raw (0) or RLE (1): a 5-, 12- or 20-bit regenerated size in a 1-, 2- or 3-byte header.
    literals.header = 1;
    literals.regenerated = src[0] >> 3;
    if (size_format == 1) {
      literals.header = 2;
      if (size < 2) return DecodeStatus::truncated;
      literals.regenerated = le16(src) >> 4;
    } else if (size_format == 3) {
      literals.header = 3;
      if (size < 3) return DecodeStatus::truncated;
      literals.regenerated = le24(src) >> 4;
    }
    if (literals.regenerated > block_max) return DecodeStatus::corrupt;
    literals.stored = literals.type == 0 ? literals.regenerated : 1;
    literals.four_streams = false;
    return literals.header + literals.stored > size ? DecodeStatus::truncated : DecodeStatus::ok;
  }
  // Huffman (2) or treeless (3): both sizes in a 3-, 4- or 5-byte header; one stream for size
  // format 0, else four.
  std::uint32_t field_bits = 10;
  literals.header = 3;
  if (size_format >= 2) {
    literals.header = size_format == 2 ? 4 : 5;
    field_bits = size_format == 2 ? 14 : 18;
  }
  if (size < literals.header) return DecodeStatus::truncated;
  std::uint64_t fields = 0;
  for (std::uint32_t i = 0; i < literals.header; ++i) fields |= static_cast<std::uint64_t>(src[i]) << (8 * i);
  fields >>= 4;
  const std::uint64_t mask = (std::uint64_t{1} << field_bits) - 1;
  literals.regenerated = fields & mask;
  literals.stored = (fields >> field_bits) & mask;
  literals.four_streams = size_format != 0;
  if (literals.regenerated > block_max) return DecodeStatus::corrupt;
  if (literals.header + literals.stored > size) return DecodeStatus::truncated;
  if (literals.four_streams && literals.regenerated < 6) return DecodeStatus::corrupt;
  return DecodeStatus::ok;
}

// Decodes the literals section at the start of a block's `size` bytes. out/out_end: the frame's
// output and its end (the stored content size); produced: bytes already decoded; block_max: the
// frame's largest block. `used` gets the section's size.
ZD_HOST_DEVICE inline DecodeStatus decode_literals(const std::uint8_t* src, std::uint64_t size, std::uint8_t* out,
                                                   std::uint64_t out_end, std::uint64_t produced,
                                                   std::uint64_t block_max, HuffmanTable& huffman, Literals& literals,
                                                   std::uint64_t& used) {
  LiteralsHeader section;
  const DecodeStatus header_status = read_literals_header(src, size, block_max, section);
  if (header_status != DecodeStatus::ok) return header_status;
  const std::uint32_t type = section.type;
  const std::uint32_t header = section.header;
  const std::uint64_t regenerated = section.regenerated;
  const std::uint64_t compressed = section.stored;
  const bool four_streams = section.four_streams;
  if (type == 0) {
    literals.data = src + header;
    literals.size = regenerated;
    literals.in_output = false;
    used = header + regenerated;
    return DecodeStatus::ok;
  }
  if (regenerated > out_end - produced) return DecodeStatus::output_overflow;
  if (type == 1) {
    std::uint8_t* at = out + out_end - regenerated;
    for (std::uint64_t i = 0; i < regenerated; ++i) at[i] = src[header];
    literals.data = at;
    literals.size = regenerated;
    literals.in_output = true;
    used = header + 1;
    return DecodeStatus::ok;
  }

  const std::uint8_t* body = src + header;
  std::uint64_t body_size = compressed;
  if (type == 2) {
    std::uint64_t tree = 0;
    const DecodeStatus status = huffman_read_table(body, body_size, huffman, tree);
    if (status != DecodeStatus::ok) return status;
    body += tree;
    body_size -= tree;
  } else if (huffman.max_bits == 0) {
    return DecodeStatus::corrupt;  // treeless literals with no earlier tree in the frame
  }
  std::uint8_t* at = out + out_end - regenerated;
  if (!four_streams) {
    const DecodeStatus status = huffman_decode_stream(huffman, body, body_size, at, regenerated);
    if (status != DecodeStatus::ok) return status;
  } else {
    // A jump table of the first three streams' sizes; the fourth takes the rest.
    if (body_size < 6) return DecodeStatus::corrupt;
    std::uint64_t stream_sizes[4];
    stream_sizes[0] = le16(body);
    stream_sizes[1] = le16(body + 2);
    stream_sizes[2] = le16(body + 4);
    const std::uint64_t first_three = stream_sizes[0] + stream_sizes[1] + stream_sizes[2];
    if (6 + first_three > body_size) return DecodeStatus::corrupt;
    stream_sizes[3] = body_size - 6 - first_three;
    const std::uint64_t segment = (regenerated + 3) / 4;
    const std::uint8_t* stream = body + 6;
    for (std::uint32_t i = 0; i < 4; ++i) {
      const std::uint64_t count = i < 3 ? segment : regenerated - 3 * segment;
      const DecodeStatus status = huffman_decode_stream(huffman, stream, stream_sizes[i], at + i * segment, count);
      if (status != DecodeStatus::ok) return status;
      stream += stream_sizes[i];
    }
  }
  literals.data = at;
  literals.size = regenerated;
  literals.in_output = true;
  used = header + compressed;
  return DecodeStatus::ok;
}

}  // namespace zarrdirect::codec::portable::zstd_detail

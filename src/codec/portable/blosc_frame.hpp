// Blosc 1 frames (what numcodecs' Blosc codec and zarr v3's blosc codec store) decoded block by
// block, written once for the CPU and the GPU (header-only, no CUDA in its logic).
//
// Two steps, so that a GPU batch can decode every block of every chunk at once:
//   blosc_plan          reads and checks the 16-byte header and the block-start table (cheap; the
//                       CPU runs it per chunk to size outputs and list blocks);
//   blosc_block_streams finds the streams block i is stored in (the GPU path lists one job per
//                       stream from it, on the host);
//   blosc_decode_block  decodes block i of a planned frame into its place in the output
//                       (independent of every other block).
//
// Layout (c-blosc 1.x, format version 2): byte 0 format version (2), 1 compressor format version,
// 2 flags (bit 0 byte shuffle, bit 1 memcpyed, bit 2 bit shuffle, bit 4 "not split", bits 5-7
// compressor: 1 is lz4 and lz4hc), 3 typesize, then little-endian uint32 nbytes (decoded size),
// blocksize and cbytes (frame size). A memcpyed frame holds the nbytes raw after the header.
// Otherwise an int32 start offset per block follows, and each block is 1 stream, or `typesize`
// streams when split (see blosc_stream_count), each a little-endian int32 compressed size and its
// bytes; a stream whose size equals its decoded size is stored raw. Shuffles are undone last.
//
// Compressors other than lz4 (blosclz, snappy, zlib, zstd) and flags this decoder does not know
// give `unsupported`, for the caller to decode that chunk on the CPU instead.
#pragma once

#include <cstdint>

#include "codec/portable/decode_status.hpp"
#include "codec/portable/lz4_block.hpp"

namespace zarrdirect::codec::portable {

namespace blosc_detail {

constexpr std::uint64_t kHeaderSize = 16;
constexpr std::uint8_t kFlagByteShuffle = 0x1;
constexpr std::uint8_t kFlagMemcpyed = 0x2;
constexpr std::uint8_t kFlagBitShuffle = 0x4;
constexpr std::uint8_t kFlagUnknown = 0x8;  // unused by blosc 1 (blosc 2's delta filter)
constexpr std::uint8_t kFlagNotSplit = 0x10;
constexpr std::uint32_t kCompressorLz4 = 1;  // lz4 and lz4hc share this format
constexpr std::uint32_t kMaxSplits = 16;      // c-blosc's limits for splitting a block into streams
constexpr std::uint32_t kMinSplitElements = 128;

ZD_HOST_DEVICE inline std::uint32_t read_le32(const std::uint8_t* p) {
  return static_cast<std::uint32_t>(p[0]) | (static_cast<std::uint32_t>(p[1]) << 8) |
         (static_cast<std::uint32_t>(p[2]) << 16) | (static_cast<std::uint32_t>(p[3]) << 24);
}

}  // namespace blosc_detail

// A checked blosc frame: what blosc_plan read, and what each block needs.
struct BloscFrame {
  std::uint32_t nbytes = 0;     // decoded size
  std::uint32_t blocksize = 0;  // decoded size of every block but a shorter last one
  std::uint32_t cbytes = 0;     // frame size (bytes after it in the buffer are not the frame's)
  std::uint32_t nblocks = 0;
  std::uint32_t typesize = 1;
  std::uint8_t flags = 0;

  ZD_HOST_DEVICE bool memcpyed() const { return (flags & blosc_detail::kFlagMemcpyed) != 0; }
  // Which shuffle the blocks undo: byte shuffle only means something for typesize > 1, and wins
  // over bit shuffle when both flags are set (as in c-blosc).
  ZD_HOST_DEVICE bool byte_shuffled() const {
    return (flags & blosc_detail::kFlagByteShuffle) != 0 && typesize > 1;
  }
  ZD_HOST_DEVICE bool bit_shuffled() const {
    return !byte_shuffled() && (flags & blosc_detail::kFlagBitShuffle) != 0;
  }
  // Decoded size of block i (the last may be shorter).
  ZD_HOST_DEVICE std::uint32_t block_size(std::uint32_t i) const {
    const std::uint64_t start = static_cast<std::uint64_t>(i) * blocksize;
    const std::uint64_t left = nbytes - start;
    return static_cast<std::uint32_t>(left < blocksize ? left : blocksize);
  }
  // Scratch bytes blosc_decode_block needs (0 when no shuffle is undone).
  ZD_HOST_DEVICE std::uint32_t scratch_size() const {
    if (memcpyed() || !(byte_shuffled() || bit_shuffled())) return 0;
    return nbytes < blocksize ? nbytes : blocksize;
  }
};

// Streams block i is stored in: `typesize` when the frame is split (c-blosc's rule: the "not
// split" flag clear, typesize at most 16, at least 128 elements a block, and not the shorter last
// block, which is the only one shorter than blocksize), else 1.
ZD_HOST_DEVICE inline std::uint32_t blosc_stream_count(const BloscFrame& frame, std::uint32_t block_size) {
  using namespace blosc_detail;
  const bool split = (frame.flags & kFlagNotSplit) == 0 && frame.typesize <= kMaxSplits &&
                     block_size / frame.typesize >= kMinSplitElements && block_size == frame.blocksize;
  return split ? frame.typesize : 1;
}

// Reads and checks the header of the frame at src (src_size bytes available; bytes past the
// header's cbytes are ignored) and, unless memcpyed, that every block starts inside the frame after
// the start table. max_nbytes: the most decoded bytes the caller accepts (the chunk's size). On
// anything but `ok`, `frame` is not to be used.
ZD_HOST_DEVICE inline DecodeStatus blosc_plan(const std::uint8_t* src, std::uint64_t src_size,
                                              std::uint64_t max_nbytes, BloscFrame& frame) {
  using namespace blosc_detail;
  if (src_size < kHeaderSize) return DecodeStatus::truncated;
  const std::uint8_t version = src[0];
  const std::uint8_t compressor_version = src[1];
  frame.flags = src[2];
  frame.typesize = src[3];
  frame.nbytes = read_le32(src + 4);
  frame.blocksize = read_le32(src + 8);
  frame.cbytes = read_le32(src + 12);
  if (frame.cbytes < kHeaderSize) return DecodeStatus::corrupt;
  if (frame.cbytes > src_size) return DecodeStatus::truncated;
  if (frame.nbytes > max_nbytes) return DecodeStatus::output_overflow;
  if (frame.typesize == 0) return DecodeStatus::corrupt;
  // c-blosc 1 reads format version 2 only; other versions (blosc 2's frames among them) and flags
  // it does not define go to the CPU library, which decides.
  if (version != 2 || (frame.flags & kFlagUnknown) != 0) return DecodeStatus::unsupported;
  if (frame.nbytes == 0) {  // c-blosc writes blocksize 0 for an empty buffer
    frame.nblocks = 0;
    return DecodeStatus::ok;
  }
  // c-blosc never writes a block longer than the buffer (and refuses such frames).
  if (frame.blocksize == 0 || frame.blocksize > frame.nbytes) return DecodeStatus::corrupt;
  frame.nblocks = frame.nbytes / frame.blocksize + (frame.nbytes % frame.blocksize != 0 ? 1 : 0);
  // A memcpyed frame is the header and the bytes, nothing else (c-blosc refuses any other size).
  if (frame.memcpyed()) {
    if (kHeaderSize + frame.nbytes > frame.cbytes) return DecodeStatus::truncated;
    return kHeaderSize + frame.nbytes == frame.cbytes ? DecodeStatus::ok : DecodeStatus::corrupt;
  }
  if ((frame.flags >> 5) != kCompressorLz4 || compressor_version != 1) return DecodeStatus::unsupported;
  const std::uint64_t table_end = kHeaderSize + 4ull * frame.nblocks;
  if (table_end > frame.cbytes) return DecodeStatus::truncated;
  for (std::uint32_t i = 0; i < frame.nblocks; ++i) {
    const std::uint32_t start = read_le32(src + kHeaderSize + 4ull * i);
    if (start < table_end || start >= frame.cbytes) return DecodeStatus::corrupt;
  }
  // Split streams each decode to blocksize / typesize bytes; a split block that is not a whole
  // number of elements would leave bytes unwritten.
  if (frame.nblocks > 0 && blosc_stream_count(frame, frame.blocksize) > 1 && frame.blocksize % frame.typesize != 0)
    return DecodeStatus::corrupt;
  return DecodeStatus::ok;
}

// Byte unshuffle of one block: the block holds typesize planes of n = size / typesize bytes (plane
// j is byte j of every element); bytes past n * typesize are stored as they are.
ZD_HOST_DEVICE inline void blosc_byte_unshuffle(const std::uint8_t* in, std::uint8_t* out, std::uint32_t size,
                                                std::uint32_t typesize) {
  const std::uint64_t n = size / typesize;
  for (std::uint64_t i = 0; i < n; ++i)
    for (std::uint64_t j = 0; j < typesize; ++j) out[i * typesize + j] = in[j * n + i];
  for (std::uint64_t k = n * typesize; k < size; ++k) out[k] = in[k];
}

// Bit unshuffle of one block (bitshuffle's layout, as c-blosc uses it): when the element count n
// is a multiple of 8, row r = 8 * j + b (byte j of an element, bit b) holds n / 8 bytes whose bit
// (i % 8) of byte i / 8 is that bit of element i; bytes past n * typesize are stored as they are.
// When n is not a multiple of 8 the whole block is stored as it is.
ZD_HOST_DEVICE inline void blosc_bit_unshuffle(const std::uint8_t* in, std::uint8_t* out, std::uint32_t size,
                                               std::uint32_t typesize) {
  const std::uint64_t n = size / typesize;
  if (n % 8 != 0) {
    for (std::uint64_t k = 0; k < size; ++k) out[k] = in[k];
    return;
  }
  const std::uint64_t row_bytes = n / 8;
  for (std::uint64_t i = 0; i < n; ++i) {
    for (std::uint64_t j = 0; j < typesize; ++j) {
      std::uint32_t value = 0;
      for (std::uint32_t b = 0; b < 8; ++b) {
        const std::uint8_t row_byte = in[(8 * j + b) * row_bytes + i / 8];
        value |= static_cast<std::uint32_t>((row_byte >> (i % 8)) & 1u) << b;
      }
      out[i * typesize + j] = static_cast<std::uint8_t>(value);
    }
  }
  for (std::uint64_t k = n * typesize; k < size; ++k) out[k] = in[k];
}

// One stream of a block, as blosc_block_streams finds it: its stored bytes (after the stream's
// 4-byte size) and where it decodes in the block (the shuffle scratch when the block is shuffled).
struct BloscStream {
  std::uint32_t offset = 0;      // of the stored bytes, from the start of the frame
  std::uint32_t stored = 0;      // stored size; equal to `size` means stored raw
  std::uint32_t out_offset = 0;  // from the start of the block's decoded (or shuffled) bytes
  std::uint32_t size = 0;        // decoded size
  ZD_HOST_DEVICE bool raw() const { return stored == size; }
};

// Finds the streams of block `index` of a frame blosc_plan accepted (src: the same bytes): fills
// streams[0, count) and checks every stream's size field and bytes against the frame's cbytes,
// so that decoding a stream reads only inside the frame. Not for memcpyed frames (no streams).
// The GPU path runs this on the host to list one decode job per stream.
ZD_HOST_DEVICE inline DecodeStatus blosc_block_streams(const BloscFrame& frame, const std::uint8_t* src,
                                                       std::uint32_t index, BloscStream (&streams)[blosc_detail::kMaxSplits],
                                                       std::uint32_t& count) {
  using namespace blosc_detail;
  count = 0;
  if (index >= frame.nblocks || frame.memcpyed()) return DecodeStatus::corrupt;
  const std::uint32_t size = frame.block_size(index);
  const std::uint32_t n = blosc_stream_count(frame, size);  // at most kMaxSplits
  const std::uint32_t stream_size = size / n;
  std::uint64_t pos = read_le32(src + kHeaderSize + 4ull * index);  // checked by blosc_plan
  for (std::uint32_t s = 0; s < n; ++s) {
    if (pos + 4 > frame.cbytes) return DecodeStatus::truncated;
    const std::uint32_t stored = read_le32(src + pos);
    pos += 4;
    // A negative (as int32) or zero size is never written by blosc 1.
    if (stored == 0 || stored > 0x7fffffffu) return DecodeStatus::corrupt;
    if (pos + stored > frame.cbytes) return DecodeStatus::truncated;
    streams[s].offset = static_cast<std::uint32_t>(pos);  // below cbytes, a uint32
    streams[s].stored = stored;
    streams[s].out_offset = s * stream_size;
    streams[s].size = stream_size;
    pos += stored;
  }
  count = n;
  return DecodeStatus::ok;
}

// Decodes block `index` of a frame blosc_plan accepted (src: the same bytes) into
// dst + index * blocksize, where dst holds frame.nbytes bytes. scratch: frame.scratch_size() bytes
// of this block's own (blocks decoded at once need separate scratch); may be null when that is 0.
// Writes nothing outside the block's bytes of dst and the scratch, whatever the streams hold.
ZD_HOST_DEVICE inline DecodeStatus blosc_decode_block(const BloscFrame& frame, const std::uint8_t* src,
                                                      std::uint32_t index, std::uint8_t* dst,
                                                      std::uint8_t* scratch) {
  using namespace blosc_detail;
  if (index >= frame.nblocks) return DecodeStatus::corrupt;
  const std::uint32_t size = frame.block_size(index);
  std::uint8_t* const out = dst + static_cast<std::uint64_t>(index) * frame.blocksize;
  if (frame.memcpyed()) {
    const std::uint8_t* in = src + kHeaderSize + static_cast<std::uint64_t>(index) * frame.blocksize;
    for (std::uint32_t k = 0; k < size; ++k) out[k] = in[k];
    return DecodeStatus::ok;
  }
  const bool shuffled = frame.byte_shuffled() || frame.bit_shuffled();
  if (shuffled && scratch == nullptr) return DecodeStatus::corrupt;
  std::uint8_t* const target = shuffled ? scratch : out;
  BloscStream streams[kMaxSplits];
  std::uint32_t count = 0;
  const DecodeStatus found = blosc_block_streams(frame, src, index, streams, count);
  if (found != DecodeStatus::ok) return found;
  for (std::uint32_t s = 0; s < count; ++s) {
    const BloscStream& stream = streams[s];
    std::uint8_t* const stream_out = target + stream.out_offset;
    if (stream.raw()) {  // stored raw: the compressor could not shrink it
      for (std::uint32_t k = 0; k < stream.size; ++k) stream_out[k] = src[stream.offset + k];
    } else {
      const DecodeStatus status = lz4_decode_block_exact(src + stream.offset, stream.stored, stream_out, stream.size);
      if (status != DecodeStatus::ok) return status;
    }
  }
  if (frame.byte_shuffled())
    blosc_byte_unshuffle(scratch, out, size, frame.typesize);
  else if (frame.bit_shuffled())
    blosc_bit_unshuffle(scratch, out, size, frame.typesize);
  return DecodeStatus::ok;
}

}  // namespace zarrdirect::codec::portable

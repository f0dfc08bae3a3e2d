// Bit readers of the zstd format (RFC 8878), for the portable zstd decoder (zstd_frame.hpp). Two
// kinds: FSE table descriptions are read forward, low bits first; Huffman streams, the weights' FSE
// stream and the sequences' stream are read backward, from a final marker bit down to the first
// bit of the first byte.
//
// Both readers only ever load bytes inside [data, data + size): a read past the end gives zero
// bits and leaves the reader "overrun", which the callers treat as corrupt input. That is what the
// format says of a conforming stream (it ends exactly), and it is how hostile bytes end cleanly.
#pragma once

#include <cstdint>

#include "util/host_device.hpp"

// The bit reads sit in the innermost loops: inlined, whatever the compiler's size heuristics say.
#if defined(__CUDACC__)
#define ZD_ZSTD_INLINE __forceinline__
#elif defined(__GNUC__)
#define ZD_ZSTD_INLINE __attribute__((always_inline)) inline
#else
#define ZD_ZSTD_INLINE inline
#endif

namespace zarrdirect::codec::portable::zstd_detail {

ZD_HOST_DEVICE ZD_ZSTD_INLINE std::uint32_t le16(const std::uint8_t* p) {
  return static_cast<std::uint32_t>(p[0]) | (static_cast<std::uint32_t>(p[1]) << 8);
}
ZD_HOST_DEVICE ZD_ZSTD_INLINE std::uint32_t le24(const std::uint8_t* p) {
  return le16(p) | (static_cast<std::uint32_t>(p[2]) << 16);
}
ZD_HOST_DEVICE ZD_ZSTD_INLINE std::uint32_t le32(const std::uint8_t* p) {
  return le24(p) | (static_cast<std::uint32_t>(p[3]) << 24);
}
ZD_HOST_DEVICE ZD_ZSTD_INLINE std::uint64_t le64(const std::uint8_t* p) {
  return static_cast<std::uint64_t>(le32(p)) | (static_cast<std::uint64_t>(le32(p + 4)) << 32);
}

// Stores 8 bytes, little-endian, at an 8-byte aligned address.
ZD_HOST_DEVICE ZD_ZSTD_INLINE void store_le64(std::uint8_t* p, std::uint64_t value) {
#if defined(__CUDA_ARCH__)
  *reinterpret_cast<std::uint64_t*>(p) = value;  // the GPU is little-endian
#else
  for (int k = 0; k < 8; ++k) p[k] = static_cast<std::uint8_t>(value >> (8 * k));
#endif
}

// Index of the highest set bit; value must not be 0.
ZD_HOST_DEVICE ZD_ZSTD_INLINE std::uint32_t highbit(std::uint32_t value) {
  std::uint32_t bit = 0;
  while (value >>= 1) ++bit;
  return bit;
}

// 8 little-endian bytes at any address inside a stream. On the GPU: the two aligned words they
// straddle, joined by shifts (two loads where eight byte loads, each a separate memory transaction
// per lane, made every refill cost a warp 256 transactions). Both words hold a byte of the
// stream, so they lie inside its 8-byte aligned allocation; on the host, bytes outside the
// stream are never touched.
ZD_HOST_DEVICE ZD_ZSTD_INLINE std::uint64_t load_le64_inside(const std::uint8_t* p) {
#if defined(__CUDA_ARCH__)
  const auto address = reinterpret_cast<std::uintptr_t>(p);
  const auto* words = reinterpret_cast<const std::uint64_t*>(address & ~std::uintptr_t{7});
  const std::uint32_t shift = static_cast<std::uint32_t>(address & 7) * 8;
  const std::uint64_t low = words[0];
  return shift == 0 ? low : (low >> shift) | (words[1] << (64 - shift));
#else
  return le64(p);
#endif
}

// Up to 8 little-endian bytes from data + at, zeros where they would pass data + size.
ZD_HOST_DEVICE ZD_ZSTD_INLINE std::uint64_t load_partial(const std::uint8_t* data, std::uint64_t size, std::uint64_t at) {
  if (at + 8 <= size) return load_le64_inside(data + at);
  std::uint64_t value = 0;
  for (std::uint64_t i = 0; i < 8 && at + i < size; ++i) value |= static_cast<std::uint64_t>(data[at + i]) << (8 * i);
  return value;
}

// Forward reader: bit `pos` of the stream is bit pos % 8 of byte pos / 8.
struct ForwardBits {
  const std::uint8_t* data = nullptr;
  std::uint64_t size = 0;
  std::uint64_t pos = 0;  // bits consumed

  // The next `count` (<= 32) bits, without consuming them.
  ZD_HOST_DEVICE ZD_ZSTD_INLINE std::uint32_t peek(std::uint32_t count) const {
    if (count == 0) return 0;
    const std::uint64_t word = load_partial(data, size, pos >> 3) >> (pos & 7);
    return static_cast<std::uint32_t>(word & ((std::uint64_t{1} << count) - 1));
  }
  ZD_HOST_DEVICE ZD_ZSTD_INLINE void skip(std::uint32_t count) { pos += count; }
  ZD_HOST_DEVICE ZD_ZSTD_INLINE std::uint32_t read(std::uint32_t count) {
    const std::uint32_t value = peek(count);
    pos += count;
    return value;
  }
  ZD_HOST_DEVICE ZD_ZSTD_INLINE bool overrun() const { return pos > size * 8; }
  ZD_HOST_DEVICE ZD_ZSTD_INLINE std::uint64_t bytes_used() const { return (pos + 7) / 8; }
};

// Backward reader: the stream is one little-endian number whose highest set bit (in the last byte)
// marks its end; reading takes bits from just below the current position downward, and the value
// read has the bit nearest the end as its most significant. It keeps 8 bytes of the stream at
// hand (bits [window_low, window_low + 64)) and loads the next 8 only when a read passes below them.
struct BackwardBits {
  const std::uint8_t* data = nullptr;
  std::uint64_t size = 0;
  std::int64_t pos = 0;  // bits left above the start: the next read ends at bit pos - 1
  std::uint64_t window = 0;
  std::int64_t window_low = 0;

  // False for an empty stream or a last byte without its end marker.
  ZD_HOST_DEVICE ZD_ZSTD_INLINE bool init(const std::uint8_t* stream, std::uint64_t stream_size) {
    data = stream;
    size = stream_size;
    if (stream_size == 0 || stream[stream_size - 1] == 0) return false;
    pos = static_cast<std::int64_t>((stream_size - 1) * 8 + highbit(stream[stream_size - 1]));
    refill();
    return true;
  }

  // Loads the 8 bytes that end with the byte holding bit pos - 1 (fewer, zero-filled below the
  // start: bits below the stream's first bit read as zeros).
  ZD_HOST_DEVICE ZD_ZSTD_INLINE void refill() {
    const std::int64_t top_byte = pos > 0 ? (pos - 1) >> 3 : 0;
    const std::int64_t first = top_byte - 7;
    if (first >= 0) {
      window = load_partial(data, size, static_cast<std::uint64_t>(first));
    } else {
      window = load_partial(data, size, 0) << (8 * static_cast<std::uint32_t>(-first));
    }
    window_low = first * 8;
  }

  // The next `count` (<= 32) bits, without consuming them. Every member is forced inline: on the
  // GPU a call taking `this` would keep the reader in local memory, a memory round trip per symbol.
  ZD_HOST_DEVICE ZD_ZSTD_INLINE std::uint32_t peek(std::uint32_t count) {
    const std::int64_t low = pos - static_cast<std::int64_t>(count);
    // The window must hold all of [low, pos): a position moved above it (or a first use) refills.
    if (low < window_low || pos > window_low + 64 || count == 0) return peek_after_refill(count);
    const std::uint64_t word = window >> static_cast<std::uint32_t>(low - window_low);
    return static_cast<std::uint32_t>(word & ((std::uint64_t{1} << count) - 1));
  }
  ZD_HOST_DEVICE ZD_ZSTD_INLINE std::uint32_t peek_after_refill(std::uint32_t count) {
    if (pos <= 0 || count == 0) return 0;  // past the start: zeros
    refill();
    // After a refill the window holds at least 57 bits below pos, or reaches below the start.
    std::int64_t low = pos - static_cast<std::int64_t>(count);
    std::uint32_t shift = 0;
    if (low < window_low) {
      shift = static_cast<std::uint32_t>(window_low - low);
      low = window_low;
    }
    const std::uint64_t word = window >> static_cast<std::uint32_t>(low - window_low);
    return static_cast<std::uint32_t>((word << shift) & ((std::uint64_t{1} << count) - 1));
  }
  // The window made to end at pos: 57 bits or more below pos (zeros below the start); past the
  // start, zeros only.
  ZD_HOST_DEVICE ZD_ZSTD_INLINE void reload() {
    if (pos > 0) {
      refill();
    } else {
      window = 0;
      window_low = pos - 64;
    }
  }
  // The stream's next bits from the top down, bit pos - 1 as bit 63: at least 57 valid bits (zeros
  // below the start; past the start, zeros only). Leaves the reader's position as it was.
  ZD_HOST_DEVICE ZD_ZSTD_INLINE std::uint64_t left_aligned() {
    reload();
    return window << static_cast<std::uint32_t>(window_low + 64 - pos);
  }
  ZD_HOST_DEVICE ZD_ZSTD_INLINE void skip(std::uint32_t count) { pos -= static_cast<std::int64_t>(count); }
  ZD_HOST_DEVICE ZD_ZSTD_INLINE std::uint32_t read(std::uint32_t count) {
    const std::uint32_t value = peek(count);
    skip(count);
    return value;
  }
  ZD_HOST_DEVICE ZD_ZSTD_INLINE bool overrun() const { return pos < 0; }
  ZD_HOST_DEVICE ZD_ZSTD_INLINE bool finished() const { return pos == 0; }
};

}  // namespace zarrdirect::codec::portable::zstd_detail

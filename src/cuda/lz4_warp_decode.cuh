// Warp-cooperative LZ4 block decoding (device code, included by the kernels' .cu files only): the
// 32 lanes of one warp decode one LZ4 block together. The format is sequential (each sequence's
// position depends on the lengths before it), so every lane parses the same tokens and lengths
// redundantly: they read the same input bytes (one broadcast load), compute the same values and so
// take the same branches; only length extensions (runs of 255 bytes) are read by all lanes at
// once, with a ballot and a shuffle over the full warp. The byte copies, where the time goes on
// long runs, are split across the lanes: 128 bytes a step (4 in flight per lane), and long literal
// runs (raw blosc streams among them) 4 bytes a lane, 1 KiB a step.
//
// The decoding rules and every bounds check are those of codec::portable::lz4_decode_block, in
// the same order, so a block gets the same status as there, and on success the same bytes (the
// tests compare the two over the same inputs); nothing outside [src, src + src_size) and [dst, dst + dst_capacity) is
// read or written, and each loop trip consumes input, so hostile bytes end in a status.
//
// Warp-synchronous rules this code keeps:
//   - all 32 lanes call these functions together, with the same arguments (the caller picks one
//     job per warp), and stay converged through every branch on parsed values (those are the
//     same in every lane, as src is not written while the kernel runs), so that every lane
//     reaches each __ballot_sync / __shfl_sync (full mask) and __syncwarp() together;
//   - copy loops run the same number of trips in every lane (a step's lanes past the end are
//     masked inside the trip, never by leaving the loop early);
//   - a match reads output bytes that other lanes wrote (earlier literals and matches): a
//     __syncwarp() (a memory barrier among the warp's lanes) comes between those writes and the
//     match's reads. Within one match no lane reads what another writes: each output byte is taken
//     from the bytes before the match, period `offset` (dst[k] = from[k % offset]), which is what
//     the byte-by-byte rule gives when the offset is shorter than the length.
#pragma once

#include <cstdint>
#include <cstring>

#include "codec/portable/decode_status.hpp"
#include "codec/portable/lz4_block.hpp"

namespace zarrdirect::cuda::warp {

constexpr unsigned kWarpSize = 32;

// Runs this long and longer are copied 4 bytes a lane (copy_input), kWordsPerLane words in
// flight per lane: 1 KiB a warp step, so that one warp streaming a long run (a numcodecs chunk of
// incompressible bytes is one literal run of megabytes) keeps enough loads in flight.
constexpr std::uint64_t kWordCopyMin = 64;
constexpr unsigned kWordsPerLane = 8;

// Aligned 4-byte accesses (p a multiple of 4). The host build of this header (the emulated-warp
// test) reads the 4 bytes one by one, little-endian as the GPU, so that its __ldg sees each byte
// read, and writes through memcpy, which has no aliasing or alignment rules to break.
__device__ inline std::uint32_t load_input_word(const std::uint8_t* p) {
#if defined(__CUDA_ARCH__)
  return __ldg(reinterpret_cast<const unsigned int*>(p));
#else
  return static_cast<std::uint32_t>(__ldg(p)) | (static_cast<std::uint32_t>(__ldg(p + 1)) << 8) |
         (static_cast<std::uint32_t>(__ldg(p + 2)) << 16) | (static_cast<std::uint32_t>(__ldg(p + 3)) << 24);
#endif
}
__device__ inline void store_word(std::uint8_t* p, std::uint32_t v) {
#if defined(__CUDA_ARCH__)
  *reinterpret_cast<std::uint32_t*>(p) = v;
#else
  std::memcpy(p, &v, 4);
#endif
}

// Copies n bytes a byte a lane, 128 a step: each lane loads 4 bytes 32 apart before storing them,
// so a long run keeps 4 loads in flight per lane. Every lane runs every trip. src is read-only
// for the whole kernel (loads through the read-only cache).
__device__ inline void copy_input_bytes(const std::uint8_t* __restrict__ src, std::uint8_t* __restrict__ dst,
                                        std::uint64_t n, unsigned lane) {
  std::uint64_t base = 0;
  for (; base + 4 * kWarpSize <= n; base += 4 * kWarpSize) {
    std::uint8_t b[4];
    for (unsigned j = 0; j < 4; ++j) b[j] = __ldg(src + base + lane + j * kWarpSize);
    for (unsigned j = 0; j < 4; ++j) dst[base + lane + j * kWarpSize] = b[j];
  }
  for (; base < n; base += kWarpSize) {
    const std::uint64_t k = base + lane;
    if (k < n) dst[k] = __ldg(src + k);
  }
}

// Copies n input bytes to dst (literal runs, raw blosc streams). Long runs go 4 bytes a lane:
// aligned words are stored to dst, each made of the two aligned source words that hold its bytes
// (src and dst rarely share an alignment), 1 KiB a step; the bytes before the first aligned
// word and after the last go a byte a lane. Reads stay inside [src, src + n): the first word
// starts at or after src, and the word loop stops where the next source word would end past it.
// No lane reads what another writes, so no synchronization.
__device__ inline void copy_input(const std::uint8_t* __restrict__ src, std::uint8_t* __restrict__ dst,
                                  std::uint64_t n, unsigned lane) {
  if (n < kWordCopyMin) {
    copy_input_bytes(src, dst, n, lane);
    return;
  }
  // head: bytes before dst + head is aligned and the source word of its bytes starts at or after src.
  const auto dst_misalign = static_cast<unsigned>(reinterpret_cast<std::uintptr_t>(dst) & 3u);
  unsigned head = (4u - dst_misalign) & 3u;
  const auto shift = static_cast<unsigned>((reinterpret_cast<std::uintptr_t>(src) + head) & 3u);
  if (head < shift) head += 4;  // below 8 < kWordCopyMin <= n
  const std::uint8_t* const from = src + head - shift;  // aligned, >= src
  std::uint64_t words = (n - head) / 4;
  if (shift != 0) {  // word w also reads from + 4w + 4 .. + 8, which must end inside the run
    const std::uint64_t avail = n - (head - shift);
    const std::uint64_t fit = avail >= 8 ? (avail - 8) / 4 + 1 : 0;
    words = words < fit ? words : fit;
  }
  if (lane < head) dst[lane] = __ldg(src + lane);
  const unsigned low = 8 * shift;
  for (std::uint64_t base = 0; base < words; base += kWordsPerLane * kWarpSize) {
    std::uint32_t v[kWordsPerLane];
    for (unsigned j = 0; j < kWordsPerLane; ++j) {
      const std::uint64_t w = base + lane + j * kWarpSize;
      v[j] = 0;
      if (w < words) {
        const std::uint32_t lo = load_input_word(from + 4 * w);
        v[j] = shift == 0 ? lo : (lo >> low) | (load_input_word(from + 4 * w + 4) << (32 - low));
      }
    }
    for (unsigned j = 0; j < kWordsPerLane; ++j) {
      const std::uint64_t w = base + lane + j * kWarpSize;
      if (w < words) store_word(dst + head + 4 * w, v[j]);
    }
  }
  const std::uint64_t done = head + 4 * words;
  copy_input_bytes(src + done, dst + done, n - done, lane);
}

// The match copy: dst[k] = dst[k - offset] for k in [0, length), with 1 <= offset (checked by the
// caller against the bytes already written). Reads only bytes before dst, which the caller has
// made visible with __syncwarp(); plain loads (not the read-only cache: dst is written by this
// kernel). 128 bytes a step, 4 loads in flight per lane before their stores (all loads read
// before dst, so no store of the step can change them).
__device__ inline void copy_match(std::uint8_t* dst, std::uint64_t offset, std::uint64_t length, unsigned lane) {
  const std::uint8_t* from = dst - offset;
  if (offset >= length) {  // no overlap: a plain copy from before dst
    for (std::uint64_t base = 0; base < length; base += 4 * kWarpSize) {
      std::uint8_t b[4];
      for (unsigned j = 0; j < 4; ++j) {
        const std::uint64_t k = base + lane + j * kWarpSize;
        b[j] = k < length ? from[k] : 0;
      }
      for (unsigned j = 0; j < 4; ++j) {
        const std::uint64_t k = base + lane + j * kWarpSize;
        if (k < length) dst[k] = b[j];
      }
    }
    return;
  }
  // Overlap: the output repeats the `offset` bytes before it, dst[k] = from[k % offset]. r[j] is
  // that remainder for this lane's j-th byte of a step, advanced by 128 % offset a step (r and the
  // advance are below offset, so one subtraction keeps it in range). offset < length here, and
  // LZ4 offsets are below 65536.
  const auto period = static_cast<std::uint32_t>(offset);
  const std::uint32_t next32 = kWarpSize % period;
  const std::uint32_t advance = (4 * kWarpSize) % period;
  std::uint32_t r[4];
  r[0] = lane % period;
  for (unsigned j = 1; j < 4; ++j) {
    r[j] = r[j - 1] + next32;
    if (r[j] >= period) r[j] -= period;
  }
  for (std::uint64_t base = 0; base < length; base += 4 * kWarpSize) {
    std::uint8_t b[4];
    for (unsigned j = 0; j < 4; ++j) {
      const std::uint64_t k = base + lane + j * kWarpSize;
      b[j] = k < length ? from[r[j]] : 0;
    }
    for (unsigned j = 0; j < 4; ++j) {
      const std::uint64_t k = base + lane + j * kWarpSize;
      if (k < length) dst[k] = b[j];
      r[j] += advance;
      if (r[j] >= period) r[j] -= period;
    }
  }
}

// Reads an LZ4 length extension at src[ip]: bytes of 255, then one below 255, all added to
// `length`; ip moves past the last. Reading a byte at a position past `last` is the portable
// decoder's `truncated` (false here), whatever the byte. All lanes together, 32 bytes a step: lane
// l looks at ip + l (never past `last`), and a ballot finds the first that ends the run (a byte
// below 255, or past `last`). Every lane gets the same ballot, so all leave together.
__device__ inline bool read_length_extension(const std::uint8_t* __restrict__ src, std::uint64_t& ip,
                                             std::uint64_t last, std::uint64_t& length, unsigned lane) {
  constexpr unsigned kAllLanes = 0xffffffffu;
  for (;;) {
    const std::uint64_t pos = ip + lane;
    const std::uint32_t byte = pos <= last ? __ldg(src + pos) : 0u;
    const unsigned ends = __ballot_sync(kAllLanes, pos > last || byte != 255u);
    if (ends == 0) {  // 32 bytes of 255
      length += 255ull * kWarpSize;
      ip += kWarpSize;
      continue;
    }
    const auto first = static_cast<unsigned>(__ffs(static_cast<int>(ends)) - 1);
    const std::uint32_t final_byte = __shfl_sync(kAllLanes, byte, first);
    if (ip + first > last) return false;
    length += 255ull * first + final_byte;
    ip += first + 1;
    return true;
  }
}

// Decodes one LZ4 block of src_size bytes into at most dst_capacity bytes: the warp version of
// codec::portable::lz4_decode_block (same statuses, same bytes, same `written`). Called by all 32
// lanes of a warp with the same arguments; returns the same outcome in every lane. src and dst
// must not overlap; dst's bytes are complete for other threads only after the kernel (or a
// __syncwarp() for the warp's own lanes).
__device__ inline codec::portable::DecodeOutcome lz4_decode_block(const std::uint8_t* __restrict__ src,
                                                                  std::uint64_t src_size, std::uint8_t* dst,
                                                                  std::uint64_t dst_capacity, unsigned lane) {
  using codec::portable::DecodeStatus;
  using namespace codec::portable::lz4_detail;
  codec::portable::DecodeOutcome result;
  if (src_size == 0) {
    result.status = DecodeStatus::truncated;
    return result;
  }
  if (dst_capacity == 0) {
    result.status = (src_size == 1 && __ldg(src) == 0) ? DecodeStatus::ok : DecodeStatus::output_overflow;
    return result;
  }
  // The token of the next sequence is loaded with the current sequence's offset, before its
  // copies, so that the loads a sequence waits for are issued together. (The portable decoder's
  // "input ends before a token" check never fires past the first token: a sequence that is not the
  // last leaves its offset and at least 6 more bytes, or, with a length extension, at least 4;
  // the first token exists because src_size > 0.)
  std::uint64_t ip = 1;
  std::uint64_t op = 0;
  std::uint32_t token = __ldg(src);
  for (;;) {
    std::uint64_t literals = token >> 4;
    if (literals == 15) {
      // The portable decoder: truncated unless each extension byte leaves 15 input bytes after
      // it, so a byte past src_size - 16 is not to be read.
      if (ip + 15 >= src_size || !read_length_extension(src, ip, src_size - 16, literals, lane)) {
        result.status = DecodeStatus::truncated;
        return result;
      }
    }

    // The last sequence (see the portable decoder for the rule).
    if (op + literals + kMatchFindLimit > dst_capacity || ip + literals + kInputMargin > src_size) {
      if (ip + literals > src_size) {
        result.status = DecodeStatus::truncated;
        return result;
      }
      if (op + literals > dst_capacity) {
        result.status = DecodeStatus::output_overflow;
        return result;
      }
      if (ip + literals != src_size) {
        result.status = DecodeStatus::corrupt;
        return result;
      }
      copy_input(src + ip, dst + op, literals, lane);
      result.written = op + literals;
      return result;
    }
    // In bounds: kInputMargin (8) bytes were left after the literals. `after` is the next token,
    // or the first byte of this match's length extension.
    const std::uint64_t at = ip + literals;
    const std::uint64_t offset =
        static_cast<std::uint64_t>(__ldg(src + at)) | (static_cast<std::uint64_t>(__ldg(src + at + 1)) << 8);
    std::uint32_t after = __ldg(src + at + 2);
    copy_input(src + ip, dst + op, literals, lane);
    ip = at + 2;
    op += literals;

    if (offset == 0 || offset > op) {
      result.status = DecodeStatus::corrupt;
      return result;
    }
    std::uint64_t length = token & 15u;
    if (length == 15) {
      // Each extension byte must leave kLastLiterals - 1 input bytes after it: none past
      // src_size - 5 (src_size >= 8 here: the offset and 6 more bytes followed the literals).
      if (!read_length_extension(src, ip, src_size - kLastLiterals, length, lane)) {
        result.status = DecodeStatus::truncated;
        return result;
      }
      after = __ldg(src + ip);  // the next token, in bounds: ip + 4 <= src_size
    }
    ++ip;  // past the next token, `after`
    length += kMinMatch;
    if (op + length + kLastLiterals > dst_capacity) {
      result.status = DecodeStatus::output_overflow;
      return result;
    }
    // The match reads bytes other lanes wrote (these literals, earlier sequences): make them
    // visible. Every lane reaches this point together (uniform control flow above).
    __syncwarp();
    copy_match(dst + op, offset, length, lane);
    op += length;
    token = after;
  }
}

}  // namespace zarrdirect::cuda::warp

// Huffman-coded literals of the zstd format (RFC 8878, 4.2): the tree description (weights stored
// directly or FSE-compressed), the decoding table built from it, and decoding one stream.
//
// The table is direct-mapped: 1 << max_bits entries (at most 2048, 4 KiB), each the symbol and
// its code length, looked up with the next max_bits bits of the stream.
#pragma once

#include <cstdint>

#include "codec/portable/decode_status.hpp"
#include "codec/portable/zstd_bits.hpp"
#include "codec/portable/zstd_fse.hpp"

namespace zarrdirect::codec::portable::zstd_detail {

// The format's longest code. libzstd's decoder also takes 12-bit tables, which no conforming
// encoder writes: this decoder reports those as unsupported (the CPU library decodes them).
constexpr std::uint32_t kHuffmanMaxBits = 11;
constexpr std::uint32_t kHuffmanWeightsMaxLog = 6;  // accuracy log of the weights' FSE table
constexpr std::uint32_t kHuffmanMaxWeights = 255;   // stored weights; the last symbol's is implied

struct alignas(8) HuffmanTable {  // 8: the GPU fills entries four at a time
  std::uint16_t entries[1u << kHuffmanMaxBits];  // symbol | code length << 8
  std::uint32_t max_bits = 0;                    // 0: no table yet (treeless literals refused)
};

namespace huffman_detail {

// The FSE-compressed weights: `size` bytes holding a table description then a backward stream
// decoded with two interleaved states (the same table), as libzstd does: the stream ends when a
// state update reads past its start, and the other state's symbol is the last weight.
ZD_HOST_DEVICE inline DecodeStatus read_fse_weights(const std::uint8_t* src, std::uint64_t size, std::uint8_t* weights,
                                                    std::uint32_t& count) {
  ForwardBits header{src, size, 0};
  std::int16_t counts[kFseMaxSymbols];
  std::uint32_t symbols = 0;
  std::uint32_t log = 0;
  DecodeStatus status = fse_read_counts(header, kHuffmanWeightsMaxLog, kFseMaxSymbols - 1, counts, symbols, log);
  if (status != DecodeStatus::ok) return status;
  FseEntry table[1u << kHuffmanWeightsMaxLog];
  status = fse_build_table(counts, symbols, log, table);
  if (status != DecodeStatus::ok) return status;
  const std::uint64_t used = header.bytes_used();
  BackwardBits stream;
  if (used >= size || !stream.init(src + used, size - used)) return DecodeStatus::corrupt;
  std::uint32_t state1 = stream.read(log);
  std::uint32_t state2 = stream.read(log);
  std::uint32_t n = 0;
  for (;;) {
    if (n + 2 > kHuffmanMaxWeights) return DecodeStatus::corrupt;
    weights[n++] = table[state1].symbol;
    state1 = table[state1].baseline + stream.read(table[state1].bits);
    if (stream.overrun()) {
      weights[n++] = table[state2].symbol;
      break;
    }
    if (n + 2 > kHuffmanMaxWeights) return DecodeStatus::corrupt;
    weights[n++] = table[state2].symbol;
    state2 = table[state2].baseline + stream.read(table[state2].bits);
    if (stream.overrun()) {
      weights[n++] = table[state1].symbol;
      break;
    }
  }
  count = n;
  return DecodeStatus::ok;
}

}  // namespace huffman_detail

// Reads the tree description at src (at most `size` bytes) into `table`; `used` gets its size.
ZD_HOST_DEVICE inline DecodeStatus huffman_read_table(const std::uint8_t* src, std::uint64_t size, HuffmanTable& table,
                                                      std::uint64_t& used) {
  if (size == 0) return DecodeStatus::truncated;
  std::uint8_t weights[kHuffmanMaxWeights + 1];
  std::uint32_t count = 0;
  const std::uint32_t header = src[0];
  if (header < 128) {
    if (header == 0) return DecodeStatus::corrupt;
    if (1 + static_cast<std::uint64_t>(header) > size) return DecodeStatus::truncated;
    const DecodeStatus status = huffman_detail::read_fse_weights(src + 1, header, weights, count);
    if (status != DecodeStatus::ok) return status;
    used = 1 + header;
  } else {
    // Directly stored: 4 bits a weight, the first in the high half of each byte.
    count = header - 127;
    const std::uint64_t bytes = (count + 1) / 2;
    if (1 + bytes > size) return DecodeStatus::truncated;
    for (std::uint32_t i = 0; i < count; ++i) {
      const std::uint8_t byte = src[1 + i / 2];
      weights[i] = static_cast<std::uint8_t>(i % 2 == 0 ? byte >> 4 : byte & 15);
    }
    used = 1 + bytes;
  }
  // The stored weights leave a power-of-two gap to the next power of two: the implied last weight
  // fills it. max_bits is that power's exponent.
  std::uint32_t total = 0;
  for (std::uint32_t i = 0; i < count; ++i) {
    if (weights[i] > kHuffmanMaxBits + 1) return DecodeStatus::corrupt;
    if (weights[i] > 0) total += (1u << weights[i]) >> 1;
  }
  if (total == 0) return DecodeStatus::corrupt;
  const std::uint32_t max_bits = highbit(total) + 1;
  if (max_bits > kHuffmanMaxBits + 1) return DecodeStatus::corrupt;
  const std::uint32_t rest = (1u << max_bits) - total;
  if ((rest & (rest - 1)) != 0) return DecodeStatus::corrupt;
  weights[count++] = static_cast<std::uint8_t>(highbit(rest) + 1);
  // A complete prefix code has an even number (two or more) of longest codes.
  std::uint32_t per_weight[kHuffmanMaxBits + 2] = {};
  for (std::uint32_t i = 0; i < count; ++i) ++per_weight[weights[i]];
  if (per_weight[1] < 2 || per_weight[1] % 2 != 0) return DecodeStatus::corrupt;
  if (max_bits > kHuffmanMaxBits) return DecodeStatus::unsupported;

  // Longer codes (smaller weights) first, each weight's symbols in symbol order: a symbol of
  // weight w fills 1 << (w - 1) consecutive entries.
  std::uint32_t start[kHuffmanMaxBits + 2] = {};
  std::uint32_t position = 0;
  for (std::uint32_t w = 1; w <= max_bits; ++w) {
    start[w] = position;
    position += per_weight[w] << (w - 1);
  }
  for (std::uint32_t s = 0; s < count; ++s) {
    const std::uint32_t w = weights[s];
    if (w == 0) continue;
    const std::uint32_t length = 1u << (w - 1);
    const auto entry = static_cast<std::uint16_t>(s | ((max_bits + 1 - w) << 8));
    std::uint32_t i = 0;
#if defined(__CUDA_ARCH__)
    // Four entries a store where the run is aligned to them (a GPU thread building a table with
    // a store per entry would make 2048 memory transactions).
    if (length >= 4 && start[w] % 4 == 0) {
      const std::uint64_t four = std::uint64_t{entry} * 0x0001000100010001ull;
      auto* words = reinterpret_cast<std::uint64_t*>(table.entries + start[w]);
      for (; i < length; i += 4) words[i / 4] = four;
    }
#endif
    for (; i < length; ++i) table.entries[start[w] + i] = entry;
    start[w] += length;
  }
  table.max_bits = max_bits;
  return DecodeStatus::ok;
}

// Four codes from `window` (the stream's next bits from bit 63 down, at least 44 valid), their
// symbols into bytes first_byte..first_byte + 3 of `word`; returns the bits they took. A code is
// the window's top max_bits bits (code_shift = 64 - max_bits), consumed by a left shift.
ZD_HOST_DEVICE ZD_ZSTD_INLINE std::uint32_t huffman_decode_four(const HuffmanTable& table, std::uint64_t window,
                                                                std::uint32_t code_shift, std::uint64_t& word,
                                                                std::uint32_t first_byte) {
  std::uint32_t consumed = 0;
  for (std::uint32_t k = first_byte; k < first_byte + 4; ++k) {
    const std::uint16_t entry = table.entries[window >> code_shift];
    word |= static_cast<std::uint64_t>(entry & 0xff) << (8 * k);
    window <<= entry >> 8;
    consumed += entry >> 8;
  }
  return consumed;
}

// Decodes `count` symbols from `bits`' position on into out (the table built: max_bits > 0).
// Forced inline: on the GPU a call taking the reader by reference would keep it in local memory.
// No loop returns early: a read past the stream's start yields zeros and leaves the position below
// zero for good (it only falls), so the caller's one check of the position at the end catches an
// overrun anywhere. On the GPU an early return whose status is kept gave the loop exits the warp's
// lanes took apart, and the warp ran the loop about four times over (3.7x slower, measured in
// bench/zstd_huffman_probe).
ZD_HOST_DEVICE ZD_ZSTD_INLINE void huffman_decode_symbols(const HuffmanTable& table, BackwardBits& bits, std::uint8_t* out,
                                                  std::uint64_t count) {
  const std::uint32_t max_bits = table.max_bits;
  std::uint64_t i = 0;
  // Single bytes up to an 8-byte boundary of the output, then eight symbols a store (on the GPU a
  // byte store per symbol would be a memory transaction per symbol), then the rest.
  for (; i < count && (reinterpret_cast<std::uintptr_t>(out + i) & 7) != 0; ++i) {
    const std::uint16_t entry = table.entries[bits.peek(max_bits)];
    out[i] = static_cast<std::uint8_t>(entry & 0xff);
    bits.skip(entry >> 8);
  }
  // Four codes of at most 11 bits between reloads (44 of the 57 bits a reload leaves), so the
  // symbol reads take no branch, and every GPU lane reloads at the same step. After a reload the
  // next bit is the window's top bit: a code is the top max_bits bits, consumed by a left shift
  // (a symbol costs two shifts and the lookup; recomputing a shift from the position each time
  // made a longer chain of 64-bit arithmetic, which a GPU thread runs without overlap).
  static_assert(4 * kHuffmanMaxBits <= 57, "four codes must fit in a reloaded window");
  const std::uint32_t code_shift = 64 - max_bits;
  for (; i + 8 <= count; i += 8) {
    std::uint64_t word = 0;
    for (std::uint32_t half = 0; half < 8; half += 4)
      bits.skip(huffman_decode_four(table, bits.left_aligned(), code_shift, word, half));
    store_le64(out + i, word);
  }
  for (; i < count; ++i) {
    const std::uint16_t entry = table.entries[bits.peek(max_bits)];
    out[i] = static_cast<std::uint8_t>(entry & 0xff);
    bits.skip(entry >> 8);
  }
}

// Decodes exactly `count` symbols from one backward stream, which they must use up exactly.
ZD_HOST_DEVICE inline DecodeStatus huffman_decode_stream(const HuffmanTable& table, const std::uint8_t* stream,
                                                         std::uint64_t size, std::uint8_t* out, std::uint64_t count) {
  BackwardBits bits;
  if (!bits.init(stream, size) || table.max_bits == 0) return DecodeStatus::corrupt;
  huffman_decode_symbols(table, bits, out, count);
  return bits.finished() ? DecodeStatus::ok : DecodeStatus::corrupt;  // an overrun left pos below zero
}

}  // namespace zarrdirect::codec::portable::zstd_detail

// FSE (finite state entropy) tables of the zstd format (RFC 8878, 4.1): reading a table
// description (normalized counts), building the decoding table from it, and the predefined
// distributions of the sequence codes. Used by the Huffman weights (zstd_huffman.hpp) and the
// sequences (zstd_sequences.hpp).
#pragma once

#include <cstdint>

#include "codec/portable/decode_status.hpp"
#include "codec/portable/zstd_bits.hpp"

namespace zarrdirect::codec::portable::zstd_detail {

// One decoding state: the symbol it emits, and the next state (baseline + `bits` bits read).
struct FseEntry {
  std::uint16_t baseline = 0;
  std::uint8_t symbol = 0;
  std::uint8_t bits = 0;
};

// The largest symbol a description may name: 255 for the Huffman weights (libzstd reads that many
// and refuses weights over 12 later), 52 for match lengths.
constexpr std::uint32_t kFseMaxSymbols = 256;

// Reads a table description (normalized counts) at `bits`; on ok, counts[0..symbols) hold the
// counts (-1 is the format's "less than one"), they sum to 1 << accuracy_log, and `bits` stands
// after the description. Refuses an accuracy log above max_log and a symbol above max_symbol.
ZD_HOST_DEVICE inline DecodeStatus fse_read_counts(ForwardBits& bits, std::uint32_t max_log, std::uint32_t max_symbol,
                                                   std::int16_t* counts, std::uint32_t& symbols,
                                                   std::uint32_t& accuracy_log) {
  accuracy_log = bits.read(4) + 5;
  if (accuracy_log > max_log) return DecodeStatus::corrupt;
  std::int32_t remaining = (1 << accuracy_log) + 1;
  std::int32_t threshold = 1 << accuracy_log;
  std::uint32_t width = accuracy_log + 1;
  std::uint32_t symbol = 0;
  bool previous_zero = false;
  while (remaining > 1 && symbol <= max_symbol) {
    if (previous_zero) {
      // A zero count is followed by 2-bit repeat fields: 3 means "three more zeros, and another
      // field"; the last field (0-2) adds that many zeros.
      std::uint32_t zeros_to = symbol;
      for (;;) {
        const std::uint32_t repeat = bits.read(2);
        zeros_to += repeat;
        if (repeat != 3) break;
        if (zeros_to > max_symbol || bits.overrun()) return DecodeStatus::corrupt;
      }
      if (zeros_to > max_symbol) return DecodeStatus::corrupt;
      while (symbol < zeros_to) counts[symbol++] = 0;
    }
    // A value below `small_max` takes width - 1 bits; above, width bits, folded back.
    const std::int32_t small_max = (2 * threshold - 1) - remaining;
    std::int32_t value;
    const std::uint32_t low = bits.peek(width - 1);
    if (static_cast<std::int32_t>(low) < small_max) {
      value = static_cast<std::int32_t>(low);
      bits.skip(width - 1);
    } else {
      value = static_cast<std::int32_t>(bits.peek(width));
      if (value >= threshold) value -= small_max;
      bits.skip(width);
    }
    const std::int32_t count = value - 1;
    remaining -= count < 0 ? -count : count;
    counts[symbol++] = static_cast<std::int16_t>(count);
    previous_zero = count == 0;
    if (remaining < threshold) {
      if (remaining <= 1) break;
      width = highbit(static_cast<std::uint32_t>(remaining)) + 1;
      threshold = 1 << (width - 1);
    }
    if (bits.overrun()) return DecodeStatus::corrupt;
  }
  if (remaining != 1 || bits.overrun()) return DecodeStatus::corrupt;
  symbols = symbol;
  return DecodeStatus::ok;
}

// Builds the decoding table (1 << accuracy_log entries) of counts[0..symbols) (RFC 8878, 4.1.1).
ZD_HOST_DEVICE inline DecodeStatus fse_build_table(const std::int16_t* counts, std::uint32_t symbols,
                                                   std::uint32_t accuracy_log, FseEntry* table) {
  const std::uint32_t size = 1u << accuracy_log;
  const std::uint32_t mask = size - 1;
  std::uint32_t high = size - 1;
  std::uint16_t next[kFseMaxSymbols];
  // "Less than one" symbols take one state each at the top of the table.
  for (std::uint32_t s = 0; s < symbols; ++s) {
    if (counts[s] == -1) {
      table[high--].symbol = static_cast<std::uint8_t>(s);
      next[s] = 1;
    } else {
      next[s] = static_cast<std::uint16_t>(counts[s]);
    }
  }
  // The others are spread with the format's step, skipping the top states.
  const std::uint32_t step = (size >> 1) + (size >> 3) + 3;
  std::uint32_t position = 0;
  for (std::uint32_t s = 0; s < symbols; ++s) {
    for (std::int32_t i = 0; i < counts[s]; ++i) {
      table[position].symbol = static_cast<std::uint8_t>(s);
      do {
        position = (position + step) & mask;
      } while (position > high);
    }
  }
  if (position != 0) return DecodeStatus::corrupt;
  for (std::uint32_t state = 0; state < size; ++state) {
    const std::uint32_t s = table[state].symbol;
    const std::uint32_t n = next[s]++;
    const std::uint32_t bits = accuracy_log - highbit(n);
    table[state].bits = static_cast<std::uint8_t>(bits);
    table[state].baseline = static_cast<std::uint16_t>((n << bits) - size);
  }
  return DecodeStatus::ok;
}

// A one-state table that always emits `symbol` (the sequences' RLE mode).
ZD_HOST_DEVICE inline void fse_rle_table(std::uint8_t symbol, FseEntry* table) {
  table[0].symbol = symbol;
  table[0].bits = 0;
  table[0].baseline = 0;
}

// The predefined distributions (RFC 8878, 3.1.1.3.2.2), for the sequences' predefined mode.
constexpr std::uint32_t kLiteralLengthDefaultLog = 6;
constexpr std::uint32_t kMatchLengthDefaultLog = 6;
constexpr std::uint32_t kOffsetDefaultLog = 5;
constexpr std::uint32_t kLiteralLengthDefaultSymbols = 36;
constexpr std::uint32_t kMatchLengthDefaultSymbols = 53;
constexpr std::uint32_t kOffsetDefaultSymbols = 29;

// Writes the predefined counts of the literal length (0), match length (1) or offset (2) codes.
// Plain local arrays: they compile for the device too, where namespace-scope tables would need
// their own device copies.
ZD_HOST_DEVICE inline void default_counts(std::uint32_t kind, std::int16_t* counts) {
  const std::int16_t literal_lengths[kLiteralLengthDefaultSymbols] = {
      4, 3, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 3, 2, 1, 1, 1, 1, 1, -1, -1, -1, -1};
  const std::int16_t match_lengths[kMatchLengthDefaultSymbols] = {
      1, 4, 3, 2, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
      1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, -1, -1, -1, -1, -1, -1, -1};
  const std::int16_t offsets[kOffsetDefaultSymbols] = {1, 1, 1, 1, 1, 1, 2, 2, 2, 1, 1, 1, 1, 1, 1,
                                                       1, 1, 1, 1, 1, 1, 1, 1, 1, -1, -1, -1, -1, -1};
  if (kind == 0) {
    for (std::uint32_t i = 0; i < kLiteralLengthDefaultSymbols; ++i) counts[i] = literal_lengths[i];
  } else if (kind == 1) {
    for (std::uint32_t i = 0; i < kMatchLengthDefaultSymbols; ++i) counts[i] = match_lengths[i];
  } else {
    for (std::uint32_t i = 0; i < kOffsetDefaultSymbols; ++i) counts[i] = offsets[i];
  }
}

}  // namespace zarrdirect::codec::portable::zstd_detail

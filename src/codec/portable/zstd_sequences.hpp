// The sequences section of a zstd compressed block (RFC 8878, 3.1.1.3.2 and 3.1.2): the three
// code tables (predefined, RLE, FSE-compressed or repeated from the previous block), the backward
// stream of sequences, repeat offsets, and executing each sequence (literals, then a match) into
// the frame's output.
//
// The output is the whole frame's decoded content, so every match is checked against the bytes
// decoded so far (no window beyond them); a match copies byte by byte so that an offset shorter
// than its length repeats what it just wrote.
#pragma once

#include <cstdint>

#include "codec/portable/decode_status.hpp"
#include "codec/portable/zstd_bits.hpp"
#include "codec/portable/zstd_fse.hpp"
#include "codec/portable/zstd_literals.hpp"

namespace zarrdirect::codec::portable::zstd_detail {

// A decoding table of the sequence codes, kept for the next block's "repeat" mode.
template <std::uint32_t MaxLog>
struct SequenceTable {
  FseEntry entries[1u << MaxLog];
  std::uint32_t log = 0;
  bool ready = false;  // false until a block of the frame set it
};

constexpr std::uint32_t kLiteralLengthMaxLog = 9;
constexpr std::uint32_t kMatchLengthMaxLog = 9;
constexpr std::uint32_t kOffsetMaxLog = 8;
constexpr std::uint32_t kLiteralLengthMaxSymbol = 35;
constexpr std::uint32_t kMatchLengthMaxSymbol = 52;
constexpr std::uint32_t kOffsetMaxSymbol = 31;

// The three tables and the repeat offsets: what a frame carries from block to block. Beside them,
// each length code's baseline and extra bits, filled by fill_code_tables (kept here so that the
// decoding loop looks them up instead of rebuilding constant arrays on the device's stack).
struct SequenceState {
  SequenceTable<kLiteralLengthMaxLog> literal_lengths;
  SequenceTable<kMatchLengthMaxLog> match_lengths;
  SequenceTable<kOffsetMaxLog> offsets;
  std::uint64_t repeat[3] = {1, 4, 8};
  std::uint32_t literal_length_base[kLiteralLengthMaxSymbol + 1];
  std::uint32_t match_length_base[kMatchLengthMaxSymbol + 1];
  std::uint8_t literal_length_extra[kLiteralLengthMaxSymbol + 1];
  std::uint8_t match_length_extra[kMatchLengthMaxSymbol + 1];
};

namespace sequences_detail {

enum : std::uint32_t { kPredefined = 0, kRle = 1, kCompressed = 2, kRepeat = 3 };

// Reads one table in `mode` from src (at most `size` bytes); `used` gets the bytes it took.
// kind: 0 literal lengths, 1 match lengths, 2 offsets (default_counts' numbering).
template <std::uint32_t MaxLog>
ZD_HOST_DEVICE inline DecodeStatus read_table(std::uint32_t mode, std::uint32_t kind, std::uint32_t max_symbol,
                                              const std::uint8_t* src, std::uint64_t size,
                                              SequenceTable<MaxLog>& table, std::uint64_t& used) {
  used = 0;
  std::int16_t counts[kFseMaxSymbols];
  DecodeStatus status = DecodeStatus::ok;
  switch (mode) {
    case kPredefined: {
      default_counts(kind, counts);
      const std::uint32_t symbols = kind == 0   ? kLiteralLengthDefaultSymbols
                                    : kind == 1 ? kMatchLengthDefaultSymbols
                                                : kOffsetDefaultSymbols;
      table.log = kind == 0 ? kLiteralLengthDefaultLog : kind == 1 ? kMatchLengthDefaultLog : kOffsetDefaultLog;
      status = fse_build_table(counts, symbols, table.log, table.entries);
      break;
    }
    case kRle:
      if (size < 1) return DecodeStatus::truncated;
      if (src[0] > max_symbol) return DecodeStatus::corrupt;
      fse_rle_table(src[0], table.entries);
      table.log = 0;
      used = 1;
      break;
    case kCompressed: {
      ForwardBits bits{src, size, 0};
      std::uint32_t symbols = 0;
      std::uint32_t log = 0;
      status = fse_read_counts(bits, MaxLog, max_symbol, counts, symbols, log);
      if (status != DecodeStatus::ok) return status;
      table.log = log;
      status = fse_build_table(counts, symbols, log, table.entries);
      used = bits.bytes_used();
      break;
    }
    default:
      if (!table.ready) return DecodeStatus::corrupt;  // nothing to repeat
      return DecodeStatus::ok;
  }
  if (status != DecodeStatus::ok) return status;
  table.ready = true;
  return DecodeStatus::ok;
}

// The baseline and extra bits of literal length and match length codes (RFC 8878, 3.1.1.3.2.1.1).
ZD_HOST_DEVICE inline void literal_length_code(std::uint32_t code, std::uint32_t& base, std::uint32_t& extra) {
  if (code < 16) {
    base = code;
    extra = 0;
    return;
  }
  const std::uint32_t bases[20] = {16,  18,  20,   22,   24,   28,   32,   40,    48,    64,
                                   128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536};
  const std::uint8_t bits[20] = {1, 1, 1, 1, 2, 2, 3, 3, 4, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
  base = bases[code - 16];
  extra = bits[code - 16];
}

ZD_HOST_DEVICE inline void match_length_code(std::uint32_t code, std::uint32_t& base, std::uint32_t& extra) {
  if (code < 32) {
    base = code + 3;
    extra = 0;
    return;
  }
  const std::uint32_t bases[21] = {35,  37,  39,   41,   43,   47,   51,    59,    67,    83,   99,
                                   131, 259, 515, 1027, 2051, 4099, 8195, 16387, 32771, 65539};
  const std::uint8_t bits[21] = {1, 1, 1, 1, 2, 2, 3, 3, 4, 4, 5, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
  base = bases[code - 32];
  extra = bits[code - 32];
}

// Copies n bytes forward, from `from` to `to`, where the source runs `distance` bytes ahead of or
// behind the destination (a match: behind, by its offset; literals at the output's end: ahead).
// Eight bytes at a time when no eight-byte piece reads what it writes, so a short offset still
// repeats the bytes it just wrote, as the format means.
ZD_HOST_DEVICE inline void copy_forward(std::uint8_t* to, const std::uint8_t* from, std::uint64_t n,
                                        std::uint64_t distance) {
  std::uint64_t i = 0;
  if (distance >= 8) {
    for (; i + 8 <= n; i += 8) {
      std::uint8_t piece[8];
      for (int k = 0; k < 8; ++k) piece[k] = from[i + k];
      for (int k = 0; k < 8; ++k) to[i + k] = piece[k];
    }
  }
  for (; i < n; ++i) to[i] = from[i];
}

// Copies n bytes rounded up to whole 8-byte pieces: up to 7 bytes past n are read and written.
// Callers check that both stay inside their buffers and that the extra bytes written hold nothing
// yet (output still to come), and that the source runs at least 8 bytes from the destination.
ZD_HOST_DEVICE inline void copy_wild(std::uint8_t* to, const std::uint8_t* from, std::uint64_t n) {
  for (std::uint64_t i = 0; i < n; i += 8) {
    std::uint8_t piece[8];
    for (int k = 0; k < 8; ++k) piece[k] = from[i + k];
    for (int k = 0; k < 8; ++k) to[i + k] = piece[k];
  }
}

// A match: n bytes from `offset` bytes back; `room` is how many bytes after `to` may be written
// (n of them and, when 8 more fit, scratch bytes past them). A short offset repeats a pattern of
// that period, so after the first bytes any multiple of the offset that is 8 or more reads the
// same bytes: the rest copies eight at a time from that far back.
ZD_HOST_DEVICE inline void copy_match(std::uint8_t* to, std::uint64_t offset, std::uint64_t n, std::uint64_t room) {
  const bool wild = room >= n + 8;
  if (offset >= 8) {
    if (wild) {
      copy_wild(to, to - offset, n);
    } else {
      copy_forward(to, to - offset, n, offset);
    }
    return;
  }
  const std::uint64_t period = offset * ((8 + offset - 1) / offset);  // 8 or more
  const std::uint64_t head = n < period ? n : period;
  const std::uint8_t* from = to - offset;
  for (std::uint64_t i = 0; i < head; ++i) to[i] = from[i];
  if (wild) {
    copy_wild(to + head, to + head - period, n - head);
  } else {
    copy_forward(to + head, to + head - period, n - head, period);
  }
}

}  // namespace sequences_detail

ZD_HOST_DEVICE inline void fill_code_tables(SequenceState& state) {
  for (std::uint32_t code = 0; code <= kLiteralLengthMaxSymbol; ++code) {
    std::uint32_t base, extra;
    sequences_detail::literal_length_code(code, base, extra);
    state.literal_length_base[code] = base;
    state.literal_length_extra[code] = static_cast<std::uint8_t>(extra);
  }
  for (std::uint32_t code = 0; code <= kMatchLengthMaxSymbol; ++code) {
    std::uint32_t base, extra;
    sequences_detail::match_length_code(code, base, extra);
    state.match_length_base[code] = base;
    state.match_length_extra[code] = static_cast<std::uint8_t>(extra);
  }
}

// One sequence as its codes give it: the offset value is the raw one (1-3 name repeat offsets,
// resolved by resolve_offset in order, since they depend on every earlier sequence of the frame).
struct SequenceCodes {
  std::uint32_t literal_length = 0;
  std::uint32_t match_length = 0;
  std::uint32_t offset_value = 0;  // up to 2^32 - 1 (offset code 31 with 31 extra bits)
};

// The header of a sequences section: the sequence count, and where its tables' descriptions and
// its bitstream start. Tables are read by read_sequence_tables (a block may repeat the tables of an
// earlier one).
struct SequencesHeader {
  std::uint64_t count = 0;
  std::uint32_t modes = 0;  // literal lengths << 6 | offsets << 4 | match lengths << 2
  std::uint64_t tables_at = 0;  // first table description (when count > 0)
};

ZD_HOST_DEVICE inline DecodeStatus read_sequences_header(const std::uint8_t* src, std::uint64_t size,
                                                         SequencesHeader& header) {
  if (size == 0) return DecodeStatus::truncated;
  std::uint64_t count = src[0];
  std::uint64_t at = 1;
  if (count >= 128) {
    if (count == 255) {
      if (size < 3) return DecodeStatus::truncated;
      count = le16(src + 1) + 0x7f00;
      at = 3;
    } else {
      if (size < 2) return DecodeStatus::truncated;
      count = ((count - 128) << 8) + src[1];
      at = 2;
    }
  }
  header.count = count;
  header.modes = 0;
  if (count == 0) {
    header.tables_at = at;
    return at == size ? DecodeStatus::ok : DecodeStatus::corrupt;  // nothing may follow a zero count
  }
  if (at >= size) return DecodeStatus::truncated;
  header.modes = src[at++];
  if ((header.modes & 3) != 0) return DecodeStatus::corrupt;  // reserved bits
  header.tables_at = at;
  return DecodeStatus::ok;
}

// Reads the three tables (literal lengths, offsets, match lengths, in the format's order) of a
// section whose header is `header`, from src + header.tables_at; `bitstream_at` gets where the
// sequences' bitstream starts.
ZD_HOST_DEVICE inline DecodeStatus read_sequence_tables(const std::uint8_t* src, std::uint64_t size,
                                                        const SequencesHeader& header, SequenceState& state,
                                                        std::uint64_t& bitstream_at) {
  using namespace sequences_detail;
  std::uint64_t at = header.tables_at;
  std::uint64_t used = 0;
  DecodeStatus status = read_table(header.modes >> 6, 0, kLiteralLengthMaxSymbol, src + at, size - at,
                                   state.literal_lengths, used);
  if (status != DecodeStatus::ok) return status;
  at += used;
  if (at > size) return DecodeStatus::truncated;
  status = read_table((header.modes >> 4) & 3, 2, kOffsetMaxSymbol, src + at, size - at, state.offsets, used);
  if (status != DecodeStatus::ok) return status;
  at += used;
  if (at > size) return DecodeStatus::truncated;
  status = read_table((header.modes >> 2) & 3, 1, kMatchLengthMaxSymbol, src + at, size - at, state.match_lengths, used);
  if (status != DecodeStatus::ok) return status;
  at += used;
  if (at > size) return DecodeStatus::truncated;
  bitstream_at = at;
  return DecodeStatus::ok;
}

// The backward stream of a block's sequences, decoded one at a time with the state's tables.
struct SequenceStream {
  BackwardBits bits;
  const SequenceState* state = nullptr;
  std::uint32_t ll_state = 0;
  std::uint32_t of_state = 0;
  std::uint32_t ml_state = 0;

  ZD_HOST_DEVICE ZD_ZSTD_INLINE bool init(const std::uint8_t* stream, std::uint64_t size, const SequenceState& tables) {
    state = &tables;
    if (!bits.init(stream, size)) return false;
    ll_state = bits.read(tables.literal_lengths.log);
    of_state = bits.read(tables.offsets.log);
    ml_state = bits.read(tables.match_lengths.log);
    return true;
  }

  // The next sequence's codes; `last` skips the state update that would follow the block's last
  // sequence. False when the stream ran past its start (corrupt input).
  ZD_HOST_DEVICE ZD_ZSTD_INLINE bool next(SequenceCodes& codes, bool last) {
    if (bits.overrun()) return false;
    const FseEntry* ll_table = state->literal_lengths.entries;
    const FseEntry* of_table = state->offsets.entries;
    const FseEntry* ml_table = state->match_lengths.entries;
    // Extra bits in the format's order: offset, match length, literal length.
    const std::uint32_t of_code = of_table[of_state].symbol;
    const std::uint32_t ml_code = ml_table[ml_state].symbol;
    const std::uint32_t ll_code = ll_table[ll_state].symbol;
    codes.offset_value = static_cast<std::uint32_t>((std::uint64_t{1} << of_code) + bits.read(of_code));
    codes.match_length = state->match_length_base[ml_code] + bits.read(state->match_length_extra[ml_code]);
    codes.literal_length = state->literal_length_base[ll_code] + bits.read(state->literal_length_extra[ll_code]);
    if (!last) {  // states update in the order literal length, match length, offset
      ll_state = ll_table[ll_state].baseline + bits.read(ll_table[ll_state].bits);
      ml_state = ml_table[ml_state].baseline + bits.read(ml_table[ml_state].bits);
      of_state = of_table[of_state].baseline + bits.read(of_table[of_state].bits);
    }
    return true;
  }
  // A stream ends exactly at its start.
  ZD_HOST_DEVICE ZD_ZSTD_INLINE bool finished() const { return bits.finished(); }
};

// The offset a sequence means, updating the frame's repeat offsets: values 1-3 name a repeat
// offset (shifted by one when the sequence has no literals); larger ones are a new offset,
// value - 3. 0 for an offset that cannot be (repeat offset 1 minus one, when it was 1): corrupt.
ZD_HOST_DEVICE ZD_ZSTD_INLINE std::uint64_t resolve_offset(std::uint64_t offset_value, std::uint64_t literal_length,
                                                           std::uint64_t* repeat) {
  std::uint64_t offset;
  if (offset_value > 3) {
    offset = offset_value - 3;
    repeat[2] = repeat[1];
    repeat[1] = repeat[0];
    repeat[0] = offset;
    return offset;
  }
  const std::uint64_t index = offset_value - 1 + (literal_length == 0 ? 1 : 0);
  if (index == 0) return repeat[0];
  offset = index == 3 ? repeat[0] - 1 : repeat[index];
  if (index != 1) repeat[2] = repeat[1];
  repeat[1] = repeat[0];
  repeat[0] = offset;
  return offset;
}

// Decodes the sequences section (`size` bytes at src, the rest of the block) and executes it:
// the block's output goes to out + produced, which advances. Literals not used by the sequences
// follow the last one.
ZD_HOST_DEVICE inline DecodeStatus decode_sequences(const std::uint8_t* src, std::uint64_t size,
                                                    const Literals& literals, std::uint8_t* out,
                                                    std::uint64_t out_end, std::uint64_t& produced,
                                                    SequenceState& state) {
  using namespace sequences_detail;
  SequencesHeader header;
  DecodeStatus status = read_sequences_header(src, size, header);
  if (status != DecodeStatus::ok) return status;

  const std::uint8_t* lit = literals.data;
  std::uint64_t lit_left = literals.size;
  if (lit_left > out_end - produced) return DecodeStatus::output_overflow;
  std::uint64_t op = produced;

  if (header.count > 0) {
    std::uint64_t at = 0;
    status = read_sequence_tables(src, size, header, state, at);
    if (status != DecodeStatus::ok) return status;
    SequenceStream stream;
    if (!stream.init(src + at, size - at, state)) return DecodeStatus::corrupt;
    std::uint64_t* repeat = state.repeat;
    for (std::uint64_t n = 0; n < header.count; ++n) {
      SequenceCodes codes;
      if (!stream.next(codes, n + 1 == header.count)) return DecodeStatus::corrupt;
      const std::uint64_t literal_length = codes.literal_length;
      const std::uint64_t match_length = codes.match_length;
      const std::uint64_t offset = resolve_offset(codes.offset_value, literal_length, repeat);

      // Literals, then the match. The literals still to come must fit after the match, which
      // also keeps the write position below them when they sit at the output's end.
      if (literal_length > lit_left) return DecodeStatus::corrupt;
      // Whole 8-byte pieces where 8 more literals remain to read and 8 more output bytes to write.
      const std::uint64_t distance = literals.in_output ? static_cast<std::uint64_t>(lit - (out + op)) : ~std::uint64_t{0};
      if (distance >= 8 && lit_left - literal_length >= 8 && out_end - op >= literal_length + 8) {
        copy_wild(out + op, lit, literal_length);
      } else {
        copy_forward(out + op, lit, literal_length, distance);
      }
      op += literal_length;
      lit += literal_length;
      lit_left -= literal_length;
      if (offset == 0 || offset > op) return DecodeStatus::corrupt;
      if (match_length > out_end - op - lit_left) return DecodeStatus::output_overflow;
      // Past the match lies output still to come, up to the literals not yet copied (when those
      // sit at the output's end) or the end.
      copy_match(out + op, offset, match_length, out_end - op - (literals.in_output ? lit_left : 0));
      op += match_length;
    }
    if (!stream.finished()) return DecodeStatus::corrupt;  // a stream ends exactly at its start
  }
  for (std::uint64_t i = 0; i < lit_left; ++i) out[op + i] = lit[i];
  produced = op + lit_left;
  return DecodeStatus::ok;
}

}  // namespace zarrdirect::codec::portable::zstd_detail

// The two steps of the block-parallel zstd decoder (the jobs: zstd_block_jobs.hpp), written once
// for the CPU and the GPU like the rest of codec/portable:
//
//   step one, every block's slots independent of every other block's: zstd_build_huffman_table once per
//     block (from the description the job names), then zstd_decode_literal_slot for slots 0-3 (a
//     Huffman stream each, or the RLE literals) and zstd_decode_sequence_slot (the sequences,
//     their tables built from the descriptions the job names), each into scratch. Statuses go to
//     the block's workspace.
//   zstd_execute_frame: step two, one call per frame by a team of lanes (a warp on the GPU): walks
//     the frame's blocks in order, resolves each sequence's offset, checks it against the output
//     written so far, and copies literals and matches with every lane. Each copy is split so that
//     no lane reads a byte another lane writes in the same copy (literals come from scratch or the
//     source; a match reads only bytes before its destination, a short offset by its period), so a
//     copy is correct whatever order the lanes run in; the team synchronizes between copies.
//
// Every check of the serial decoder (zstd_frame.hpp) holds here: nothing is read outside the
// stored bytes and scratch the host listed, nothing written outside the frame's content.
#pragma once

#include <cstdint>
#include <cstring>

#include "codec/portable/decode_status.hpp"
#include "codec/portable/zstd_block_jobs.hpp"
#include "codec/portable/zstd_frame.hpp"
#include "codec/portable/zstd_huffman.hpp"
#include "codec/portable/zstd_sequences.hpp"
#include "codec/portable/zstd_xxhash.hpp"

namespace zarrdirect::codec::portable {

namespace zstd_block_detail {

// 16 bytes loaded and stored as one word where source and destination share their alignment.
#if defined(__CUDA_ARCH__)
using Word16 = uint4;
ZD_HOST_DEVICE inline Word16 load16(const std::uint8_t* from) { return *reinterpret_cast<const uint4*>(from); }
ZD_HOST_DEVICE inline void store16(std::uint8_t* to, Word16 word) { *reinterpret_cast<uint4*>(to) = word; }
#else
struct Word16 {
  std::uint8_t bytes[16];
};
inline Word16 load16(const std::uint8_t* from) {
  Word16 word;
  std::memcpy(word.bytes, from, 16);
  return word;
}
inline void store16(std::uint8_t* to, const Word16& word) { std::memcpy(to, word.bytes, 16); }
#endif

// 8 bytes at an 8-byte aligned address, as a little-endian word (the GPU and the hosts this
// builds for are little-endian).
ZD_HOST_DEVICE inline std::uint64_t load_word(const std::uint8_t* from) {
#if defined(__CUDA_ARCH__)
  return *reinterpret_cast<const std::uint64_t*>(from);
#else
  std::uint64_t word;
  std::memcpy(&word, from, 8);
  return word;
#endif
}
ZD_HOST_DEVICE inline void store_word(std::uint8_t* to, std::uint64_t word) {
#if defined(__CUDA_ARCH__)
  *reinterpret_cast<std::uint64_t*>(to) = word;
#else
  std::memcpy(to, &word, 8);
#endif
}

// Lane `lane` of `lanes`' share of copying n bytes that do not overlap. Long copies move whole
// words: 16 bytes where source and destination share their alignment; otherwise 8-byte words of
// the (aligned) destination, each assembled from the two aligned source words it straddles, so
// that a warp moves 256 bytes a step, not 32. Every load stays inside [from, from + n).
ZD_HOST_DEVICE inline void copy_part(std::uint32_t lane, std::uint32_t lanes, std::uint8_t* to, const std::uint8_t* from,
                                     std::uint64_t n) {
  const auto to_address = reinterpret_cast<std::uintptr_t>(to);
  const auto from_address = reinterpret_cast<std::uintptr_t>(from);
  if (n < 64) {
    for (std::uint64_t i = lane; i < n; i += lanes) to[i] = from[i];
    return;
  }
  if (((to_address ^ from_address) & 15) == 0) {
    const std::uint64_t head = (16 - (to_address & 15)) & 15;
    const std::uint64_t words = (n - head) / 16;
    for (std::uint64_t i = lane; i < head; i += lanes) to[i] = from[i];
    // Four words a lane at a time, loaded before any is stored: the loads are in flight together
    // (source and destination may alias as far as the compiler knows, so it would not reorder them).
    std::uint64_t i = lane;
    for (; i + 3 * lanes < words; i += 4 * lanes) {
      Word16 piece[4];
      for (std::uint32_t k = 0; k < 4; ++k) piece[k] = load16(from + head + 16 * (i + k * lanes));
      for (std::uint32_t k = 0; k < 4; ++k) store16(to + head + 16 * (i + k * lanes), piece[k]);
    }
    for (; i < words; i += lanes) store16(to + head + 16 * i, load16(from + head + 16 * i));
    for (std::uint64_t j = head + 16 * words + lane; j < n; j += lanes) to[j] = from[j];
    return;
  }
  const std::uint64_t head = (8 - (to_address & 7)) & 7;
  for (std::uint64_t i = lane; i < head; i += lanes) to[i] = from[i];
  std::uint8_t* out = to + head;
  const std::uint8_t* in = from + head;
  const std::uint64_t m = n - head;  // at least 57
  const std::uint64_t words = m / 8;  // at least 7
  const auto skew = static_cast<std::uint32_t>(reinterpret_cast<std::uintptr_t>(in) & 7);
  if (skew == 0) {
    for (std::uint64_t i = lane; i < words; i += lanes) store_word(out + 8 * i, load_word(in + 8 * i));
  } else {
    // Output word i takes the top bytes of aligned source word i and the bottom ones of word i + 1
    // (aligned words counted from in - skew). Words 0 and words - 1 go byte by byte, so no load
    // reaches before `from` or past its n bytes.
    const std::uint8_t* aligned = in - skew;
    const std::uint32_t low_shift = 8 * skew;
    const std::uint32_t high_shift = 64 - low_shift;
    std::uint64_t i = 1 + lane;
    for (; i + 3 * lanes + 1 < words; i += 4 * lanes) {
      std::uint64_t low[4], high[4];
      for (std::uint32_t k = 0; k < 4; ++k) {
        low[k] = load_word(aligned + 8 * (i + k * lanes));
        high[k] = load_word(aligned + 8 * (i + k * lanes + 1));
      }
      for (std::uint32_t k = 0; k < 4; ++k)
        store_word(out + 8 * (i + k * lanes), (low[k] >> low_shift) | (high[k] << high_shift));
    }
    for (; i + 1 < words; i += lanes)
      store_word(out + 8 * i, (load_word(aligned + 8 * i) >> low_shift) | (load_word(aligned + 8 * (i + 1)) << high_shift));
    for (std::uint64_t j = lane; j < 8; j += lanes) {
      out[j] = in[j];
      out[8 * (words - 1) + j] = in[8 * (words - 1) + j];
    }
  }
  for (std::uint64_t j = 8 * words + lane; j < m; j += lanes) out[j] = in[j];
}

// A match: n bytes repeating the `offset` bytes before `to`. With offset >= n the source ends
// where the destination starts (a plain copy); a shorter offset repeats a pattern of that period,
// so byte i is the source's byte i % offset, written before the match began.
ZD_HOST_DEVICE inline void match_part(std::uint32_t lane, std::uint32_t lanes, std::uint8_t* to, std::uint64_t offset,
                                      std::uint64_t n) {
  const std::uint8_t* from = to - offset;
  if (offset >= n) {
    copy_part(lane, lanes, to, from, n);
    return;
  }
  for (std::uint64_t i = lane; i < n; i += lanes) to[i] = from[i % offset];
}

ZD_HOST_DEVICE inline void fill_part(std::uint32_t lane, std::uint32_t lanes, std::uint8_t* to, std::uint8_t value,
                                     std::uint64_t n) {
  for (std::uint64_t i = lane; i < n; i += lanes) to[i] = value;
}

ZD_HOST_DEVICE inline DecodeStatus* slot_statuses(std::uint8_t* scratch, const ZstdBlockJob& job) {
  return reinterpret_cast<DecodeStatus*>(scratch + job.workspace + zstd_workspace::kStatuses);
}

// Where Huffman stream `slot` (< job.streams) of a block lies: its first byte in the source, the
// start of its segment of the block's literals in scratch, and the symbols it decodes to.
struct HuffmanStreamSlot {
  std::uint64_t src = 0;
  std::uint64_t out = 0;
  std::uint64_t count = 0;
};
ZD_HOST_DEVICE inline HuffmanStreamSlot huffman_stream_slot(const ZstdBlockJob& job, std::uint32_t slot) {
  HuffmanStreamSlot where;
  where.src = job.literals_src;
  for (std::uint32_t i = 0; i < slot; ++i) where.src += job.stream_sizes[i];
  const std::uint64_t segment = job.streams == 1 ? job.literal_size : (job.literal_size + 3) / 4;
  where.out = job.literals + slot * segment;
  where.count = job.streams == 1 || slot < 3 ? segment : job.literal_size - 3 * segment;
  return where;
}

// Huffman stream `slot` of a block decoded with `table` (built from the block's tree
// description) into its segment of the block's literals.
ZD_HOST_DEVICE inline DecodeStatus decode_huffman_stream_slot(const ZstdBlockJob& job, std::uint32_t slot,
                                                              const zstd_detail::HuffmanTable& table,
                                                              const std::uint8_t* src, std::uint8_t* scratch) {
  if (slot >= job.streams) return DecodeStatus::ok;
  const HuffmanStreamSlot where = huffman_stream_slot(job, slot);
  return zstd_detail::huffman_decode_stream(table, src + where.src, job.stream_sizes[slot], scratch + where.out,
                                            where.count);
}

// The block's sequences: the three tables built from the descriptions the job names, then every
// sequence's codes decoded into scratch (offsets are resolved by step two).
// `state` holds the tables while they are used: the block's workspace, or (on the GPU) shared memory.
ZD_HOST_DEVICE inline DecodeStatus decode_sequences_slot(const ZstdBlockJob& job, const std::uint8_t* src,
                                                         std::uint8_t* scratch, zstd_detail::SequenceState& state) {
  using namespace zstd_detail;
  if (job.sequence_count == 0) return DecodeStatus::ok;
  // Nothing is carried in `state` from another block (the listing resolved "repeat" tables to the
  // description they repeat), and GPU shared memory starts with whatever was there.
  state.literal_lengths.ready = state.match_lengths.ready = state.offsets.ready = false;
  fill_code_tables(state);
  std::uint64_t used = 0;
  // The format's order: literal lengths (kind 0), offsets (kind 2), match lengths (kind 1).
  DecodeStatus status = sequences_detail::read_table(job.tables[0].mode, 0, kLiteralLengthMaxSymbol,
                                                     src + job.tables[0].src, job.tables[0].size,
                                                     state.literal_lengths, used);
  if (status == DecodeStatus::ok)
    status = sequences_detail::read_table(job.tables[1].mode, 2, kOffsetMaxSymbol, src + job.tables[1].src,
                                          job.tables[1].size, state.offsets, used);
  if (status == DecodeStatus::ok)
    status = sequences_detail::read_table(job.tables[2].mode, 1, kMatchLengthMaxSymbol, src + job.tables[2].src,
                                          job.tables[2].size, state.match_lengths, used);
  if (status != DecodeStatus::ok) return status;
  SequenceStream stream;
  if (!stream.init(src + job.sequences_src, job.sequences_size, state)) return DecodeStatus::corrupt;
  auto* codes = reinterpret_cast<SequenceCodes*>(scratch + job.sequences);
  for (std::uint32_t n = 0; n < job.sequence_count; ++n)
    if (!stream.next(codes[n], n + 1 == job.sequence_count)) return DecodeStatus::corrupt;
  return stream.finished() ? DecodeStatus::ok : DecodeStatus::corrupt;
}

}  // namespace zstd_block_detail

// Step one: the Huffman table of a block's literals (Huffman literals only), from the tree description the job names.
ZD_HOST_DEVICE inline DecodeStatus zstd_build_huffman_table(const ZstdBlockJob& job, const std::uint8_t* src,
                                                            zstd_detail::HuffmanTable& table) {
  std::uint64_t tree_bytes = 0;
  return zstd_detail::huffman_read_table(src + job.huffman_tree, job.huffman_tree_size, table, tree_bytes);
}

// Step one's sequence slot of a block: its status goes to the block's workspace, where step two
// reads it.
// `state` is where the block's sequence tables are built while its sequences are decoded: on the
// GPU a thread's own part of shared memory, so that a sequence's three table lookups are not
// global-memory loads, as the Huffman tables' were before they moved there. (Not measured on
// match-heavy data: the sample's zstd-1 frames hold under one sequence a block.)
ZD_HOST_DEVICE inline void zstd_decode_sequence_slot(const ZstdBlockJob& job, const std::uint8_t* src,
                                                     std::uint8_t* scratch, zstd_detail::SequenceState& state) {
  using namespace zstd_block_detail;
  if (job.type != ZstdBlockType::compressed) return;
  slot_statuses(scratch, job)[kZstdSequenceSlot] = decode_sequences_slot(job, src, scratch, state);
}
// The same with the tables in the block's workspace (the host run).
ZD_HOST_DEVICE inline void zstd_decode_sequence_slot(const ZstdBlockJob& job, const std::uint8_t* src,
                                                     std::uint8_t* scratch) {
  // Only a compressed block has a workspace (a frame of raw blocks may have no scratch at all).
  if (job.type != ZstdBlockType::compressed) return;
  auto& state = *reinterpret_cast<zstd_detail::SequenceState*>(scratch + job.workspace + zstd_workspace::kSequenceState);
  zstd_decode_sequence_slot(job, src, scratch, state);
}

// Step one's literal slots (0 to 3) of a block whose Huffman table (for Huffman literals) was
// built already by zstd_build_huffman_table, `table_status` its status: the four stream threads of a
// block share one table (in shared memory on the GPU). Slot 0 also writes RLE literals. Each
// slot's status goes to the block's workspace.
ZD_HOST_DEVICE inline void zstd_decode_literal_slot(const ZstdBlockJob& job, std::uint32_t slot,
                                                    const zstd_detail::HuffmanTable& table, DecodeStatus table_status,
                                                    const std::uint8_t* src, std::uint8_t* scratch) {
  using namespace zstd_block_detail;
  if (job.type != ZstdBlockType::compressed) return;
  DecodeStatus status = DecodeStatus::ok;
  if (job.literals_type == ZstdLiteralsType::huffman) {
    status = table_status != DecodeStatus::ok ? table_status : decode_huffman_stream_slot(job, slot, table, src, scratch);
  } else if (job.literals_type == ZstdLiteralsType::rle && slot == 0) {
    fill_part(0, 1, scratch + job.literals, src[job.literals_src], job.literal_size);
  }
  slot_statuses(scratch, job)[slot] = status;
}

// Step two's lanes on the host: each copy runs every lane's share in turn, which is what lanes
// running together do, since no lane reads what another writes within one copy. Used by the
// tests and the host reference run (32 lanes check a warp's split of the work, 256 a block of
// threads').
struct ZstdLaneLoopTeam {
  std::uint32_t lanes = 32;
  void copy(std::uint8_t* to, const std::uint8_t* from, std::uint64_t n) const {
    for (std::uint32_t lane = 0; lane < lanes; ++lane) zstd_block_detail::copy_part(lane, lanes, to, from, n);
  }
  void match(std::uint8_t* to, std::uint64_t offset, std::uint64_t n) const {
    for (std::uint32_t lane = 0; lane < lanes; ++lane) zstd_block_detail::match_part(lane, lanes, to, offset, n);
  }
  void fill(std::uint8_t* to, std::uint8_t value, std::uint64_t n) const {
    for (std::uint32_t lane = 0; lane < lanes; ++lane) zstd_block_detail::fill_part(lane, lanes, to, value, n);
  }
};

// Step two for one frame, after step one ran for all its blocks: every lane of `team` calls it
// with the same arguments (its decisions are the same on every lane; only the copies are split).
// Team: copy(to, from, n), match(to, offset, n), fill(to, value, n), each a whole team's copy
// that returns when every lane's share is written and visible to all lanes.
template <class Team>
ZD_HOST_DEVICE inline DecodeOutcome zstd_execute_frame(const ZstdFrameJob& frame, const ZstdBlockJob* blocks,
                                                       const std::uint8_t* src, std::uint8_t* scratch,
                                                       std::uint8_t* dst, const Team& team) {
  using namespace zstd_detail;
  DecodeOutcome result;
  std::uint8_t* out = dst + frame.dst;
  const std::uint64_t end = frame.content_size;
  const std::uint64_t block_max = frame.window_size < kZstdBlockMax ? frame.window_size : kZstdBlockMax;
  std::uint64_t op = 0;
  std::uint64_t repeat[3] = {1, 4, 8};
  for (std::uint32_t b = 0; b < frame.block_count; ++b) {
    const ZstdBlockJob& job = blocks[frame.first_block + b];
    if (job.type != ZstdBlockType::compressed) {
      if (job.size > end - op) {
        result.status = DecodeStatus::output_overflow;
        return result;
      }
      if (job.type == ZstdBlockType::raw) {
        team.copy(out + op, src + job.src, job.size);
      } else {
        team.fill(out + op, src[job.src], job.size);
      }
      op += job.size;
      continue;
    }
    const DecodeStatus* statuses = zstd_block_detail::slot_statuses(scratch, job);
    for (std::uint32_t slot = 0; slot < kZstdSlotsPerBlock; ++slot) {
      if (statuses[slot] != DecodeStatus::ok) {
        result.status = statuses[slot];
        return result;
      }
    }
    const std::uint64_t block_start = op;
    const std::uint8_t* literal = job.literals_type == ZstdLiteralsType::raw ? src + job.literals_src
                                                                              : scratch + job.literals;
    std::uint64_t literals_left = job.literal_size;
    const auto* codes = reinterpret_cast<const SequenceCodes*>(scratch + job.sequences);
    for (std::uint32_t n = 0; n < job.sequence_count; ++n) {
      const SequenceCodes sequence = codes[n];
      const std::uint64_t literal_length = sequence.literal_length;
      const std::uint64_t match_length = sequence.match_length;
      const std::uint64_t offset = resolve_offset(sequence.offset_value, literal_length, repeat);
      if (literal_length > literals_left) {
        result.status = DecodeStatus::corrupt;
        return result;
      }
      if (literal_length > end - op) {
        result.status = DecodeStatus::output_overflow;
        return result;
      }
      team.copy(out + op, literal, literal_length);
      op += literal_length;
      literal += literal_length;
      literals_left -= literal_length;
      if (offset == 0 || offset > op) {
        result.status = DecodeStatus::corrupt;
        return result;
      }
      if (match_length > end - op) {
        result.status = DecodeStatus::output_overflow;
        return result;
      }
      team.match(out + op, offset, match_length);
      op += match_length;
    }
    if (literals_left > end - op) {
      result.status = DecodeStatus::output_overflow;
      return result;
    }
    team.copy(out + op, literal, literals_left);
    op += literals_left;
    if (op - block_start > block_max) {  // no block decodes to more than the format's block size
      result.status = DecodeStatus::corrupt;
      return result;
    }
  }
  if (op != end) {
    result.status = DecodeStatus::size_mismatch;
    return result;
  }
  if (frame.has_checksum != 0 && static_cast<std::uint32_t>(zstd_detail::xxhash64(out, op)) != zstd_detail::le32(src + frame.checksum_src)) {
    result.status = DecodeStatus::checksum_mismatch;
    return result;
  }
  result.written = op;
  return result;
}

}  // namespace zarrdirect::codec::portable

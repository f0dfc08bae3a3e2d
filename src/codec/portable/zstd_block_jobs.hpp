// The work list of the block-parallel zstd decoder: a zstd frame split into jobs that a GPU runs
// in two steps (zstd_block_decode.hpp).
//
// Why two steps: a frame's blocks depend on each other only through their output (matches reach
// back into earlier blocks) and through small state (the repeat offsets; "repeat" and "treeless"
// tables, which re-use an earlier block's table). Entropy decoding (the Huffman literals, up to
// four streams a block, and the FSE-coded sequences) needs neither once each block knows where its
// tables are described, which the host finds by walking the block and section headers (a few
// bytes each; cuda/zstd_gpu_jobs.hpp). So step one decodes every stream of every block of a batch
// at once (each Huffman stream split over lanes: zstd_huffman_lanes.hpp), into scratch; step two
// executes each frame's blocks in order, a team of threads a frame, copying literals and matches
// into the output, the repeat offsets resolved as it goes. A 4 MiB frame of 32 blocks gives
// thousands of step-one threads instead of one.
//
// Offsets named `src` are relative to the batch's stored bytes, `scratch` to its scratch buffer,
// `dst` to its output; the tables travel to the device byte for byte.
#pragma once

#include <cstdint>
#include <type_traits>

#include "codec/portable/decode_status.hpp"
#include "codec/portable/zstd_huffman.hpp"
#include "codec/portable/zstd_sequences.hpp"

namespace zarrdirect::codec::portable {

// Threads of step one per block: the four Huffman streams (slot 0 alone for one stream or RLE
// literals), then the sequences.
constexpr std::uint32_t kZstdSlotsPerBlock = 5;
constexpr std::uint32_t kZstdSequenceSlot = 4;

enum class ZstdBlockType : std::uint8_t { raw = 0, rle = 1, compressed = 2 };
enum class ZstdLiteralsType : std::uint8_t { raw = 0, rle = 1, huffman = 2 };

// How one of a block's three sequence tables is built: its mode (0 predefined, 1 RLE,
// 2 FSE-compressed; a "repeat" table names the description of the block that set it) and where
// its description is (the RLE symbol's byte, or the compressed description).
struct ZstdTableSource {
  std::uint64_t src = 0;
  std::uint32_t size = 0;
  std::uint32_t mode = 0;
};

// One block of a frame.
struct ZstdBlockJob {
  std::uint64_t src = 0;         // raw: its bytes; RLE: its byte; compressed: its content
  std::uint64_t workspace = 0;   // scratch: statuses and sequence tables (layout below)
  std::uint64_t literals = 0;    // scratch: decoded literals (Huffman or RLE literals)
  std::uint64_t sequences = 0;   // scratch: sequence_count SequenceCodes
  std::uint64_t literals_src = 0;   // raw literals' bytes, the RLE literal's byte, or the first Huffman stream
  std::uint64_t huffman_tree = 0;   // the tree description this block's literals use (its own or an earlier one)
  std::uint64_t sequences_src = 0;  // the sequences' bitstream
  ZstdTableSource tables[3];        // literal lengths, offsets, match lengths
  std::uint32_t size = 0;           // raw and RLE: decoded bytes; compressed: stored content bytes
  std::uint32_t literal_size = 0;   // decoded literal bytes
  std::uint32_t stream_sizes[4] = {};
  std::uint32_t huffman_tree_size = 0;  // bytes from huffman_tree to the end of that block's content
  std::uint32_t sequences_size = 0;
  std::uint32_t sequence_count = 0;
  ZstdBlockType type = ZstdBlockType::raw;
  ZstdLiteralsType literals_type = ZstdLiteralsType::raw;
  std::uint8_t streams = 0;        // Huffman streams: 1 or 4
  std::uint8_t unused = 0;
};

// One frame: its blocks are blocks[first_block, first_block + block_count) of the batch.
struct ZstdFrameJob {
  std::uint64_t dst = 0;
  std::uint64_t content_size = 0;  // the frame header's; the caller's capacity was checked against it
  std::uint64_t window_size = 0;
  std::uint64_t checksum_src = 0;  // the 4-byte content checksum, when has_checksum
  std::uint32_t first_block = 0;
  std::uint32_t block_count = 0;
  std::uint32_t has_checksum = 0;
  std::uint32_t unused = 0;
};

static_assert(std::is_trivially_copyable_v<ZstdBlockJob> && std::is_trivially_copyable_v<ZstdFrameJob>);

// A block's workspace: a status per step-one slot, then the sequence tables. (The Huffman table is
// built where its four stream threads share it: GPU shared memory, or the host run's own.)
namespace zstd_workspace {
constexpr std::uint64_t kStatuses = 0;
constexpr std::uint64_t kSequenceState = 32;
constexpr std::uint64_t kSequenceStateBytes = (sizeof(zstd_detail::SequenceState) + 15) / 16 * 16;

// The workspace a block needs, a multiple of 16.
ZD_HOST_DEVICE inline std::uint64_t bytes(const ZstdBlockJob& job) {
  return kSequenceState + (job.sequence_count > 0 ? kSequenceStateBytes : 0);
}
}  // namespace zstd_workspace

static_assert(kZstdSlotsPerBlock * sizeof(DecodeStatus) <= zstd_workspace::kSequenceState);
static_assert(alignof(zstd_detail::SequenceState) <= 16);

}  // namespace zarrdirect::codec::portable

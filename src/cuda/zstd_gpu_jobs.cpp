#include "cuda/zstd_gpu_jobs.hpp"

#include <memory>

#include "codec/portable/zstd_bits.hpp"
#include "codec/portable/zstd_block_decode.hpp"
#include "codec/portable/zstd_frame.hpp"
#include "codec/portable/zstd_fse.hpp"
#include "codec/portable/zstd_huffman_lanes.hpp"

namespace zarrdirect::cuda {
namespace {

namespace portable = codec::portable;
namespace detail = codec::portable::zstd_detail;
using portable::DecodeStatus;
using portable::ZstdBlockJob;

std::uint64_t round16(std::uint64_t n) { return (n + 15) / 16 * 16; }

// What earlier blocks of the frame left for later ones to re-use.
struct CarriedTables {
  bool tree = false;
  std::uint64_t tree_src = 0;
  std::uint32_t tree_size = 0;
  bool sequence_table[3] = {false, false, false};
  portable::ZstdTableSource sequence_tables[3];
};

// The literals section at content[0, size) of a block whose content sits at `base` in the source:
// fills the job's literal fields; `used` gets the section's size.
DecodeStatus list_literals(const std::uint8_t* content, std::uint64_t size, std::uint64_t base,
                           std::uint64_t block_max, CarriedTables& carried, ZstdBlockJob& job, std::uint64_t& used) {
  detail::LiteralsHeader section;
  const DecodeStatus status = detail::read_literals_header(content, size, block_max, section);
  if (status != DecodeStatus::ok) return status;
  const std::uint32_t header = section.header;
  if (section.type < 2) {
    job.literals_type = section.type == 0 ? portable::ZstdLiteralsType::raw : portable::ZstdLiteralsType::rle;
    job.literals_src = base + header;
    job.literal_size = static_cast<std::uint32_t>(section.regenerated);
    used = header + section.stored;
    return DecodeStatus::ok;
  }
  const std::uint64_t regenerated = section.regenerated;
  const std::uint64_t compressed = section.stored;
  const bool four_streams = section.four_streams;
  const std::uint32_t type = section.type;
  std::uint64_t body = header;
  std::uint64_t body_size = compressed;
  if (type == 2) {
    // The tree description's size is in its first byte: FSE-compressed weights (< 128) or
    // weights stored 4 bits each. Its contents are checked where the GPU builds the table.
    if (body_size == 0) return DecodeStatus::truncated;
    const std::uint32_t first = content[body];
    if (first == 0) return DecodeStatus::corrupt;
    const std::uint64_t tree_bytes = first < 128 ? 1 + std::uint64_t{first} : 1 + (std::uint64_t{first} - 127 + 1) / 2;
    if (tree_bytes > body_size) return DecodeStatus::truncated;
    carried.tree = true;
    carried.tree_src = base + body;
    carried.tree_size = static_cast<std::uint32_t>(tree_bytes);
    body += tree_bytes;
    body_size -= tree_bytes;
  } else if (!carried.tree) {
    return DecodeStatus::corrupt;  // treeless literals with no earlier tree in the frame
  }
  job.literals_type = portable::ZstdLiteralsType::huffman;
  job.huffman_tree = carried.tree_src;
  job.huffman_tree_size = carried.tree_size;
  job.literal_size = static_cast<std::uint32_t>(regenerated);
  if (!four_streams) {
    job.streams = 1;
    job.stream_sizes[0] = static_cast<std::uint32_t>(body_size);
    job.literals_src = base + body;
  } else {
    if (body_size < 6) return DecodeStatus::corrupt;
    std::uint64_t first_three = 0;
    for (std::uint32_t i = 0; i < 3; ++i) {
      job.stream_sizes[i] = detail::le16(content + body + 2 * i);
      first_three += job.stream_sizes[i];
    }
    if (6 + first_three > body_size) return DecodeStatus::corrupt;
    job.stream_sizes[3] = static_cast<std::uint32_t>(body_size - 6 - first_three);
    job.streams = 4;
    job.literals_src = base + body + 6;
  }
  used = header + compressed;
  return DecodeStatus::ok;
}

// The sequences section at content[0, size): the count, each table's description (or the earlier
// one a "repeat" table re-uses) and the bitstream.
DecodeStatus list_sequences(const std::uint8_t* content, std::uint64_t size, std::uint64_t base,
                            CarriedTables& carried, ZstdBlockJob& job) {
  detail::SequencesHeader header;
  DecodeStatus status = detail::read_sequences_header(content, size, header);
  if (status != DecodeStatus::ok) return status;
  job.sequence_count = static_cast<std::uint32_t>(header.count);
  if (header.count == 0) return DecodeStatus::ok;
  constexpr std::uint32_t kShifts[3] = {6, 4, 2};  // literal lengths, offsets, match lengths
  constexpr std::uint32_t kMaxLogs[3] = {detail::kLiteralLengthMaxLog, detail::kOffsetMaxLog, detail::kMatchLengthMaxLog};
  constexpr std::uint32_t kMaxSymbols[3] = {detail::kLiteralLengthMaxSymbol, detail::kOffsetMaxSymbol,
                                            detail::kMatchLengthMaxSymbol};
  std::uint64_t at = header.tables_at;
  for (std::uint32_t t = 0; t < 3; ++t) {
    const std::uint32_t mode = (header.modes >> kShifts[t]) & 3;
    portable::ZstdTableSource source;
    source.mode = mode;
    source.src = base + at;
    if (mode == 1) {  // RLE: one symbol
      if (at >= size) return DecodeStatus::truncated;
      if (content[at] > kMaxSymbols[t]) return DecodeStatus::corrupt;
      source.size = 1;
    } else if (mode == 2) {  // FSE-compressed: its description's length is known by reading it
      detail::ForwardBits bits{content + at, size - at, 0};
      std::int16_t counts[detail::kFseMaxSymbols];
      std::uint32_t symbols = 0;
      std::uint32_t log = 0;
      status = detail::fse_read_counts(bits, kMaxLogs[t], kMaxSymbols[t], counts, symbols, log);
      if (status != DecodeStatus::ok) return status;
      if (bits.bytes_used() > size - at) return DecodeStatus::truncated;
      source.size = static_cast<std::uint32_t>(bits.bytes_used());
    } else if (mode == 3) {  // repeat: the table an earlier block built
      if (!carried.sequence_table[t]) return DecodeStatus::corrupt;
      job.tables[t] = carried.sequence_tables[t];
      continue;
    }
    at += source.size;
    job.tables[t] = source;
    carried.sequence_table[t] = true;
    carried.sequence_tables[t] = source;
  }
  if (at >= size) return DecodeStatus::truncated;  // no bitstream
  job.sequences_src = base + at;
  job.sequences_size = static_cast<std::uint32_t>(size - at);
  return DecodeStatus::ok;
}

}  // namespace

DecodeStatus append_zstd_jobs(std::span<const std::uint8_t> bytes, std::uint64_t src_offset, std::uint64_t dst_offset,
                              std::uint64_t dst_capacity, std::uint64_t& scratch_end, ZstdGpuJobs& jobs) {
  const std::uint8_t* src = bytes.data();
  const std::uint64_t src_size = bytes.size();
  const portable::ZstdFramePlan plan = portable::zstd_frame_plan(src, src_size, dst_capacity);
  if (plan.status != DecodeStatus::ok) return plan.status;
  const std::size_t first_block = jobs.blocks.size();
  auto fail = [&](DecodeStatus status) {
    jobs.blocks.resize(first_block);
    return status;
  };
  const std::uint64_t block_max = plan.window_size < portable::kZstdBlockMax ? plan.window_size : portable::kZstdBlockMax;
  // A valid frame's blocks decode to at least their raw and RLE bytes, their literals and 3 bytes
  // a sequence: more than the content size is corrupt, and the scratch stays within 4x of it.
  const std::uint64_t content = plan.content_size;
  const std::uint64_t scratch_limit = 4 * content + (std::uint64_t{64} << 10);
  std::uint64_t least_decoded = 0;
  std::uint64_t scratch = scratch_end;
  CarriedTables carried;
  std::uint64_t at = plan.header_size;
  for (bool last = false; !last;) {
    if (src_size - at < 3) return fail(DecodeStatus::truncated);
    const std::uint32_t header = detail::le24(src + at);
    at += 3;
    last = (header & 1) != 0;
    const std::uint32_t type = (header >> 1) & 3;
    const std::uint64_t size = header >> 3;
    if (type == 3 || size > block_max) return fail(DecodeStatus::corrupt);
    const std::uint64_t stored = type == 1 ? 1 : size;
    if (src_size - at < stored) return fail(DecodeStatus::truncated);
    ZstdBlockJob job;
    job.src = src_offset + at;
    job.size = static_cast<std::uint32_t>(size);
    job.type = static_cast<portable::ZstdBlockType>(type);
    if (type < 2) {
      least_decoded += size;
    } else {
      std::uint64_t used = 0;
      DecodeStatus status = list_literals(src + at, size, src_offset + at, block_max, carried, job, used);
      if (status == DecodeStatus::ok)
        status = list_sequences(src + at + used, size - used, src_offset + at + used, carried, job);
      if (status != DecodeStatus::ok) return fail(status);
      least_decoded += job.literal_size + 3 * std::uint64_t{job.sequence_count};
      job.workspace = scratch;
      scratch += portable::zstd_workspace::bytes(job);
      if (job.literals_type != portable::ZstdLiteralsType::raw) {
        job.literals = scratch;
        scratch += round16(job.literal_size);
      }
      job.sequences = scratch;
      scratch += round16(std::uint64_t{job.sequence_count} * sizeof(detail::SequenceCodes));
    }
    if (least_decoded > content) return fail(DecodeStatus::corrupt);
    if (scratch - scratch_end > scratch_limit) return fail(DecodeStatus::unsupported);
    jobs.blocks.push_back(job);
    at += stored;
  }
  portable::ZstdFrameJob frame;
  if (plan.checksum) {
    if (src_size - at < 4) return fail(DecodeStatus::truncated);
    frame.checksum_src = src_offset + at;
    frame.has_checksum = 1;
    at += 4;
  }
  if (at != src_size) return fail(DecodeStatus::unsupported);  // more frames after this one: libzstd's
  frame.dst = dst_offset;
  frame.content_size = content;
  frame.window_size = plan.window_size;
  frame.first_block = static_cast<std::uint32_t>(first_block);
  frame.block_count = static_cast<std::uint32_t>(jobs.blocks.size() - first_block);
  jobs.frames.push_back(frame);
  scratch_end = scratch;
  return DecodeStatus::ok;
}

void append_rebased(const ZstdGpuJobs& listed, std::uint64_t src_base, std::uint64_t dst_base,
                    std::uint64_t scratch_base, ZstdGpuJobs& into) {
  const auto block_base = static_cast<std::uint32_t>(into.blocks.size());
  for (ZstdBlockJob job : listed.blocks) {
    job.src += src_base;
    job.literals_src += src_base;
    job.huffman_tree += src_base;
    job.sequences_src += src_base;
    for (portable::ZstdTableSource& table : job.tables) table.src += src_base;
    job.workspace += scratch_base;
    job.literals += scratch_base;
    job.sequences += scratch_base;
    into.blocks.push_back(job);
  }
  for (portable::ZstdFrameJob frame : listed.frames) {
    frame.dst += dst_base;
    frame.checksum_src += src_base;
    frame.first_block += block_base;
    into.frames.push_back(frame);
  }
}

void run_zstd_jobs_on_host(const ZstdGpuJobs& jobs, const std::uint8_t* src, std::uint8_t* dst, std::uint8_t* scratch,
                           std::vector<portable::DecodeOutcome>& outcomes, std::uint32_t literal_lanes,
                           std::uint32_t frame_lanes) {
  auto table = std::make_unique<portable::zstd_detail::HuffmanTable>();
  for (const ZstdBlockJob& job : jobs.blocks) {
    DecodeStatus table_status = DecodeStatus::ok;
    const bool huffman =
        job.type == portable::ZstdBlockType::compressed && job.literals_type == portable::ZstdLiteralsType::huffman;
    if (huffman) table_status = portable::zstd_build_huffman_table(job, src, *table);
    for (std::uint32_t slot = 0; slot < portable::kZstdSequenceSlot; ++slot) {
      if (huffman && literal_lanes > 1 && table_status == DecodeStatus::ok && slot < job.streams) {
        const auto where = portable::zstd_block_detail::huffman_stream_slot(job, slot);
        portable::zstd_block_detail::slot_statuses(scratch, job)[slot] = portable::zstd_detail::huffman_decode_stream_lanes(
            *table, src + where.src, job.stream_sizes[slot], scratch + where.out, where.count, literal_lanes);
      } else {
        portable::zstd_decode_literal_slot(job, slot, *table, table_status, src, scratch);
      }
    }
    portable::zstd_decode_sequence_slot(job, src, scratch);
  }
  outcomes.clear();
  const portable::ZstdLaneLoopTeam team{frame_lanes};
  for (const portable::ZstdFrameJob& frame : jobs.frames)
    outcomes.push_back(portable::zstd_execute_frame(frame, jobs.blocks.data(), src, scratch, dst, team));
}

}  // namespace zarrdirect::cuda

#include "cuda/zstd_gpu_jobs.hpp"

#include <cstdint>
#include <random>
#include <vector>

#include <gtest/gtest.h>
#include <zstd.h>

#include "codec/portable/zstd_frame.hpp"
#include "codec/portable/zstd_test_data.hpp"

namespace zarrdirect::cuda {
namespace {

namespace portable = codec::portable;
using portable::DecodeOutcome;
using portable::DecodeStatus;
using namespace portable::zstd_test;

// A batch the way the GPU decode sink builds one: frames side by side in one source buffer (at
// uneven places), each listed at offset 0 and then moved to its place, outputs side by side, and
// the run of both steps on exactly-sized host buffers (AddressSanitizer sees any access past
// them). Frames the listing refuses get its status as their outcome.
struct HostBatch {
  std::vector<DecodeOutcome> outcomes;
  std::vector<Bytes> decoded;
  ZstdGpuJobs jobs;
};

HostBatch run_batch(const std::vector<Bytes>& frames, const std::vector<std::size_t>& capacities,
                    std::uint32_t literal_lanes = 1, std::uint32_t frame_lanes = 32) {
  HostBatch batch;
  Bytes src;
  std::vector<std::uint64_t> dst_at;
  std::vector<DecodeStatus> listed(frames.size(), DecodeStatus::ok);
  std::vector<std::int64_t> frame_index(frames.size(), -1);
  std::uint64_t dst_end = 0;
  std::uint64_t scratch_end = 0;
  for (std::size_t f = 0; f < frames.size(); ++f) {
    src.resize(src.size() + f % 7);  // not every frame starts aligned
    const std::uint64_t src_at = src.size();
    src.insert(src.end(), frames[f].begin(), frames[f].end());
    dst_at.push_back(dst_end + f % 3);
    ZstdGpuJobs one;
    std::uint64_t scratch = 0;
    listed[f] = append_zstd_jobs(frames[f], 0, 0, capacities[f], scratch, one);
    if (listed[f] != DecodeStatus::ok) {
      EXPECT_EQ(scratch, 0u) << "a refused frame takes no scratch";
      EXPECT_TRUE(one.frames.empty() && one.blocks.empty()) << "a refused frame lists no jobs";
    } else {
      frame_index[f] = static_cast<std::int64_t>(batch.jobs.frames.size());
      append_rebased(one, src_at, dst_at[f], scratch_end + 16, batch.jobs);
      scratch_end += 16 + scratch;
    }
    dst_end = dst_at[f] + capacities[f];
  }
  Bytes dst(dst_end, 0xEE);
  Bytes scratch(scratch_end, 0xEE);
  std::vector<DecodeOutcome> outcomes;
  run_zstd_jobs_on_host(batch.jobs, src.data(), dst.data(), scratch.data(), outcomes, literal_lanes, frame_lanes);
  for (std::size_t f = 0; f < frames.size(); ++f) {
    DecodeOutcome outcome;
    outcome.status = listed[f];
    if (frame_index[f] >= 0) outcome = outcomes[static_cast<std::size_t>(frame_index[f])];
    batch.outcomes.push_back(outcome);
    const auto begin = dst.begin() + static_cast<std::ptrdiff_t>(dst_at[f]);
    batch.decoded.emplace_back(begin, begin + static_cast<std::ptrdiff_t>(outcome.status == DecodeStatus::ok ? outcome.written : 0));
  }
  return batch;
}

// The lanes a Huffman stream the kernels use (the serial decoder, and each stream split), each
// with the lanes a frame of step two (a warp, a block of threads) paired so that both of those
// meet every kind of literals.
struct Lanes {
  std::uint32_t literal;
  std::uint32_t frame;
};
constexpr Lanes kLanes[] = {{1, 32}, {8, 256}, {32, 32}, {32, 256}};

// Every frame decodes to its input, as the kernels' run of the same jobs must, with the literals
// and frames decoded by each number of lanes.
void expect_batch_round_trip(const std::vector<Bytes>& inputs, const Settings& settings, const char* what) {
  SCOPED_TRACE(testing::Message() << what << ", level " << settings.level << (settings.checksum ? ", checksum" : ""));
  std::vector<Bytes> frames;
  std::vector<std::size_t> capacities;
  for (const Bytes& input : inputs) {
    frames.push_back(compress(input, settings));
    capacities.push_back(input.size());
  }
  for (const Lanes lanes : kLanes) {
    SCOPED_TRACE(testing::Message() << lanes.literal << " lanes a Huffman stream, " << lanes.frame << " a frame");
    const HostBatch batch = run_batch(frames, capacities, lanes.literal, lanes.frame);
    for (std::size_t f = 0; f < inputs.size(); ++f) {
      ASSERT_EQ(batch.outcomes[f].status, DecodeStatus::ok) << "frame " << f << ": " << describe(batch.outcomes[f].status);
      EXPECT_EQ(batch.outcomes[f].written, inputs[f].size());
      EXPECT_TRUE(batch.decoded[f] == inputs[f]) << "frame " << f << " of " << inputs[f].size() << " bytes";
    }
  }
}

TEST(ZstdGpuJobs, EveryLevelAndKindEqualsTheInput) {
  for (int level = 1; level <= 19; level += (level < 5 ? 1 : 3)) {
    const std::size_t n = level <= 9 ? 300 * 1024 : 40 * 1024;
    std::vector<Bytes> inputs;
    for (int kind = 0; kind < 6; ++kind) inputs.push_back(data_of_kind(kind, n + kind, static_cast<std::uint32_t>(level * 10 + kind)));
    Settings settings;
    settings.level = level;
    settings.checksum = level % 2 == 0;
    expect_batch_round_trip(inputs, settings, "six kinds");
  }
}

TEST(ZstdGpuJobs, NegativeLevelsLongDistanceAndTinyInputs) {
  for (const int level : {-5, -1, 3}) {
    for (const bool ldm : {false, true}) {
      std::vector<Bytes> inputs;
      for (int kind = 0; kind < 6; ++kind) inputs.push_back(data_of_kind(kind, 140 * 1024 + 17, static_cast<std::uint32_t>(kind)));
      Settings settings;
      settings.level = level;
      settings.long_distance = ldm;
      settings.checksum = ldm;
      expect_batch_round_trip(inputs, settings, ldm ? "long distance" : "plain");
    }
  }
  for (const int level : {-3, 1, 19}) {
    std::vector<Bytes> inputs;
    for (std::size_t n = 0; n <= 64; ++n) inputs.push_back(data_of_kind(static_cast<int>(n), n, static_cast<std::uint32_t>(n)));
    Settings settings;
    settings.level = level;
    expect_batch_round_trip(inputs, settings, "tiny");
  }
}

// The listing's cases are all reached by the inputs above: re-used trees and tables, both stream
// counts, every literal and block type.
TEST(ZstdGpuJobs, ListsEveryKindOfBlock) {
  ZstdGpuJobs jobs;
  std::uint64_t scratch = 0;
  for (int level : {1, 3, 19}) {
    for (int kind = 0; kind < 6; ++kind) {
      Settings settings;
      settings.level = level;
      const Bytes input = data_of_kind(kind, level == 19 ? 300 * 1024 : 600 * 1024, static_cast<std::uint32_t>(kind));
      ASSERT_EQ(append_zstd_jobs(compress(input, settings), 0, 0, input.size(), scratch, jobs), DecodeStatus::ok);
    }
    Settings settings;
    settings.level = level;
    const Bytes short_frame = compress(text_bytes(100, 3), settings);
    ASSERT_EQ(append_zstd_jobs(short_frame, 0, 0, 100, scratch, jobs), DecodeStatus::ok);
  }
  int block_types[3] = {}, literal_types[3] = {}, one_stream = 0, four_streams = 0, reused_tree = 0, reused_table = 0,
      with_sequences = 0;
  for (const portable::ZstdBlockJob& job : jobs.blocks) {
    ++block_types[static_cast<int>(job.type)];
    if (job.type != portable::ZstdBlockType::compressed) continue;
    ++literal_types[static_cast<int>(job.literals_type)];
    if (job.literals_type == portable::ZstdLiteralsType::huffman) {
      (job.streams == 1 ? one_stream : four_streams) += 1;
      if (job.huffman_tree < job.src) ++reused_tree;
    }
    if (job.sequence_count > 0) {
      ++with_sequences;
      for (const portable::ZstdTableSource& table : job.tables)
        if (table.mode != 0 && table.src < job.src) ++reused_table;
    }
  }
  for (int t = 0; t < 3; ++t) EXPECT_GT(block_types[t], 0) << "block type " << t;
  // RLE literals, which libzstd writes only for long runs of one literal byte: HandWrittenBlocks.
  EXPECT_GT(literal_types[0], 0);
  EXPECT_GT(literal_types[2], 0);
  EXPECT_GT(one_stream, 0);
  EXPECT_GT(four_streams, 0);
  EXPECT_GT(reused_tree, 0) << "no treeless literals";
  EXPECT_GT(reused_table, 0) << "no repeated sequence table";
  EXPECT_GT(with_sequences, 0);
}

// Frames written byte by byte: RLE literals (a compressed block with 20 copies of one literal and
// no sequences), then a raw block and an RLE block; decoded as libzstd decodes them.
TEST(ZstdGpuJobs, HandWrittenBlocks) {
  const auto block_header = [](Bytes& out, std::uint32_t type, std::uint32_t size, bool last) {
    const std::uint32_t header = (last ? 1u : 0u) | (type << 1) | (size << 3);
    for (int i = 0; i < 3; ++i) out.push_back(static_cast<std::uint8_t>(header >> (8 * i)));
  };
  // Magic, a single-segment descriptor with a 1-byte content size: 20 + 3 + 5 bytes.
  Bytes frame = {0x28, 0xB5, 0x2F, 0xFD, 0x20, 28};
  block_header(frame, 2, 3, false);
  frame.insert(frame.end(), {static_cast<std::uint8_t>((20 << 3) | 1), 'q', 0});
  block_header(frame, 0, 3, false);
  frame.insert(frame.end(), {'a', 'b', 'c'});
  block_header(frame, 1, 5, true);
  frame.push_back('r');
  Bytes reference(28);
  ASSERT_EQ(ZSTD_decompress(reference.data(), reference.size(), frame.data(), frame.size()), 28u);
  const HostBatch batch = run_batch({frame}, {28});
  ASSERT_EQ(batch.outcomes[0].status, DecodeStatus::ok) << describe(batch.outcomes[0].status);
  EXPECT_TRUE(batch.decoded[0] == reference);
  EXPECT_EQ(batch.jobs.blocks.at(0).literals_type, portable::ZstdLiteralsType::rle);
  // A compressed block that decodes to more than the frame says: refused.
  Bytes long_literals = frame;
  long_literals[5] = 27;
  EXPECT_NE(run_batch({long_literals}, {28}).outcomes[0].status, DecodeStatus::ok);
}

TEST(ZstdGpuJobs, LeavesWhatItDoesNotHandleToTheCpu) {
  const Bytes data = text_bytes(5000, 2);
  const Bytes frame = compress(data, Settings{});
  ZstdGpuJobs jobs;
  std::uint64_t scratch = 0;
  Settings streamed_settings;
  streamed_settings.content_size = false;
  EXPECT_EQ(append_zstd_jobs(compress(data, streamed_settings), 0, 0, data.size(), scratch, jobs),
            DecodeStatus::unsupported);
  Bytes two = frame;
  two.insert(two.end(), frame.begin(), frame.end());
  EXPECT_EQ(append_zstd_jobs(two, 0, 0, 2 * data.size(), scratch, jobs), DecodeStatus::unsupported);
  Bytes skippable = {0x50, 0x2a, 0x4d, 0x18, 3, 0, 0, 0, 1, 2, 3};
  skippable.insert(skippable.end(), frame.begin(), frame.end());
  EXPECT_EQ(append_zstd_jobs(skippable, 0, 0, data.size(), scratch, jobs), DecodeStatus::unsupported);
  // Content over the caller's capacity.
  EXPECT_EQ(append_zstd_jobs(frame, 0, 0, data.size() - 1, scratch, jobs), DecodeStatus::unsupported);
  EXPECT_EQ(scratch, 0u);
  EXPECT_TRUE(jobs.frames.empty() && jobs.blocks.empty());
}

TEST(ZstdGpuJobs, ChecksumIsVerified) {
  const Bytes data = signal_bytes(50000, 3);
  Settings settings;
  settings.checksum = true;
  Bytes frame = compress(data, settings);
  frame[frame.size() - 2] ^= 0x10;
  EXPECT_EQ(run_batch({frame}, {data.size()}).outcomes[0].status, DecodeStatus::checksum_mismatch);
}

// A block claiming far more sequences than the content can hold is refused by the listing, before
// any scratch is sized from the claim.
TEST(ZstdGpuJobs, ClaimsPastTheContentAreRefused) {
  const Bytes data = text_bytes(3000, 4);
  const Bytes frame = compress(data, Settings{});
  const portable::ZstdFramePlan plan = portable::zstd_frame_plan(frame.data(), frame.size());
  ASSERT_EQ(plan.status, DecodeStatus::ok);
  // One compressed block: raw literals of 1 byte, then a sequence count of 0x7f00 + 0xffff.
  Bytes bytes(frame.begin(), frame.begin() + plan.header_size);
  const Bytes content = {0x08, 'x', 255, 0xff, 0xff, 0x00, 0x01};
  const std::uint32_t block = 1 | (2u << 1) | (static_cast<std::uint32_t>(content.size()) << 3);
  bytes.push_back(static_cast<std::uint8_t>(block));
  bytes.push_back(static_cast<std::uint8_t>(block >> 8));
  bytes.push_back(static_cast<std::uint8_t>(block >> 16));
  bytes.insert(bytes.end(), content.begin(), content.end());
  ZstdGpuJobs jobs;
  std::uint64_t scratch = 0;
  EXPECT_EQ(append_zstd_jobs(bytes, 0, 0, 3000, scratch, jobs), DecodeStatus::corrupt);
  EXPECT_EQ(scratch, 0u);
}

// Damaged frames: nothing crashes or touches memory outside the buffers, whatever decodes, libzstd
// decodes to the same bytes, and every split of literals and frames over lanes gives what the
// serial literals and warp-sized frames give.
TEST(ZstdGpuJobs, DamagedFramesAreRefusedOrDecodedAsLibzstdDoes) {
  std::mt19937 rng(2025);
  int trials = 0;
  int accepted = 0;
  for (int f = 0; f < 36; ++f) {
    const int kind = f % 6;
    const std::size_t n = f % 12 == 11 ? 140000 + rng() % 20000 : f % 4 == 0 ? 200 + rng() % 2000 : 2000 + rng() % 20000;
    Settings settings;
    settings.level = f % 3 == 0 ? 1 + static_cast<int>(rng() % 19) : (f % 3 == 1 ? -2 : 5);
    settings.checksum = f % 5 == 0;
    const Bytes frame = compress(data_of_kind(kind, n, static_cast<std::uint32_t>(f)), settings);
    std::vector<Bytes> damaged_frames;
    for (int t = 0; t < 8; ++t)
      damaged_frames.emplace_back(frame.begin(), frame.begin() + static_cast<std::ptrdiff_t>(rng() % frame.size()));
    for (int t = 0; t < 80; ++t) {
      Bytes damaged = frame;
      const int changes = 1 + static_cast<int>(rng() % 4);
      for (int c = 0; c < changes; ++c) {
        const std::size_t at = rng() % damaged.size();
        if (rng() % 2 == 0)
          damaged[at] ^= static_cast<std::uint8_t>(1u << (rng() % 8));
        else
          damaged[at] = static_cast<std::uint8_t>(rng());
      }
      damaged_frames.push_back(std::move(damaged));
    }
    const std::vector<std::size_t> capacities(damaged_frames.size(), n);
    const HostBatch batch = run_batch(damaged_frames, capacities);
    for (const Lanes lanes : kLanes) {
      const HostBatch split = run_batch(damaged_frames, capacities, lanes.literal, lanes.frame);
      for (std::size_t d = 0; d < damaged_frames.size(); ++d) {
        SCOPED_TRACE(testing::Message() << "frame " << d << ", " << lanes.literal << " lanes a stream, " << lanes.frame
                                        << " a frame");
        ASSERT_EQ(split.outcomes[d].status, batch.outcomes[d].status);
        ASSERT_TRUE(split.decoded[d] == batch.decoded[d]);
      }
    }
    for (std::size_t d = 0; d < damaged_frames.size(); ++d) {
      ++trials;
      if (batch.outcomes[d].status != DecodeStatus::ok) continue;
      ++accepted;
      Bytes reference(n);
      const std::size_t written = ZSTD_decompress(reference.data(), reference.size(), damaged_frames[d].data(),
                                                  damaged_frames[d].size());
      ASSERT_FALSE(ZSTD_isError(written)) << "accepted a frame libzstd refuses";
      reference.resize(written);
      EXPECT_TRUE(batch.decoded[d] == reference) << "bytes differ from libzstd's";
    }
  }
  EXPECT_GT(trials, 3000);
  EXPECT_GT(accepted, 0);
}

}  // namespace
}  // namespace zarrdirect::cuda

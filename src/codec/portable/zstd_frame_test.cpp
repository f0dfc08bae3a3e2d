#include "codec/portable/zstd_frame.hpp"

#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <zstd.h>

#include "codec/portable/zstd_test_data.hpp"

namespace zarrdirect::codec::portable {
namespace {

using namespace zstd_test;

// Ours, into a heap buffer exactly `capacity` long (AddressSanitizer sees any write past it).
DecodeOutcome ours(const Bytes& frame, std::size_t capacity, Bytes& out) {
  out.assign(capacity, 0);
  auto workspace = std::make_unique<ZstdWorkspace>();
  const DecodeOutcome outcome = zstd_decode_frame(frame.data(), frame.size(), out.data(), out.size(), *workspace);
  if (outcome.status == DecodeStatus::ok) out.resize(outcome.written);
  return outcome;
}

void expect_round_trip(const Bytes& data, const Settings& settings, const char* what) {
  SCOPED_TRACE(testing::Message() << what << ", " << data.size() << " bytes, level " << settings.level
                                  << (settings.checksum ? ", checksum" : "") << (settings.long_distance ? ", ldm" : ""));
  const Bytes frame = compress(data, settings);
  const ZstdFramePlan plan = zstd_frame_plan(frame.data(), frame.size());
  ASSERT_EQ(plan.status, DecodeStatus::ok) << describe(plan.status);
  EXPECT_EQ(plan.content_size, data.size());
  EXPECT_EQ(plan.checksum, settings.checksum);
  Bytes decoded;
  const DecodeOutcome outcome = ours(frame, data.size(), decoded);
  ASSERT_EQ(outcome.status, DecodeStatus::ok) << describe(outcome.status);
  EXPECT_EQ(outcome.written, data.size());
  EXPECT_TRUE(decoded == data);
  // One byte less room is refused before anything is decoded.
  if (!data.empty()) {
    Bytes small;
    EXPECT_EQ(ours(frame, data.size() - 1, small).status, DecodeStatus::output_overflow);
  }
}


TEST(ZstdFrame, EveryLevelAndKindEqualsTheInput) {
  for (int level = 1; level <= 19; ++level) {
    // Over 128 KiB (several blocks) at the fast levels; smaller where compressing takes long.
    const std::size_t n = level <= 9 ? 150 * 1024 : 40 * 1024;
    for (int kind = 0; kind < 6; ++kind) {
      Settings settings;
      settings.level = level;
      settings.checksum = (level + kind) % 2 == 0;
      expect_round_trip(data_of_kind(kind, n, static_cast<std::uint32_t>(level * 10 + kind)), settings,
                        kKindNames[kind]);
    }
  }
}

TEST(ZstdFrame, NegativeLevelsAndLongDistanceMatching) {
  for (int kind = 0; kind < 6; ++kind) {
    const Bytes data = data_of_kind(kind, 140 * 1024 + 17, static_cast<std::uint32_t>(kind));
    for (const int level : {-5, -1, 3, 9}) {
      for (const bool ldm : {false, true}) {
        Settings settings;
        settings.level = level;
        settings.long_distance = ldm;
        settings.checksum = ldm;
        expect_round_trip(data, settings, kKindNames[kind]);
      }
    }
  }
}

TEST(ZstdFrame, TinyInputs) {
  for (std::size_t n = 0; n <= 64; ++n) {
    for (int kind = 0; kind < 6; ++kind) {
      for (const int level : {-3, 1, 19}) {
        Settings settings;
        settings.level = level;
        settings.checksum = n % 2 == 0;
        expect_round_trip(data_of_kind(kind, n, static_cast<std::uint32_t>(n)), settings, kKindNames[kind]);
      }
    }
  }
}

TEST(ZstdFrame, SixteenMebibytesInManyBlocks) {
  Settings settings;
  settings.level = 1;
  settings.checksum = true;
  expect_round_trip(run_bytes(16u << 20, 5), settings, "runs");
}

TEST(ZstdFrame, PlanReadsTheHeader) {
  const Bytes data = signal_bytes(70000, 1);
  const Bytes frame = compress(data, Settings{});
  ZstdFramePlan plan = zstd_frame_plan(frame.data(), frame.size());
  ASSERT_EQ(plan.status, DecodeStatus::ok);
  EXPECT_EQ(plan.content_size, 70000u);
  EXPECT_GT(plan.header_size, 4u);
  // Over the caller's limit: left to the CPU, and the decoder says so too.
  EXPECT_EQ(zstd_frame_plan(frame.data(), frame.size(), 69999).status, DecodeStatus::unsupported);
  Bytes out(data.size());
  auto workspace = std::make_unique<ZstdWorkspace>();
  EXPECT_EQ(zstd_decode_frame(frame.data(), frame.size(), out.data(), out.size(), *workspace, 1000).status,
            DecodeStatus::unsupported);
  // Short headers and other magic numbers.
  for (std::size_t n = 0; n < plan.header_size; ++n)
    EXPECT_EQ(zstd_frame_plan(frame.data(), n).status, DecodeStatus::truncated) << n;
  Bytes wrong = frame;
  wrong[0] ^= 1;
  EXPECT_EQ(zstd_frame_plan(wrong.data(), wrong.size()).status, DecodeStatus::corrupt);
  wrong = frame;
  wrong[4] |= 8;  // the reserved bit
  EXPECT_EQ(zstd_frame_plan(wrong.data(), wrong.size()).status, DecodeStatus::corrupt);
}

TEST(ZstdFrame, LeavesWhatItDoesNotHandleToTheCpu) {
  const Bytes data = text_bytes(5000, 2);
  Settings settings;
  auto workspace = std::make_unique<ZstdWorkspace>();
  Bytes out(data.size());
  // No content size in the header.
  settings.content_size = false;
  const Bytes streamed = compress(data, settings);
  Bytes check;
  ASSERT_TRUE(reference_decode(streamed, data.size(), check));
  EXPECT_EQ(zstd_frame_plan(streamed.data(), streamed.size()).status, DecodeStatus::unsupported);
  EXPECT_EQ(zstd_decode_frame(streamed.data(), streamed.size(), out.data(), out.size(), *workspace).status,
            DecodeStatus::unsupported);

  const Bytes frame = compress(data, Settings{});
  // A skippable frame first.
  Bytes skippable = {0x50, 0x2a, 0x4d, 0x18, 3, 0, 0, 0, 1, 2, 3};
  skippable.insert(skippable.end(), frame.begin(), frame.end());
  ASSERT_TRUE(reference_decode(skippable, data.size(), check));
  EXPECT_EQ(zstd_decode_frame(skippable.data(), skippable.size(), out.data(), out.size(), *workspace).status,
            DecodeStatus::unsupported);
  // A second frame after the first.
  Bytes two = frame;
  two.insert(two.end(), frame.begin(), frame.end());
  Bytes twice(2 * data.size());
  ASSERT_TRUE(reference_decode(two, twice.size(), check));
  EXPECT_EQ(zstd_decode_frame(two.data(), two.size(), twice.data(), twice.size(), *workspace).status,
            DecodeStatus::unsupported);
  // A dictionary id: the same frame with a one-byte id 7 spliced into its header.
  const ZstdFramePlan plan = zstd_frame_plan(frame.data(), frame.size());
  ASSERT_EQ(plan.status, DecodeStatus::ok);
  ASSERT_EQ(frame[4] & 3, 0);
  Bytes with_dictionary(frame.begin(), frame.begin() + 5);
  with_dictionary[4] |= 1;
  const bool single_segment = (frame[4] & 0x20) != 0;
  std::size_t at = 5;
  if (!single_segment) with_dictionary.push_back(frame[at++]);
  with_dictionary.push_back(7);
  with_dictionary.insert(with_dictionary.end(), frame.begin() + static_cast<std::ptrdiff_t>(at), frame.end());
  EXPECT_EQ(zstd_frame_plan(with_dictionary.data(), with_dictionary.size()).status, DecodeStatus::unsupported);
  EXPECT_EQ(zstd_decode_frame(with_dictionary.data(), with_dictionary.size(), out.data(), out.size(), *workspace).status,
            DecodeStatus::unsupported);
}

TEST(ZstdFrame, ChecksumIsVerified) {
  const Bytes data = signal_bytes(50000, 3);
  Settings settings;
  settings.checksum = true;
  Bytes frame = compress(data, settings);
  frame[frame.size() - 2] ^= 0x10;  // the stored checksum, not the data
  Bytes out;
  EXPECT_EQ(ours(frame, data.size(), out).status, DecodeStatus::checksum_mismatch);
}

TEST(ZstdFrame, XxHash64OfKnownInputs) {
  // The published value for no bytes, then agreement with the checksums libzstd writes (the
  // round trips above) covers the rest; lengths around the 32-byte stripe and 8/4-byte tails:
  EXPECT_EQ(zstd_detail::xxhash64(nullptr, 0), 0xEF46DB3751D8E999ull);
  for (std::size_t n = 0; n < 80; ++n) {
    Settings settings;
    settings.checksum = true;
    expect_round_trip(random_bytes(n, 77), settings, "random");
  }
}

// Damaged frames: ours never crashes or writes outside its buffer, and whatever it accepts,
// libzstd accepts with the same bytes.
void expect_safe_on(const Bytes& frame, std::size_t capacity, int& accepted) {
  Bytes decoded;
  const DecodeOutcome outcome = ours(frame, capacity, decoded);
  if (outcome.status != DecodeStatus::ok) return;
  ++accepted;
  Bytes reference;
  ASSERT_TRUE(reference_decode(frame, capacity, reference)) << "accepted a frame libzstd refuses";
  EXPECT_TRUE(decoded == reference) << "bytes differ from libzstd's";
}

TEST(ZstdFrame, DamagedFramesAreRefusedOrDecodedAsLibzstdDoes) {
  std::mt19937 rng(2024);
  int trials = 0;
  int accepted = 0;
  for (int f = 0; f < 48; ++f) {
    const int kind = f % 6;
    // Mostly small frames (damage is found early or late, never beyond them); a few of several
    // blocks, where later blocks repeat earlier tables.
    const std::size_t n = f % 12 == 11 ? 140000 + rng() % 20000 : f % 4 == 0 ? 200 + rng() % 2000 : 2000 + rng() % 20000;
    Settings settings;
    settings.level = f % 3 == 0 ? 1 + static_cast<int>(rng() % 19) : (f % 3 == 1 ? -2 : 5);
    settings.checksum = f % 5 == 0;
    const Bytes data = data_of_kind(kind, n, static_cast<std::uint32_t>(f));
    const Bytes frame = compress(data, settings);
    // Truncations, at a spread of points.
    for (int t = 0; t < 12; ++t) {
      const Bytes cut(frame.begin(), frame.begin() + static_cast<std::ptrdiff_t>(rng() % frame.size()));
      expect_safe_on(cut, n, accepted);
      ++trials;
    }
    // Bit flips and byte changes, one to four at a time.
    for (int t = 0; t < 100; ++t) {
      Bytes damaged = frame;
      const int changes = 1 + static_cast<int>(rng() % 4);
      for (int c = 0; c < changes; ++c) {
        const std::size_t at = rng() % damaged.size();
        if (rng() % 2 == 0)
          damaged[at] ^= static_cast<std::uint8_t>(1u << (rng() % 8));
        else
          damaged[at] = static_cast<std::uint8_t>(rng());
      }
      expect_safe_on(damaged, n, accepted);
      ++trials;
    }
  }
  EXPECT_GT(trials, 4000);
  // Some damage (in raw literals, say) leaves a frame valid: those must have decoded.
  EXPECT_GT(accepted, 0);
}

TEST(ZstdFrame, RandomBytesAfterAValidHeader) {
  std::mt19937 rng(7);
  const Bytes frame = compress(text_bytes(3000, 4), Settings{});
  const ZstdFramePlan plan = zstd_frame_plan(frame.data(), frame.size());
  ASSERT_EQ(plan.status, DecodeStatus::ok);
  int accepted = 0;
  for (int t = 0; t < 2000; ++t) {
    Bytes bytes(frame.begin(), frame.begin() + plan.header_size);
    const std::size_t extra = rng() % 200;
    // A block header of a compressed block most of the time, so the tables get read.
    for (std::size_t i = 0; i < extra; ++i) bytes.push_back(static_cast<std::uint8_t>(rng()));
    if (extra >= 3 && rng() % 4 != 0) {
      const std::uint32_t block = 1 | (2u << 1) | (static_cast<std::uint32_t>(extra - 3) << 3);
      bytes[plan.header_size] = static_cast<std::uint8_t>(block);
      bytes[plan.header_size + 1] = static_cast<std::uint8_t>(block >> 8);
      bytes[plan.header_size + 2] = static_cast<std::uint8_t>(block >> 16);
    }
    expect_safe_on(bytes, 3000, accepted);
  }
}

}  // namespace
}  // namespace zarrdirect::codec::portable

#include "codec/shard_update.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <numeric>
#include <optional>

namespace zarrdirect::codec {
namespace {

using nlohmann::json;

const DataType kU16{ScalarKind::unsigned_int, 2};

json bytes_le() { return {{"name", "bytes"}, {"configuration", {{"endian", "little"}}}}; }

// A 4x4 uint16 shard of 2x2 inner chunks (4 of them, 8 bytes each when stored raw).
ShardingCodec make_codec(const char* location, json inner_codecs = json::array({bytes_le()})) {
  json config = {{"chunk_shape", {2, 2}},
                 {"codecs", inner_codecs},
                 {"index_codecs", json::array({bytes_le(), {{"name", "crc32c"}}})},
                 {"index_location", location}};
  return ShardingCodec(config, ArraySpec{{4, 4}, kU16, std::vector<std::byte>(2)});
}

ByteBuffer encode_shard(const ShardingCodec& codec, const std::vector<std::uint16_t>& values) {
  ByteBuffer out;
  codec.encode(std::as_bytes(std::span(values)), out);
  return out;
}

std::vector<std::uint16_t> decode_shard(const ShardingCodec& codec, const ByteBuffer& shard) {
  std::vector<std::uint16_t> out(16);
  codec.decode(shard, std::as_writable_bytes(std::span(out)));
  return out;
}

// Inner chunk `inner` (2x2 elements) encoded by the codec's inner chain, all elements `value`.
ByteBuffer inner_bytes(const ShardingCodec& codec, std::uint16_t value) {
  std::vector<std::uint16_t> v(4, value);
  return codec.inner_chain().encode(std::as_bytes(std::span(v)));
}

ShardIndex index_of(const ShardingCodec& codec, const ByteBuffer& shard) {
  return codec.decode_index(ByteSpan(shard).subspan(codec.index_offset(shard.size()), codec.index_nbytes()),
                            shard.size());
}

// Does what the engine does with a planned update: copies the kept prefix of `old`, appends the
// new inner chunks, copies the kept ones one by one when compacting, then writes the index.
// nullopt when the shard ends up empty.
std::optional<ByteBuffer> apply(ShardUpdate& update, const ByteBuffer& old,
                                const std::map<std::uint64_t, ByteBuffer>& fresh) {
  // Holes (zeros) where no run is copied.
  ByteBuffer file(update.body_start());
  for (const auto& run : update.kept_runs())
    std::memcpy(file.data() + run.offset, old.data() + run.offset, static_cast<std::size_t>(run.nbytes));
  for (const auto& [inner, bytes] : fresh) {
    update.place(inner, file.size(), bytes.size());
    file.insert(file.end(), bytes.begin(), bytes.end());
  }
  for (const auto& kept : update.to_copy()) {
    update.place(kept.inner, file.size(), kept.nbytes);
    auto from = old.begin() + static_cast<std::ptrdiff_t>(kept.offset);
    file.insert(file.end(), from, from + static_cast<std::ptrdiff_t>(kept.nbytes));
  }
  if (update.empty()) return std::nullopt;
  ByteBuffer index = update.encode_index();
  const std::uint64_t at = update.index_offset(file.size());
  if (at + index.size() > file.size()) file.resize(at + index.size());
  std::memcpy(file.data() + at, index.data(), index.size());
  return file;
}

// Element (y, x) of a 4x4 shard belongs to inner chunk (y / 2) * 2 + x / 2.
std::uint64_t inner_of(std::size_t element) { return (element / 4 / 2) * 2 + (element % 4) / 2; }

class ShardUpdateAt : public ::testing::TestWithParam<const char*> {};

TEST_P(ShardUpdateAt, NewShardPutsChunksAfterAStartIndexAndReadsBack) {
  auto codec = make_codec(GetParam());
  ShardUpdate update(codec);
  const bool start = std::string(GetParam()) == "start";
  EXPECT_EQ(update.body_start(), start ? codec.index_nbytes() : 0u);
  update.plan();
  EXPECT_FALSE(update.compacts());
  EXPECT_EQ(update.kept_prefix(), 0u);
  auto shard = apply(update, {}, {{2, inner_bytes(codec, 7)}});
  ASSERT_TRUE(shard);
  EXPECT_EQ(shard->size(), 8 + codec.index_nbytes());
  auto values = decode_shard(codec, *shard);
  for (std::size_t i = 0; i < 16; ++i) EXPECT_EQ(values[i], inner_of(i) == 2 ? 7 : 0) << i;
}

TEST_P(ShardUpdateAt, UpdateKeepsThePrefixAndItsOffsetsAndAppendsTheNewChunks) {
  auto codec = make_codec(GetParam());
  std::vector<std::uint16_t> values(16);
  std::iota(values.begin(), values.end(), 1);
  const ByteBuffer old = encode_shard(codec, values);
  const ShardIndex old_index = index_of(codec, old);

  ShardUpdate update(codec);
  update.start_from(old_index);
  update.replace(1);
  update.plan();
  EXPECT_FALSE(update.compacts());
  EXPECT_TRUE(update.to_copy().empty());
  EXPECT_EQ(update.garbage(), 8u);  // inner chunk 1's stored bytes
  const bool start = std::string(GetParam()) == "start";
  // The prefix ends with the last kept inner chunk: for an index at the end, before the index.
  EXPECT_EQ(update.kept_prefix(), old.size() - (start ? 0 : codec.index_nbytes()));
  EXPECT_EQ(update.body_start(), update.kept_prefix());

  auto shard = apply(update, old, {{1, inner_bytes(codec, 500)}});
  ASSERT_TRUE(shard);
  EXPECT_EQ(shard->size(), old.size() + 8);
  auto index = index_of(codec, *shard);
  for (std::uint64_t i : {0, 2, 3}) {
    EXPECT_EQ(index[i].offset, old_index[i].offset) << i;
    EXPECT_EQ(index[i].nbytes, old_index[i].nbytes) << i;
  }
  EXPECT_EQ(index[1].offset, update.body_start());
  auto got = decode_shard(codec, *shard);
  for (std::size_t i = 0; i < 16; ++i) EXPECT_EQ(got[i], inner_of(i) == 1 ? 500 : values[i]) << i;
}

TEST_P(ShardUpdateAt, ReplacedChunksAtTheEndOfThePrefixAreNotCopied) {
  auto codec = make_codec(GetParam());
  const ByteBuffer old = encode_shard(codec, std::vector<std::uint16_t>(16, 6));
  const ShardIndex old_index = index_of(codec, old);
  ShardUpdate update(codec);
  update.start_from(old_index);
  update.replace(3);  // the last inner chunk of the body
  update.plan();
  EXPECT_FALSE(update.compacts());
  EXPECT_EQ(update.kept_prefix(), old_index[2].offset + old_index[2].nbytes);
  EXPECT_EQ(update.garbage(), 0u);
}

TEST_P(ShardUpdateAt, ReplacedChunksLeaveHolesBetweenKeptRuns) {
  auto codec = make_codec(GetParam());
  const ByteBuffer old = encode_shard(codec, std::vector<std::uint16_t>(16, 8));
  const ShardIndex old_index = index_of(codec, old);
  const std::uint64_t start = codec.index_location() == IndexLocation::start ? codec.index_nbytes() : 0;
  for (std::uint64_t gap : {std::uint64_t{0}, std::uint64_t{9}}) {
    ShardUpdate update(codec);
    update.start_from(old_index);
    update.replace(1);  // the second of four 8-byte inner chunks
    update.plan(ShardUpdate::kDefaultMaxGarbage, gap);
    const auto& runs = update.kept_runs();
    if (gap == 0) {  // two runs around the 8-byte hole
      ASSERT_EQ(runs.size(), 2u);
      EXPECT_EQ(runs[0].offset, start);
      EXPECT_EQ(runs[0].nbytes, 8u);
      EXPECT_EQ(runs[1].offset, start + 16);
      EXPECT_EQ(runs[1].nbytes, 16u);
    } else {  // the hole is smaller than the gap: one run
      ASSERT_EQ(runs.size(), 1u);
      EXPECT_EQ(runs[0].offset, start);
      EXPECT_EQ(runs[0].nbytes, 32u);
    }
    auto shard = apply(update, old, {{1, inner_bytes(codec, 70)}});
    ASSERT_TRUE(shard);
    auto got = decode_shard(codec, *shard);
    for (std::size_t i = 0; i < 16; ++i) EXPECT_EQ(got[i], inner_of(i) == 1 ? 70 : 8) << i << " gap " << gap;
  }
}

TEST_P(ShardUpdateAt, TooMuchGarbageCompactsInstead) {
  auto codec = make_codec(GetParam());
  std::vector<std::uint16_t> values(16, 3);
  const ByteBuffer old = encode_shard(codec, values);
  ShardUpdate update(codec);
  update.start_from(index_of(codec, old));
  for (std::uint64_t i : {0, 1, 3}) update.replace(i);  // 24 of 32 body bytes become garbage
  update.plan();
  EXPECT_TRUE(update.compacts());
  EXPECT_EQ(update.kept_prefix(), 0u);
  ASSERT_EQ(update.to_copy().size(), 1u);
  EXPECT_EQ(update.to_copy()[0].inner, 2u);
  auto shard = apply(update, old, {{0, inner_bytes(codec, 9)}});
  ASSERT_TRUE(shard);
  EXPECT_EQ(shard->size(), 16 + codec.index_nbytes());  // inner 0 and the copied inner 2 only
  auto got = decode_shard(codec, *shard);
  for (std::size_t i = 0; i < 16; ++i) {
    const std::uint64_t inner = inner_of(i);
    EXPECT_EQ(got[i], inner == 0 ? 9 : inner == 2 ? 3 : 0) << i;
  }
}

TEST_P(ShardUpdateAt, RepeatedUpdatesStayBoundedAndReadBack) {
  auto codec = make_codec(GetParam());
  std::vector<std::uint16_t> expected(16, 1);
  ByteBuffer shard = encode_shard(codec, expected);
  int compactions = 0;
  for (std::uint16_t round = 0; round < 40; ++round) {
    const std::uint64_t inner = round % 3;  // inner chunk 3 is never rewritten
    ShardUpdate update(codec);
    update.start_from(index_of(codec, shard));
    update.replace(inner);
    update.plan();
    compactions += update.compacts();
    auto next = apply(update, shard, {{inner, inner_bytes(codec, static_cast<std::uint16_t>(100 + round))}});
    ASSERT_TRUE(next);
    shard = std::move(*next);
    for (std::size_t i = 0; i < 16; ++i)
      if (inner_of(i) == inner) expected[i] = static_cast<std::uint16_t>(100 + round);
    ASSERT_EQ(decode_shard(codec, shard), expected) << "round " << round;
    // Live body: 4 chunks of 8 bytes, 3 of them kept. At most half of the kept prefix's body
    // is garbage, and the appended chunk comes on top: 2 * 24 + 8 body bytes at most.
    ASSERT_LE(shard.size(), 2 * 24 + 8 + codec.index_nbytes()) << "round " << round;
  }
  EXPECT_GT(compactions, 0);
}

INSTANTIATE_TEST_SUITE_P(IndexLocations, ShardUpdateAt, ::testing::Values("start", "end"));

TEST(ShardUpdate, GarbageLimitIsAParameter) {
  auto codec = make_codec("end", json::array({bytes_le(), {{"name", "zstd"}, {"configuration", {{"level", 1}}}}}));
  const ByteBuffer old = encode_shard(codec, std::vector<std::uint16_t>(16, 5));
  for (double limit : {0.0, 1.0}) {
    ShardUpdate update(codec);
    update.start_from(index_of(codec, old));
    update.replace(0);  // the first chunk of the body: its bytes stay, unreferenced
    update.plan(limit);
    EXPECT_EQ(update.compacts(), limit == 0.0) << limit;
  }
}

TEST(ShardUpdate, ReplacingEveryStoredChunkIsANewShardAndNothingPlacedIsEmpty) {
  auto codec = make_codec("end");
  const ByteBuffer old = encode_shard(codec, std::vector<std::uint16_t>(16, 4));
  ShardUpdate update(codec);
  update.start_from(index_of(codec, old));
  for (std::uint64_t i = 0; i < 4; ++i) update.replace(i);
  update.plan();
  EXPECT_FALSE(update.compacts());
  EXPECT_EQ(update.kept_prefix(), 0u);
  EXPECT_EQ(update.body_start(), 0u);
  EXPECT_TRUE(update.empty());
  EXPECT_FALSE(apply(update, old, {}));
}

TEST(ShardUpdate, BadCallsAreClearErrors) {
  auto codec = make_codec("end");
  ShardUpdate update(codec);
  EXPECT_THROW(update.replace(4), Error);
  EXPECT_THROW(update.place(4, 0, 1), Error);
  EXPECT_THROW(update.place(0, ~std::uint64_t{0}, 1), Error);
  EXPECT_THROW(update.plan(1.5), Error);
  update.plan();
  EXPECT_THROW(update.replace(0), Error);
  const ByteBuffer old = encode_shard(codec, std::vector<std::uint16_t>(16, 2));
  ByteBuffer entries(ByteSpan(old).subspan(codec.index_offset(old.size()), 32).begin(),
                     ByteSpan(old).subspan(codec.index_offset(old.size()), 32).end());
  json plain = {{"chunk_shape", {2, 2}}, {"codecs", json::array({bytes_le()})}, {"index_codecs", json::array({bytes_le()})}};
  ShardingCodec addressable(plain, ArraySpec{{4, 4}, kU16, std::vector<std::byte>(2)});
  ShardUpdate other(addressable);
  try {
    other.start_from(addressable.decode_index_entries(std::move(entries), 0, old.size()));
    ADD_FAILURE() << "a part of an index was taken";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("whole stored index"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace zarrdirect::codec

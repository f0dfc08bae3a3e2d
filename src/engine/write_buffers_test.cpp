#include "engine/write_buffers.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <numeric>

namespace zarrdirect {
namespace {

using nlohmann::json;

json bytes(const char* endian) { return {{"name", "bytes"}, {"configuration", {{"endian", endian}}}}; }

codec::CodecChain chain_of(const json& codecs) {
  codec::ArraySpec spec{{6, 5, 4}, DataType{ScalarKind::unsigned_int, 2}, std::vector<std::byte>(2)};
  return codec::CodecChain::create(codecs, spec, "test/zarr.json");
}

std::vector<std::byte> sample(std::uint16_t seed) {
  std::vector<std::uint16_t> values(6 * 5 * 4);
  std::iota(values.begin(), values.end(), seed);
  std::vector<std::byte> out(values.size() * 2);
  std::memcpy(out.data(), values.data(), out.size());
  return out;
}

TEST(WriteBuffers, EncodingMatchesTheChainWithoutCopiesOrNewAllocations) {
  json transpose = {{"name", "transpose"}, {"configuration", {{"order", {2, 0, 1}}}}};
  json zstd = {{"name", "zstd"}, {"configuration", {{"level", 1}}}};
  const json chains[] = {
      json::array({bytes("little")}),
      json::array({bytes("big")}),
      json::array({bytes("little"), {{"name", "crc32c"}}}),
      json::array({transpose, bytes("little"), zstd, {{"name", "crc32c"}}}),
      json::array({transpose, transpose, bytes("big"), zstd}),
  };
  for (const auto& codecs : chains) {
    SCOPED_TRACE(codecs.dump());
    auto chain = chain_of(codecs);
    codec::ByteBuffer a, b;
    auto first = sample(1);
    Encoded encoded = encode_chunk(chain, first, a, b);
    EXPECT_EQ(codec::ByteBuffer(encoded.bytes.begin(), encoded.bytes.end()), chain.encode(first));
    if (chain.is_identity()) {
      // Stored as it is: the decoded chunk itself, no copy.
      EXPECT_EQ(encoded.owner, nullptr);
      EXPECT_EQ(encoded.bytes.data(), first.data());
      continue;
    }
    ASSERT_NE(encoded.owner, nullptr);
    EXPECT_EQ(encoded.bytes.data(), encoded.owner->data());
    // The next chunk reuses both buffers where they are: nothing allocated.
    const std::byte* a_data = a.data();
    const std::byte* b_data = b.data();
    auto second = sample(977);
    encoded = encode_chunk(chain, second, a, b);
    EXPECT_EQ(codec::ByteBuffer(encoded.bytes.begin(), encoded.bytes.end()), chain.encode(second));
    EXPECT_EQ(a.data(), a_data);
    if (b_data) {
      EXPECT_EQ(b.data(), b_data);
    }
  }
}

TEST(WriteBuffers, AllFillComparesEveryElement) {
  const std::byte zero[2] = {};
  const std::byte pattern[4] = {std::byte{1}, std::byte{2}, std::byte{3}, std::byte{4}};
  std::vector<std::byte> chunk(64 * 4);
  EXPECT_TRUE(all_fill(chunk, zero));
  EXPECT_TRUE(all_fill({}, zero));
  fill_with(chunk, pattern);
  EXPECT_EQ(std::memcmp(chunk.data() + 60 * 4, pattern, 4), 0);
  EXPECT_TRUE(all_fill(chunk, pattern));
  EXPECT_FALSE(all_fill(chunk, zero));
  // One byte off anywhere (first element, middle, last byte) is not fill.
  for (std::size_t at : {std::size_t{0}, std::size_t{3}, std::size_t{130}, chunk.size() - 1}) {
    auto changed = chunk;
    changed[at] ^= std::byte{0x10};
    EXPECT_FALSE(all_fill(changed, pattern)) << at;
  }
  // Elements equal to each other but not to the fill value.
  std::vector<std::byte> other(64 * 4, std::byte{7});
  EXPECT_FALSE(all_fill(other, pattern));
}

TEST(WriteBuffers, ThePoolKeepsBuffersWarmBetweenWrites) {
  auto sets = take_write_buffers(2);
  ASSERT_EQ(sets.size(), 2u);
  sets[0]->chunk.resize(1 << 20);
  sets[1]->encode_a.resize(1 << 19);
  const std::size_t idle_before = idle_write_buffer_bytes();
  give_back_write_buffers(std::move(sets));
  EXPECT_GE(idle_write_buffer_bytes(), idle_before + (1 << 20) + (1 << 19));
  auto again = take_write_buffers(3);
  ASSERT_EQ(again.size(), 3u);
  std::size_t capacity = 0;
  for (const auto& set : again) capacity += set->capacity();
  EXPECT_GE(capacity, std::size_t{(1 << 20) + (1 << 19)});
  give_back_write_buffers(std::move(again));
}

}  // namespace
}  // namespace zarrdirect

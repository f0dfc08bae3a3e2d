#include "codec/sharding.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <numeric>

#include "codec/crc32c.hpp"

namespace zarrdirect::codec {
namespace {

using nlohmann::json;

const DataType kU16{ScalarKind::unsigned_int, 2};
constexpr std::uint64_t kMissing = ~std::uint64_t{0};

ArraySpec shard_spec(std::vector<std::uint64_t> shape, std::uint16_t fill = 0) {
  std::vector<std::byte> fill_bytes(2);
  std::memcpy(fill_bytes.data(), &fill, 2);
  return {std::move(shape), kU16, fill_bytes};
}

json bytes_le() { return {{"name", "bytes"}, {"configuration", {{"endian", "little"}}}}; }

json sharding(json inner_shape, const char* location = "end", json inner_codecs = json::array({bytes_le()})) {
  return {{"name", "sharding_indexed"},
          {"configuration",
           {{"chunk_shape", inner_shape},
            {"codecs", inner_codecs},
            {"index_codecs", json::array({bytes_le(), {{"name", "crc32c"}}})},
            {"index_location", location}}}};
}

std::vector<std::uint16_t> iota_values(std::size_t n, std::uint16_t first = 1) {
  std::vector<std::uint16_t> v(n);
  std::iota(v.begin(), v.end(), first);
  return v;
}

std::vector<std::uint16_t> decode(const CodecChain& chain, ByteSpan encoded) {
  std::vector<std::uint16_t> out(chain.decoded_spec().num_elements());
  Scratch scratch;
  chain.decode(encoded, std::as_writable_bytes(std::span(out)), scratch);
  return out;
}

// The index of a shard with `entries` (offset, nbytes pairs), bytes + crc32c encoded.
ByteBuffer encode_index(const std::vector<std::uint64_t>& entries) {
  ByteBuffer index(entries.size() * 8);
  for (std::size_t i = 0; i < entries.size(); ++i)
    for (int b = 0; b < 8; ++b) index[i * 8 + b] = static_cast<std::byte>((entries[i] >> (8 * b)) & 0xff);
  std::uint32_t crc = crc32c(index);
  for (int b = 0; b < 4; ++b) index.push_back(static_cast<std::byte>((crc >> (8 * b)) & 0xff));
  return index;
}

std::string error_of(const std::function<void()>& f, ErrorKind kind) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), kind) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no error";
  return {};
}

TEST(Sharding, RoundTripWithTheIndexAtTheEndAndAtTheStart) {
  auto values = iota_values(8 * 6);
  for (const char* location : {"end", "start"}) {
    SCOPED_TRACE(location);
    auto chain = CodecChain::create(json::array({sharding({4, 3}, location)}), shard_spec({8, 6}), "test");
    const ShardingCodec* codec = chain.sole_sharding_codec();
    ASSERT_NE(codec, nullptr);
    EXPECT_EQ(codec->chunks_per_shard(), (std::vector<std::uint64_t>{2, 2}));
    EXPECT_EQ(codec->inner_chunk_count(), 4u);
    EXPECT_EQ(codec->index_nbytes(), 4u * 16 + 4);
    ByteBuffer encoded = chain.encode(std::as_bytes(std::span(values)));
    ASSERT_EQ(encoded.size(), 96u + 68u);
    bool start = std::string_view(location) == "start";
    EXPECT_EQ(codec->index_location(), start ? IndexLocation::start : IndexLocation::end);
    EXPECT_EQ(codec->index_offset(encoded.size()), start ? 0u : 96u);
    // The first inner chunk begins right after the index (start) or at 0 (end).
    std::uint64_t first_offset;
    std::memcpy(&first_offset, encoded.data() + codec->index_offset(encoded.size()), 8);
    EXPECT_EQ(first_offset, start ? 68u : 0u);
    ShardIndex index = codec->decode_index(ByteSpan(encoded).subspan(codec->index_offset(encoded.size()), 68), encoded.size());
    EXPECT_EQ(index.size(), 4u);
    EXPECT_EQ(index[3].nbytes, 24u);
    EXPECT_FALSE(index[3].missing());
    EXPECT_EQ(decode(chain, encoded), values);
  }
}

TEST(Sharding, MissingInnerChunksReadAsTheFillValue) {
  auto chain = CodecChain::create(json::array({sharding({2, 2})}), shard_spec({4, 2}, 0xbeef), "test");
  // Inner chunk 0 (rows 0-1) stored; inner chunk 1 (rows 2-3) missing.
  std::vector<std::uint16_t> first{1, 2, 3, 4};
  ByteBuffer shard(reinterpret_cast<const std::byte*>(first.data()), reinterpret_cast<const std::byte*>(first.data()) + 8);
  ByteBuffer index = encode_index({0, 8, kMissing, kMissing});
  shard.insert(shard.end(), index.begin(), index.end());
  EXPECT_EQ(decode(chain, shard), (std::vector<std::uint16_t>{1, 2, 3, 4, 0xbeef, 0xbeef, 0xbeef, 0xbeef}));
  // Every inner chunk missing: a shard that is only its index.
  ByteBuffer empty = encode_index({kMissing, kMissing, kMissing, kMissing});
  EXPECT_EQ(decode(chain, empty), std::vector<std::uint16_t>(8, 0xbeef));
}

TEST(Sharding, NestedShardingRoundTripsThroughTheChain) {
  json inner = sharding({2, 2}, "start");
  json outer = sharding({4, 4}, "end", json::array({inner, {{"name", "crc32c"}}}));
  auto chain = CodecChain::create(json::array({outer}), shard_spec({8, 12}), "test");
  auto values = iota_values(96, 1000);
  ByteBuffer encoded = chain.encode(std::as_bytes(std::span(values)));
  EXPECT_EQ(decode(chain, encoded), values);
  // A flipped byte in the middle of the shard is caught by an inner crc32c.
  encoded[encoded.size() / 2] ^= std::byte{1};
  std::string message = error_of([&] { decode(chain, encoded); }, ErrorKind::corrupt_data);
  EXPECT_NE(message.find("inner chunk"), std::string::npos) << message;
}

TEST(Sharding, TransposeBeforeShardingFillsMissingInnerChunks) {
  json codecs = json::array({{{"name", "transpose"}, {"configuration", {{"order", {1, 0}}}}}, sharding({2, 2})});
  auto chain = CodecChain::create(codecs, shard_spec({2, 4}, 7), "test");
  EXPECT_EQ(chain.sole_sharding_codec(), nullptr);
  // Encoded (transposed) shard is 4x2: inner chunk 0 stored, inner chunk 1 missing.
  std::vector<std::uint16_t> stored{1, 2, 3, 4};  // transposed rows 0-1: [[1,2],[3,4]]
  ByteBuffer shard(reinterpret_cast<const std::byte*>(stored.data()), reinterpret_cast<const std::byte*>(stored.data()) + 8);
  ByteBuffer index = encode_index({0, 8, kMissing, kMissing});
  shard.insert(shard.end(), index.begin(), index.end());
  // Transposed back: decoded[i][j] = encoded[j][i].
  EXPECT_EQ(decode(chain, shard), (std::vector<std::uint16_t>{1, 3, 7, 7, 2, 4, 7, 7}));
}

class ShardIndexChecks : public ::testing::Test {
 protected:
  CodecChain chain = CodecChain::create(json::array({sharding({2, 2})}), shard_spec({4, 2}), "test");
  const ShardingCodec& codec = *chain.sole_sharding_codec();

  // A shard of `body_size` bytes of data followed by an index of `entries`.
  std::string index_error(const std::vector<std::uint64_t>& entries, std::uint64_t body_size = 16) {
    ByteBuffer index = encode_index(entries);
    std::string via_index = error_of([&] { codec.decode_index(index, body_size + index.size()); }, ErrorKind::corrupt_data);
    ByteBuffer shard(body_size);
    shard.insert(shard.end(), index.begin(), index.end());
    std::string via_decode = error_of([&] { decode(chain, shard); }, ErrorKind::corrupt_data);
    EXPECT_EQ(via_index, via_decode);
    return via_index;
  }
};

TEST_F(ShardIndexChecks, GoodIndexPasses) {
  ByteBuffer index = encode_index({0, 8, 8, 8});
  ShardIndex decoded = codec.decode_index(index, 16 + index.size());
  EXPECT_EQ(decoded[1].offset, 8u);
}

TEST_F(ShardIndexChecks, EntriesPastTheEnd) {
  std::string message = index_error({0, 8, 48, 8});  // the shard is 16 + 36 bytes
  EXPECT_NE(message.find("runs past the end"), std::string::npos) << message;
  EXPECT_NE(message.find("inner chunk [1, 0]"), std::string::npos) << message;
  EXPECT_NE(message.find("offset 48"), std::string::npos) << message;
  message = index_error({1000000, 8, 0, 8});
  EXPECT_NE(message.find("[0, 0]"), std::string::npos) << message;
}

TEST_F(ShardIndexChecks, EntriesThatOverflow) {
  std::string message = index_error({0, 8, kMissing - 4, 8});
  EXPECT_NE(message.find("overflows"), std::string::npos) << message;
  message = index_error({8, kMissing - 1, 0, 8});
  EXPECT_NE(message.find("overflows"), std::string::npos) << message;
}

TEST_F(ShardIndexChecks, HalfMissingEntries) {
  EXPECT_NE(index_error({0, 8, kMissing, 8}).find("half-missing"), std::string::npos);
  EXPECT_NE(index_error({0, 8, 8, kMissing}).find("half-missing"), std::string::npos);
}

TEST_F(ShardIndexChecks, EntriesOverlappingTheIndex) {
  // The index starts at byte 16: an entry reaching into it is refused.
  std::string message = index_error({0, 8, 12, 8}, 16);
  EXPECT_NE(message.find("overlaps the shard index"), std::string::npos) << message;
  message = index_error({16, 8, 0, 8}, 16);
  EXPECT_NE(message.find("overlaps the shard index"), std::string::npos) << message;
}

TEST_F(ShardIndexChecks, EntriesLargerThanAnyEncoding) {
  std::string message = index_error({0, 8, 8, 100}, 200);
  EXPECT_NE(message.find("larger than any valid encoding"), std::string::npos) << message;
}

TEST_F(ShardIndexChecks, InnerChunksOfTheWrongSize) {
  ByteBuffer shard(16);
  ByteBuffer index = encode_index({0, 8, 8, 6});
  shard.insert(shard.end(), index.begin(), index.end());
  std::string message = error_of([&] { decode(chain, shard); }, ErrorKind::corrupt_data);
  EXPECT_NE(message.find("inner chunk [1, 0]"), std::string::npos) << message;
  EXPECT_NE(message.find("bytes"), std::string::npos) << message;
}

TEST_F(ShardIndexChecks, IndexChecksumMismatch) {
  ByteBuffer shard(16);
  ByteBuffer index = encode_index({0, 8, 8, 8});
  index[3] ^= std::byte{0x40};
  shard.insert(shard.end(), index.begin(), index.end());
  std::string message = error_of([&] { decode(chain, shard); }, ErrorKind::corrupt_data);
  EXPECT_NE(message.find("shard index"), std::string::npos) << message;
  EXPECT_NE(message.find("crc32c"), std::string::npos) << message;
}

TEST_F(ShardIndexChecks, ShardsShorterThanTheirIndex) {
  for (std::size_t size : {0, 1, 35, 36 - 1}) {
    ByteBuffer shard(size);
    std::string message = error_of([&] { decode(chain, shard); }, ErrorKind::corrupt_data);
    EXPECT_NE(message.find("shorter than its 36 byte index"), std::string::npos) << message;
  }
  std::string message = error_of([&] { codec.decode_index(ByteBuffer(35), 100); }, ErrorKind::corrupt_data);
  EXPECT_NE(message.find("index is 35 bytes"), std::string::npos) << message;
}

void expect_bad_config(const json& configuration, ErrorKind kind, std::string_view fragment) {
  std::string message = error_of(
      [&] {
        CodecChain::create(json::array({{{"name", "sharding_indexed"}, {"configuration", configuration}}}),
                           shard_spec({8, 6}), "meta/zarr.json");
      },
      kind);
  EXPECT_NE(message.find("meta/zarr.json"), std::string::npos) << message;
  EXPECT_NE(message.find(fragment), std::string::npos) << message;
}

TEST(ShardingConfig, BadConfigurationsAreErrors) {
  json good = sharding({4, 3})["configuration"];
  auto with = [&](const char* key, json value) {
    json c = good;
    if (value.is_null()) c.erase(key);
    else c[key] = value;
    return c;
  };
  expect_bad_config(with("chunk_shape", nullptr), ErrorKind::invalid_metadata, "chunk_shape");
  expect_bad_config(with("chunk_shape", {4}), ErrorKind::invalid_metadata, "chunk_shape");
  expect_bad_config(with("chunk_shape", {4, 0}), ErrorKind::invalid_metadata, "chunk_shape");
  expect_bad_config(with("chunk_shape", {4, -3}), ErrorKind::invalid_metadata, "chunk_shape");
  expect_bad_config(with("chunk_shape", {3, 3}), ErrorKind::invalid_metadata, "divide");
  expect_bad_config(with("chunk_shape", "4,3"), ErrorKind::invalid_metadata, "chunk_shape");
  expect_bad_config(with("codecs", nullptr), ErrorKind::invalid_metadata, "codecs");
  expect_bad_config(with("codecs", json::array()), ErrorKind::invalid_metadata, "array->bytes");
  expect_bad_config(with("codecs", "bytes"), ErrorKind::invalid_metadata, "list");
  expect_bad_config(with("index_location", "middle"), ErrorKind::invalid_metadata, "index_location");
  expect_bad_config(with("index_location", 1), ErrorKind::invalid_metadata, "index_location");
  expect_bad_config(with("index_codecs", json::array({bytes_le(), {{"name", "gzip"}}})), ErrorKind::unsupported,
                    "fixed size");
  // Wrongly typed index codec lists are metadata errors, not crashes or foreign exceptions.
  for (json bad : {json(5), json("bytes"), json::object(), json::array({5}), json::array({json::array()}),
                   json::array({{{"name", 5}}}), json::array({{{"configuration", json::object()}}}),
                   json::array({nullptr})}) {
    SCOPED_TRACE(bad.dump());
    try {
      CodecChain::create(json::array({{{"name", "sharding_indexed"}, {"configuration", with("index_codecs", bad)}}}),
                         shard_spec({8, 6}), "meta/zarr.json");
      ADD_FAILURE() << "accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("index_codecs"), std::string::npos) << e.what();
    } catch (const std::exception& e) {
      ADD_FAILURE() << "not a zarrdirect::Error: " << e.what();
    }
  }
}

TEST(ShardingConfig, TooManyInnerChunksPerShardAreRefused) {
  ArraySpec big{{std::uint64_t{1} << 17, std::uint64_t{1} << 17}, {ScalarKind::unsigned_int, 1}, {std::byte{0}}};
  try {
    CodecChain::create(json::array({sharding({1, 1})}), big, "meta/zarr.json");
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("too many inner chunks"), std::string::npos) << e.what();
  }
}

TEST(ShardingConfig, DefaultIndexCodecsAreBytesAndCrc32c) {
  json config = {{"chunk_shape", {4, 3}}, {"codecs", json::array({bytes_le()})}};
  auto chain = CodecChain::create(json::array({{{"name", "sharding_indexed"}, {"configuration", config}}}),
                                  shard_spec({8, 6}), "test");
  EXPECT_EQ(chain.sole_sharding_codec()->index_nbytes(), 4u * 16 + 4);
  EXPECT_EQ(chain.sole_sharding_codec()->index_location(), IndexLocation::end);
  // Index codecs given by name only.
  config["index_codecs"] = json::array({bytes_le(), "crc32c"});
  auto named = CodecChain::create(json::array({{{"name", "sharding_indexed"}, {"configuration", config}}}),
                                  shard_spec({8, 6}), "test");
  EXPECT_EQ(named.sole_sharding_codec()->index_nbytes(), 68u);
}

}  // namespace
}  // namespace zarrdirect::codec

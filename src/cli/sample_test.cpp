#include "cli/sample.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "test_support.hpp"
#include "zarrdirect/array.hpp"
#include "zarrdirect/metadata.hpp"

namespace zarrdirect::cli {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

TEST(SampleVolume, HasTheShapeAsked) {
  EXPECT_EQ(sample_volume(3, 4, 5).size(), 60u);
  EXPECT_EQ(sample_volume(1, 1, 1).size(), 1u);
  EXPECT_TRUE(sample_volume(0, 10, 10).empty());
  EXPECT_TRUE(sample_volume(10, 10, 0).empty());
}

TEST(SampleVolume, IsDeterministic) {
  EXPECT_EQ(sample_volume(16, 20, 24), sample_volume(16, 20, 24));
  // Not a constant or a repeated pattern: the noise differs between rows.
  auto volume = sample_volume(2, 2, 64);
  EXPECT_FALSE(std::equal(volume.begin(), volume.begin() + 64, volume.begin() + 64));
}

TEST(SampleVolume, LooksLikeMicroscopyData) {
  // A background of a few hundred up to about two thousand, far from both ends of uint16.
  const std::uint64_t n = 64;
  auto volume = sample_volume(n, n, n);
  const auto [low, high] = std::minmax_element(volume.begin(), volume.end());
  EXPECT_GE(*low, 100);
  EXPECT_LE(*high, 2000);
  EXPECT_GT(*high - *low, 1000);  // structure, not a flat field

  // The signal changes by a few counts per plane along z; the noise on top is under 32 counts,
  // so neighbours along z differ by less than 40, but not by a smooth amount only.
  int largest_step = 0;
  for (std::uint64_t z = 1; z < n; ++z)
    for (std::uint64_t i = 0; i < n * n; ++i) {
      const int step = std::abs(int{volume[z * n * n + i]} - int{volume[(z - 1) * n * n + i]});
      largest_step = std::max(largest_step, step);
    }
  EXPECT_LT(largest_step, 40);
  EXPECT_GE(largest_step, 20);
  // The noise fills the low five bits.
  std::vector<bool> seen(32);
  for (auto v : volume) seen[v % 32] = true;
  EXPECT_EQ(std::count(seen.begin(), seen.end(), true), 32);
}

std::vector<std::string> codec_names(const json& codecs) {
  std::vector<std::string> names;
  for (const auto& codec : codecs) names.push_back(codec.at("name").get<std::string>());
  return names;
}

TEST(SampleMetadata, DescribesAThreeDimensionalUint16Array) {
  const std::vector<std::uint64_t> shape{30, 40, 50}, chunks{8, 16, 32};
  for (const std::string codec : {"none", "zstd", "gzip", "blosc", "sharded"}) {
    SCOPED_TRACE(codec);
    json doc = sample_metadata(shape, chunks, codec);
    ArrayMetadata m = parse_v3_array_metadata(doc, "zarr.json");  // valid v3 metadata
    EXPECT_EQ(m.shape, shape);
    EXPECT_EQ(m.chunk_shape, chunks);
    EXPECT_EQ(m.dtype, (DataType{ScalarKind::unsigned_int, 2}));
    EXPECT_EQ(m.fill_value, std::vector<std::byte>(2, std::byte{0}));
    ASSERT_EQ(m.dimension_names.size(), 3u);
    EXPECT_EQ(m.dimension_names[0], "z");
    EXPECT_EQ(m.dimension_names[2], "x");
  }
}

TEST(SampleMetadata, CodecSetups) {
  const std::vector<std::uint64_t> shape{30, 40, 50}, chunks{8, 16, 32};
  EXPECT_EQ(codec_names(sample_metadata(shape, chunks, "none")["codecs"]), (std::vector<std::string>{"bytes"}));
  EXPECT_EQ(codec_names(sample_metadata(shape, chunks, "zstd")["codecs"]), (std::vector<std::string>{"bytes", "zstd"}));
  EXPECT_EQ(codec_names(sample_metadata(shape, chunks, "gzip")["codecs"]), (std::vector<std::string>{"bytes", "gzip"}));
  json blosc = sample_metadata(shape, chunks, "blosc")["codecs"];
  EXPECT_EQ(codec_names(blosc), (std::vector<std::string>{"bytes", "blosc"}));
  EXPECT_EQ(blosc[1]["configuration"]["typesize"], 2);  // the element size, for the shuffle
  EXPECT_EQ(blosc[1]["configuration"]["shuffle"], "shuffle");

  json sharded = sample_metadata(shape, chunks, "sharded")["codecs"];
  EXPECT_EQ(codec_names(sharded), (std::vector<std::string>{"sharding_indexed"}));
  const json& configuration = sharded[0]["configuration"];
  EXPECT_EQ(configuration["chunk_shape"], json::array({2, 4, 8}));  // a quarter of the shard
  EXPECT_EQ(codec_names(configuration["codecs"]), (std::vector<std::string>{"bytes", "zstd"}));
  EXPECT_EQ(codec_names(configuration["index_codecs"]), (std::vector<std::string>{"bytes", "crc32c"}));
  // Every byte order is stated little-endian.
  EXPECT_EQ(sample_metadata(shape, chunks, "none")["codecs"][0]["configuration"]["endian"], "little");
}

TEST(SampleMetadata, ShardedInnerChunksTileShardsOfAnyShape) {
  // Shard extents that four does not divide still get inner chunks that divide them.
  for (const std::vector<std::uint64_t>& chunks :
       {std::vector<std::uint64_t>{9, 14, 18}, std::vector<std::uint64_t>{1, 2, 3}, std::vector<std::uint64_t>{7, 25, 64}}) {
    SCOPED_TRACE(::testing::PrintToString(chunks));
    json doc = sample_metadata({40, 40, 70}, chunks, "sharded");
    const json& inner = doc["codecs"][0]["configuration"]["chunk_shape"];
    ASSERT_EQ(inner.size(), 3u);
    for (std::size_t d = 0; d < 3; ++d) {
      const auto extent = inner[d].get<std::uint64_t>();
      EXPECT_GE(extent, 1u);
      EXPECT_LE(extent, std::max<std::uint64_t>(1, chunks[d] / 4));
      EXPECT_EQ(chunks[d] % extent, 0u) << "dimension " << d;
    }
    EXPECT_NO_THROW(parse_v3_array_metadata(doc, "zarr.json"));
  }
}

TEST(SampleMetadata, UnknownCodecIsRefused) {
  try {
    sample_metadata({4, 4, 4}, {2, 2, 2}, "lzma");
    ADD_FAILURE() << "accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("none, zstd, gzip, blosc or sharded"), std::string::npos) << e.what();
  }
}

// Total bytes of the chunk files under `path` (everything but zarr.json).
std::uintmax_t chunk_bytes(const fs::path& path) {
  std::uintmax_t total = 0;
  for (const auto& entry : fs::recursive_directory_iterator(path))
    if (entry.is_regular_file() && entry.path().filename() != "zarr.json") total += entry.file_size();
  return total;
}

TEST(WriteSample, ReadsBackAsTheVolumeWithEveryCodec) {
  const std::vector<std::uint64_t> shape{10, 13, 17};
  const auto expected = sample_volume(10, 13, 17);
  for (const std::string codec : {"none", "zstd", "gzip", "blosc", "sharded"})
    for (const std::vector<std::uint64_t>& chunks : {std::vector<std::uint64_t>{4, 8, 8}, std::vector<std::uint64_t>{9, 6, 10}}) {
      SCOPED_TRACE(codec + " chunks " + ::testing::PrintToString(chunks));
      test::TempDir dir;
      write_sample(dir / "s.zarr", shape, chunks, codec);
      Array array = Array::open(dir / "s.zarr");
      EXPECT_EQ(array.metadata().shape, shape);
      NDArray result = array.read();
      ASSERT_EQ(result.nbytes(), expected.size() * 2);
      EXPECT_EQ(std::memcmp(result.data(), expected.data(), result.nbytes()), 0);
    }
}

TEST(WriteSample, CompressesLikeRealData) {
  // Neither incompressible nor trivially so: compressors see a realistic ratio.
  test::TempDir dir;
  write_sample(dir / "raw", {32, 64, 64}, {32, 64, 64}, "none");
  write_sample(dir / "zstd", {32, 64, 64}, {32, 64, 64}, "zstd");
  const auto raw = chunk_bytes(dir / "raw");
  const auto compressed = chunk_bytes(dir / "zstd");
  EXPECT_EQ(raw, 32u * 64 * 64 * 2);
  EXPECT_LT(compressed * 11, raw * 10);  // better than 1.1x
  EXPECT_GT(compressed * 3, raw);        // worse than 3x
}

TEST(WriteSample, OnlyThreeDimensions) {
  test::TempDir dir;
  for (const auto& [shape, chunks] :
       {std::pair{std::vector<std::uint64_t>{4, 4}, std::vector<std::uint64_t>{2, 2}},
        std::pair{std::vector<std::uint64_t>{4, 4, 4}, std::vector<std::uint64_t>{2, 2}},
        std::pair{std::vector<std::uint64_t>{4, 4, 4, 4}, std::vector<std::uint64_t>{2, 2, 2, 2}}}) {
    try {
      write_sample(dir / "s", shape, chunks, "none");
      ADD_FAILURE() << "accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::invalid_argument);
      EXPECT_NE(std::string(e.what()).find("3-d"), std::string::npos) << e.what();
    }
    EXPECT_FALSE(fs::exists(dir / "s"));
  }
}

}  // namespace
}  // namespace zarrdirect::cli

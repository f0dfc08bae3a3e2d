#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>

#include "zarrdirect/error.hpp"
#include "zarrdirect/metadata.hpp"

namespace zarrdirect {
namespace {

using Shape = std::vector<std::uint64_t>;
constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();

ArrayMetadata metadata(Shape shape, Shape chunks, DataType dtype = {ScalarKind::unsigned_int, 2}) {
  ArrayMetadata m;
  m.shape = std::move(shape);
  m.chunk_shape = std::move(chunks);
  m.dtype = dtype;
  m.fill_value.assign(dtype.size, std::byte{0});
  return m;
}

// `action` throws Error(invalid_metadata) whose message contains `field`.
template <class Action>
void expect_overflow(Action&& action, const std::string& field) {
  try {
    (void)action();
    ADD_FAILURE() << "no error; expected one naming " << field;
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::invalid_metadata) << e.what();
    EXPECT_TRUE(std::string(e.what()).starts_with(field)) << e.what();
    EXPECT_NE(std::string(e.what()).find("overflows 64 bits"), std::string::npos) << e.what();
  }
}

TEST(ArrayMetadata, ElementCountIsTheProductOfTheShape) {
  EXPECT_EQ(metadata({10, 20}, {4, 5}).num_elements(), 200u);
  EXPECT_EQ(metadata({7}, {7}).num_elements(), 7u);
  EXPECT_EQ(metadata({3, 0, 5}, {1, 1, 1}).num_elements(), 0u);  // an empty dimension empties the array
  EXPECT_EQ(metadata({}, {}).num_elements(), 1u);                 // a scalar holds one element
  EXPECT_EQ(metadata({}, {}).rank(), 0u);
  EXPECT_EQ(metadata({1, 2, 3}, {1, 1, 1}).rank(), 3u);
  // The boundary: 2^32 * (2^32 - 1) fits, 2^32 * 2^32 does not.
  EXPECT_EQ(metadata({std::uint64_t{1} << 32, (std::uint64_t{1} << 32) - 1}, {1, 1}).num_elements(),
            (std::uint64_t{1} << 32) * ((std::uint64_t{1} << 32) - 1));
  expect_overflow([] { return metadata({std::uint64_t{1} << 32, std::uint64_t{1} << 32}, {1, 1}).num_elements(); },
                  "shape");
}

TEST(ArrayMetadata, ChunkGridRoundsPartialEdgeChunksUp) {
  EXPECT_EQ(metadata({10, 20}, {4, 5}).chunk_grid_shape(), (Shape{3, 4}));
  EXPECT_EQ(metadata({8, 20}, {4, 5}).chunk_grid_shape(), (Shape{2, 4}));    // exact division
  EXPECT_EQ(metadata({9, 21}, {4, 5}).chunk_grid_shape(), (Shape{3, 5}));    // one element over
  EXPECT_EQ(metadata({3, 1}, {100, 100}).chunk_grid_shape(), (Shape{1, 1})); // chunks larger than the array
  EXPECT_EQ(metadata({0, 5}, {4, 5}).chunk_grid_shape(), (Shape{0, 1}));     // an empty dimension has no chunks
  EXPECT_EQ(metadata({kMax}, {2}).chunk_grid_shape(), (Shape{kMax / 2 + 1}));  // no overflow at the top
  EXPECT_EQ(metadata({kMax}, {kMax}).chunk_grid_shape(), (Shape{1}));
  EXPECT_TRUE(metadata({}, {}).chunk_grid_shape().empty());
}

TEST(ArrayMetadata, ChunkCountIsTheProductOfTheGrid) {
  EXPECT_EQ(metadata({10, 20}, {4, 5}).num_chunks(), 12u);
  EXPECT_EQ(metadata({10, 20, 3}, {4, 5, 1}).num_chunks(), 36u);
  EXPECT_EQ(metadata({10, 0}, {4, 5}).num_chunks(), 0u);
  EXPECT_EQ(metadata({}, {}).num_chunks(), 1u);  // a scalar is one chunk
  // The element count may overflow while the chunk count does not...
  EXPECT_EQ(metadata({kMax, kMax}, {kMax, kMax}).num_chunks(), 1u);
  // ...and the other way round: every chunk is counted.
  expect_overflow([] { return metadata({kMax, 3}, {1, 1}).num_chunks(); }, "chunk grid");
}

TEST(ArrayMetadata, ChunkBytesCountTheElementSize) {
  EXPECT_EQ(metadata({10, 20}, {4, 5}).chunk_nbytes(), 4u * 5u * 2u);
  EXPECT_EQ(metadata({10, 20}, {4, 5}, {ScalarKind::complex, 16}).chunk_nbytes(), 4u * 5u * 16u);
  EXPECT_EQ(metadata({10, 20}, {4, 5}, {ScalarKind::boolean, 1}).chunk_nbytes(), 20u);
  // The chunk shape counts, not the shape: an edge chunk is stored whole.
  EXPECT_EQ(metadata({1}, {1000}, {ScalarKind::floating, 8}).chunk_nbytes(), 8000u);
  EXPECT_EQ(metadata({}, {}, {ScalarKind::floating, 4}).chunk_nbytes(), 4u);
  // Overflow in the element size alone: 2^61 elements fit, 2^61 * 8 bytes do not.
  const DataType f8{ScalarKind::floating, 8};
  EXPECT_EQ(metadata({1}, {(std::uint64_t{1} << 61) - 1}, f8).chunk_nbytes(), ((std::uint64_t{1} << 61) - 1) * 8);
  expect_overflow([&] { return metadata({1}, {std::uint64_t{1} << 61}, f8).chunk_nbytes(); }, "chunk shape");
  // And in the element count.
  expect_overflow([] { return metadata({1, 1}, {kMax, 2}, {ScalarKind::unsigned_int, 1}).chunk_nbytes(); },
                  "chunk shape");
}

TEST(ArrayMetadata, ParsedMetadataAnswersTheSameQuestions) {
  // The methods work on what the parsers produce, v3 and v2 alike.
  const auto v3 = parse_v3_array_metadata(nlohmann::json::parse(R"({
    "zarr_format": 3, "node_type": "array", "shape": [10, 20, 7], "data_type": "float32",
    "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [4, 5, 7]}},
    "chunk_key_encoding": {"name": "default"}, "fill_value": 0,
    "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}]})"),
                                          "a/zarr.json");
  EXPECT_EQ(v3.rank(), 3u);
  EXPECT_EQ(v3.num_elements(), 1400u);
  EXPECT_EQ(v3.chunk_grid_shape(), (Shape{3, 4, 1}));
  EXPECT_EQ(v3.num_chunks(), 12u);
  EXPECT_EQ(v3.chunk_nbytes(), 4u * 5u * 7u * 4u);

  const auto v2 = parse_v2_array_metadata(nlohmann::json::parse(R"({
    "zarr_format": 2, "shape": [5], "chunks": [2], "dtype": "<i8", "compressor": null,
    "fill_value": 0, "order": "C", "filters": null})"),
                                          nlohmann::json::object(), "a/.zarray");
  EXPECT_EQ(v2.num_elements(), 5u);
  EXPECT_EQ(v2.chunk_grid_shape(), (Shape{3}));
  EXPECT_EQ(v2.num_chunks(), 3u);
  EXPECT_EQ(v2.chunk_nbytes(), 16u);
}

}  // namespace
}  // namespace zarrdirect

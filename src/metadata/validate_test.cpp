#include "metadata/validate.hpp"

#include <gtest/gtest.h>

#include "zarrdirect/error.hpp"

namespace zarrdirect {
namespace {

constexpr std::uint64_t kTwoTo(int bits) { return std::uint64_t{1} << bits; }

ArrayMetadata make(std::vector<std::uint64_t> shape, std::vector<std::uint64_t> chunks, std::uint8_t element_size = 2,
                   int zarr_format = 3) {
  ArrayMetadata m;
  m.zarr_format = zarr_format;
  m.shape = std::move(shape);
  m.chunk_shape = std::move(chunks);
  m.dtype = {ScalarKind::unsigned_int, element_size};
  m.fill_value.assign(element_size, std::byte{0});
  return m;
}

// Validation fails with `kind` and a message holding the file and every one of `parts`.
void expect_refused(const ArrayMetadata& m, ErrorKind kind, std::initializer_list<std::string_view> parts) {
  try {
    validate_array_metadata(m, "grp/arr/zarr.json");
    ADD_FAILURE() << "accepted";
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_EQ(e.kind(), kind) << message;
    EXPECT_EQ(message.rfind("grp/arr/zarr.json: ", 0), 0u) << message;
    for (auto part : parts) EXPECT_NE(message.find(part), std::string::npos) << message;
  }
}

TEST(ValidateArrayMetadata, OrdinaryArraysPass) {
  EXPECT_NO_THROW(validate_array_metadata(make({100, 200}, {10, 300}), "f"));  // chunks may exceed the shape
  EXPECT_NO_THROW(validate_array_metadata(make({}, {}), "f"));                  // zero-dimensional
  EXPECT_NO_THROW(validate_array_metadata(make({0, 5}, {1, 5}), "f"));          // empty
  EXPECT_NO_THROW(validate_array_metadata(make({7}, {3}, 8, 2), "f"));
}

TEST(ValidateArrayMetadata, ChunkRankMustMatchNamingTheFormatsField) {
  expect_refused(make({10, 20}, {5}), ErrorKind::invalid_metadata,
                 {"field \"chunk_shape\"", "has 1 dimensions, shape has 2"});
  expect_refused(make({10}, {5, 5, 5}, 2, 2), ErrorKind::invalid_metadata,
                 {"field \"chunks\"", "has 3 dimensions, shape has 1"});
  expect_refused(make({}, {1}), ErrorKind::invalid_metadata, {"has 1 dimensions, shape has 0"});
}

TEST(ValidateArrayMetadata, ArrayBytesMustFitASignedSixtyFourBitCount) {
  // One byte under the limit in total passes; the limit itself, in any factorisation, does not.
  EXPECT_NO_THROW(validate_array_metadata(make({kTwoTo(60) - 1}, {1024}, 8), "f"));
  EXPECT_NO_THROW(validate_array_metadata(make({kTwoTo(31), kTwoTo(31) - 1}, {1, 1024}, 2), "f"));
  expect_refused(make({kTwoTo(60)}, {1024}, 8), ErrorKind::invalid_metadata,
                 {"field \"shape\"", "signed 64-bit"});
  expect_refused(make({kTwoTo(31), kTwoTo(31)}, {1, 1024}, 2), ErrorKind::invalid_metadata, {"field \"shape\""});
  // The element count itself overflows 64 bits.
  expect_refused(make({kTwoTo(32), kTwoTo(32), 2}, {1, 1, 1}, 1), ErrorKind::invalid_metadata, {"field \"shape\""});
  // An extent no signed index reaches, named with its value.
  expect_refused(make({kTwoTo(63), 1}, {1, 1}, 1), ErrorKind::invalid_metadata,
                 {"field \"shape\"", "9223372036854775808", "2^63-1"});
}

TEST(ValidateArrayMetadata, AnEmptyDimensionDoesNotHideOversizedOnes) {
  // An array with no elements still has strides for its other dimensions (NumPy refuses such a
  // shape as "too big"): the refusal must not depend on where the zero is.
  for (const auto& shape : {std::vector<std::uint64_t>{kTwoTo(40), kTwoTo(40), 0},
                            std::vector<std::uint64_t>{0, kTwoTo(40), kTwoTo(40)},
                            std::vector<std::uint64_t>{kTwoTo(40), 0, kTwoTo(40)}}) {
    SCOPED_TRACE(::testing::PrintToString(shape));
    expect_refused(make(shape, {1, 1, 1}, 2), ErrorKind::invalid_metadata, {"field \"shape\""});
  }
  // Zeros with extents whose product does fit are fine wherever they are.
  EXPECT_NO_THROW(validate_array_metadata(make({0, kTwoTo(30), kTwoTo(30)}, {1, 1, 1}, 2), "f"));
  EXPECT_NO_THROW(validate_array_metadata(make({kTwoTo(30), kTwoTo(30), 0}, {1, 1, 1}, 2), "f"));
}

TEST(ValidateArrayMetadata, ChunkSizeOverflowIsInvalid) {
  expect_refused(make({10, 10}, {kTwoTo(32), kTwoTo(32)}, 1), ErrorKind::invalid_metadata,
                 {"field \"chunk_shape\"", "overflows 64 bits"});
  // Elements that fit, bytes that do not.
  expect_refused(make({10}, {kTwoTo(62)}, 8, 2), ErrorKind::invalid_metadata, {"field \"chunks\"", "overflows"});
}

TEST(ValidateArrayMetadata, ChunksOverSixteenGibibytesAreUnsupported) {
  EXPECT_NO_THROW(validate_array_metadata(make({10}, {kMaxChunkBytes}, 1), "f"));
  EXPECT_NO_THROW(validate_array_metadata(make({10, 10}, {kTwoTo(17), kTwoTo(16)}, 2), "f"));  // 16 GiB exactly
  expect_refused(make({10}, {kMaxChunkBytes + 1}, 1), ErrorKind::unsupported,
                 {"\"chunk_shape\"", "17179869185 byte chunks", "at most 17179869184 bytes"});
  expect_refused(make({10, 10}, {kTwoTo(17), kTwoTo(16)}, 4, 2), ErrorKind::unsupported, {"\"chunks\""});
}

TEST(ValidateArrayMetadata, FillValueMustBeOneElement) {
  ArrayMetadata m = make({4}, {2}, 4);
  m.fill_value.resize(2);
  expect_refused(m, ErrorKind::invalid_metadata, {"field \"fill_value\"", "size"});
  m.fill_value.clear();
  expect_refused(m, ErrorKind::invalid_metadata, {"field \"fill_value\""});
  m.fill_value.resize(8);  // two elements
  expect_refused(m, ErrorKind::invalid_metadata, {"field \"fill_value\""});
}

TEST(ValidateArrayMetadata, DimensionNamesAreNoneOrOnePerDimension) {
  ArrayMetadata m = make({4, 5}, {2, 5});
  m.dimension_names = {"y", std::nullopt};  // unnamed dimensions count
  EXPECT_NO_THROW(validate_array_metadata(m, "f"));
  m.dimension_names = {"y"};
  expect_refused(m, ErrorKind::invalid_metadata, {"field \"dimension_names\"", "has 1 names, shape has 2 dimensions"});
  m.dimension_names = {"z", "y", "x"};
  expect_refused(m, ErrorKind::invalid_metadata, {"has 3 names, shape has 2 dimensions"});
}

}  // namespace
}  // namespace zarrdirect

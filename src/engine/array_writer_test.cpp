#include "engine/array_writer.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iterator>

#include "test_support.hpp"
#include "zarrdirect/array.hpp"
#include "zarrdirect/error.hpp"

namespace zarrdirect {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

std::vector<std::uint8_t> read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in) << path;
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

template <class T>
std::vector<T> values_in(const std::vector<std::uint8_t>& bytes) {
  std::vector<T> values(bytes.size() / sizeof(T));
  std::memcpy(values.data(), bytes.data(), values.size() * sizeof(T));
  return values;
}

template <class T>
std::span<const std::byte> bytes_of(const std::vector<T>& values) {
  return std::as_bytes(std::span(values));
}

// The files under `root`, relative to it, sorted.
std::vector<std::string> files_under(const fs::path& root) {
  std::vector<std::string> files;
  for (const auto& entry : fs::recursive_directory_iterator(root))
    if (entry.is_regular_file()) files.push_back(fs::relative(entry.path(), root).generic_string());
  std::sort(files.begin(), files.end());
  return files;
}

json v3_doc(std::vector<std::uint64_t> shape, std::vector<std::uint64_t> chunks, const std::string& data_type,
            json fill_value, json codecs) {
  return {{"zarr_format", 3},
          {"node_type", "array"},
          {"shape", shape},
          {"data_type", data_type},
          {"chunk_grid", {{"name", "regular"}, {"configuration", {{"chunk_shape", chunks}}}}},
          {"chunk_key_encoding", {{"name", "default"}, {"configuration", {{"separator", "/"}}}}},
          {"fill_value", fill_value},
          {"codecs", codecs}};
}

const json kBytesLittle = json::array({{{"name", "bytes"}, {"configuration", {{"endian", "little"}}}}});

template <class T>
std::vector<T> read_back(const fs::path& path) {
  NDArray result = Array::open(path).read();
  std::vector<T> values(result.nbytes() / sizeof(T));
  std::memcpy(values.data(), result.data(), result.nbytes());
  return values;
}

// A 5x7 uint16 array, element (r, c) = 100 r + c.
std::vector<std::uint16_t> five_by_seven() {
  std::vector<std::uint16_t> values;
  for (std::uint16_t r = 0; r < 5; ++r)
    for (std::uint16_t c = 0; c < 7; ++c) values.push_back(static_cast<std::uint16_t>(100 * r + c));
  return values;
}

TEST(ArrayWriter, V3ChunksAreCOrderWithEdgesPaddedByTheFillValue) {
  test::TempDir dir;
  const fs::path path = dir / "a.zarr";
  const json doc = v3_doc({5, 7}, {2, 3}, "uint16", 9, kBytesLittle);
  const auto values = five_by_seven();
  write_array(path, doc, bytes_of(values));

  EXPECT_EQ(json::parse(read_file(path / "zarr.json")), doc);
  std::vector<std::string> expected{"zarr.json"};
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) expected.push_back("c/" + std::to_string(i) + "/" + std::to_string(j));
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(files_under(path), expected);

  // Every chunk is stored full size: 2x3 elements, the part outside the array holding 9.
  EXPECT_EQ(values_in<std::uint16_t>(read_file(path / "c/0/0")), (std::vector<std::uint16_t>{0, 1, 2, 100, 101, 102}));
  EXPECT_EQ(values_in<std::uint16_t>(read_file(path / "c/1/1")),
            (std::vector<std::uint16_t>{203, 204, 205, 303, 304, 305}));
  EXPECT_EQ(values_in<std::uint16_t>(read_file(path / "c/0/2")), (std::vector<std::uint16_t>{6, 9, 9, 106, 9, 9}));
  EXPECT_EQ(values_in<std::uint16_t>(read_file(path / "c/2/0")), (std::vector<std::uint16_t>{400, 401, 402, 9, 9, 9}));
  EXPECT_EQ(values_in<std::uint16_t>(read_file(path / "c/2/2")), (std::vector<std::uint16_t>{406, 9, 9, 9, 9, 9}));

  EXPECT_EQ(read_back<std::uint16_t>(path), values);
}

TEST(ArrayWriter, V2UsesItsKeysAndTheStoredByteOrder) {
  test::TempDir dir;
  const fs::path path = dir / "v2";
  const json doc = json::parse(R"({"zarr_format": 2, "shape": [5, 7], "chunks": [3, 4], "dtype": ">u2",
                                   "fill_value": 1, "order": "C", "compressor": null, "filters": null})");
  const auto values = five_by_seven();
  write_array(path, doc, bytes_of(values));

  EXPECT_EQ(files_under(path), (std::vector<std::string>{".zarray", "0.0", "0.1", "1.0", "1.1"}));
  EXPECT_EQ(json::parse(read_file(path / ".zarray")), doc);
  // Big-endian on disk: 3x4 elements, (r, c) = 100 r + c, the edge filled with 1.
  auto chunk = read_file(path / "1.1");
  ASSERT_EQ(chunk.size(), 24u);
  std::vector<std::uint16_t> stored;
  for (std::size_t i = 0; i < chunk.size(); i += 2) stored.push_back(static_cast<std::uint16_t>(chunk[i] << 8 | chunk[i + 1]));
  EXPECT_EQ(stored, (std::vector<std::uint16_t>{304, 305, 306, 1, 404, 405, 406, 1, 1, 1, 1, 1}));

  EXPECT_EQ(read_back<std::uint16_t>(path), values);
}

TEST(ArrayWriter, ManyCompressedChunksReadBack) {
  // Enough chunks for every writer thread to take several, through compressors and checksums.
  std::vector<std::int32_t> values(33 * 17 * 9);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<std::int32_t>(i * 2654435761u % 100'003) - 50'000;
  const json chains[] = {
      json::array({{{"name", "bytes"}, {"configuration", {{"endian", "big"}}}},
                   {{"name", "zstd"}, {"configuration", {{"level", 3}, {"checksum", true}}}}}),
      json::array({{{"name", "transpose"}, {"configuration", {{"order", {2, 0, 1}}}}},
                   {{"name", "bytes"}, {"configuration", {{"endian", "little"}}}},
                   {{"name", "gzip"}, {"configuration", {{"level", 1}}}},
                   {{"name", "crc32c"}}}),
  };
  for (const json& codecs : chains) {
    SCOPED_TRACE(codecs.dump());
    test::TempDir dir;
    write_array(dir / "a", v3_doc({33, 17, 9}, {4, 5, 4}, "int32", -7, codecs), bytes_of(values));
    EXPECT_EQ(files_under(dir / "a").size(), 1u + 9 * 4 * 3);
    EXPECT_EQ(read_back<std::int32_t>(dir / "a"), values);
  }
}

TEST(ArrayWriter, FillChunksCanBeSkipped) {
  // 6x6 float32 in 3x3 chunks, fill 2.5; only chunk (1, 0) holds anything else, in one element.
  std::vector<float> values(36, 2.5f);
  values[4 * 6 + 1] = -1.0f;
  const json doc = v3_doc({6, 6}, {3, 3}, "float32", 2.5, kBytesLittle);
  test::TempDir dir;
  write_array(dir / "skip", doc, bytes_of(values), WriteOptions{.skip_fill_chunks = true});
  EXPECT_EQ(files_under(dir / "skip"), (std::vector<std::string>{"c/1/0", "zarr.json"}));
  EXPECT_EQ(read_back<float>(dir / "skip"), values);
  // By default every chunk is written.
  write_array(dir / "all", doc, bytes_of(values));
  EXPECT_EQ(files_under(dir / "all").size(), 5u);
  EXPECT_EQ(read_back<float>(dir / "all"), values);
}

TEST(ArrayWriter, EdgeChunksOfFillAreSkippedToo) {
  // 4x4 uint8 in 3x3 chunks, fill 0: the last row and column are zero, so the three edge chunks
  // (zero inside the array, padded with zero outside) are skipped.
  std::vector<std::uint8_t> values(16, 0);
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) values[static_cast<std::size_t>(r * 4 + c)] = static_cast<std::uint8_t>(1 + r * 3 + c);
  test::TempDir dir;
  write_array(dir / "a", v3_doc({4, 4}, {3, 3}, "uint8", 0, kBytesLittle), bytes_of(values),
              WriteOptions{.skip_fill_chunks = true});
  EXPECT_EQ(files_under(dir / "a"), (std::vector<std::string>{"c/0/0", "zarr.json"}));
  EXPECT_EQ(read_back<std::uint8_t>(dir / "a"), values);
}

TEST(ArrayWriter, ZeroDimensionalAndEmptyArrays) {
  test::TempDir dir;
  const std::vector<double> scalar{3.25};
  write_array(dir / "scalar", v3_doc({}, {}, "float64", 0, kBytesLittle), bytes_of(scalar));
  EXPECT_EQ(files_under(dir / "scalar"), (std::vector<std::string>{"c", "zarr.json"}));
  EXPECT_EQ(values_in<double>(read_file(dir / "scalar" / "c")), scalar);
  EXPECT_EQ(read_back<double>(dir / "scalar"), scalar);

  write_array(dir / "empty", v3_doc({0, 4}, {2, 2}, "uint16", 0, kBytesLittle), {});
  EXPECT_EQ(files_under(dir / "empty"), (std::vector<std::string>{"zarr.json"}));
}

TEST(ArrayWriter, RewritingReplacesEveryChunkFile) {
  // A large chunk file replaced by a smaller one must not keep the old tail: gzip would call it
  // garbage after the stream.
  test::TempDir dir;
  const json doc = v3_doc({4096}, {4096}, "uint32", 0,
                          json::array({{{"name", "bytes"}, {"configuration", {{"endian", "little"}}}},
                                       {{"name", "gzip"}, {"configuration", {{"level", 1}}}}}));
  std::vector<std::uint32_t> noisy(4096);
  for (std::size_t i = 0; i < noisy.size(); ++i) noisy[i] = static_cast<std::uint32_t>(i * 2654435761u);
  write_array(dir / "a", doc, bytes_of(noisy));
  const auto noisy_size = fs::file_size(dir / "a" / "c" / "0");
  std::vector<std::uint32_t> constant(4096, 5);
  write_array(dir / "a", doc, bytes_of(constant));
  EXPECT_LT(fs::file_size(dir / "a" / "c" / "0"), noisy_size);
  EXPECT_EQ(read_back<std::uint32_t>(dir / "a"), constant);
}

TEST(ArrayWriter, DataOfTheWrongSizeIsRefusedBeforeAnythingIsWritten) {
  test::TempDir dir;
  const std::vector<std::uint16_t> values(34);  // one element short of 5x7
  try {
    write_array(dir / "a", v3_doc({5, 7}, {2, 3}, "uint16", 0, kBytesLittle), bytes_of(values));
    ADD_FAILURE() << "accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("68 bytes given for an array of 70 bytes"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(dir / "a"));
}

TEST(ArrayWriter, InvalidMetadataIsRefusedNamingTheFile) {
  test::TempDir dir;
  const std::vector<std::uint16_t> values(4);
  json doc = v3_doc({4}, {2}, "uint16", 0, kBytesLittle);
  doc.erase("data_type");
  try {
    write_array(dir / "v3", doc, bytes_of(values));
    ADD_FAILURE() << "accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::invalid_metadata);
    EXPECT_NE(std::string(e.what()).find("zarr.json"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("data_type"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(dir / "v3"));
  // Without zarr_format 3 the document is read as a v2 .zarray (this one lacks "chunks").
  const json v2 = json::parse(R"({"zarr_format": 2, "shape": [4], "dtype": "<u2", "fill_value": 0,
                                  "order": "C", "compressor": null, "filters": null})");
  try {
    write_array(dir / "v2", v2, bytes_of(values));
    ADD_FAILURE() << "accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::invalid_metadata);
    EXPECT_NE(std::string(e.what()).find(".zarray"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("chunks"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(dir / "v2"));
}

TEST(ArrayWriter, AChunkThatCannotBeWrittenFailsTheWrite) {
  // A folder where a chunk file should go: the failure comes back from whichever thread met it,
  // as an I/O error naming the file.
  test::TempDir dir;
  std::vector<std::uint16_t> values(64 * 64, 3);
  fs::create_directories(dir / "a" / "c" / "5" / "2");
  try {
    write_array(dir / "a", v3_doc({64, 64}, {8, 8}, "uint16", 0, kBytesLittle), bytes_of(values));
    ADD_FAILURE() << "accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::io);
    EXPECT_NE(std::string(e.what()).find("c/5/2"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("write failed"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace zarrdirect

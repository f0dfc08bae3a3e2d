#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "test_support.hpp"
#include "zarrdirect/array.hpp"

namespace zarrdirect {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

// A v3 uint8 array of `shape` in `chunks` with the default key encoding and `separator`.
void write_v3(const fs::path& folder, const json& shape, const json& chunks, const std::string& separator = "/") {
  test::write_text(folder / "zarr.json",
                   json{{"zarr_format", 3},
                        {"node_type", "array"},
                        {"shape", shape},
                        {"data_type", "uint8"},
                        {"chunk_grid", {{"name", "regular"}, {"configuration", {{"chunk_shape", chunks}}}}},
                        {"chunk_key_encoding", {{"name", "default"}, {"configuration", {{"separator", separator}}}}},
                        {"fill_value", 0},
                        {"codecs", json::array({{{"name", "bytes"}}})}}
                       .dump());
}

void write_v2(const fs::path& folder, const json& shape, const json& chunks, const std::string& separator = ".") {
  test::write_text(folder / ".zarray", json{{"zarr_format", 2},
                                            {"shape", shape},
                                            {"chunks", chunks},
                                            {"dtype", "|u1"},
                                            {"fill_value", 0},
                                            {"order", "C"},
                                            {"compressor", nullptr},
                                            {"filters", nullptr},
                                            {"dimension_separator", separator}}
                                           .dump());
}

void write_chunk(const fs::path& file, std::size_t size) {
  test::write_bytes(file, std::vector<std::uint8_t>(size, 1));
}

TEST(StorageSummary, CountsOnlyKeysOfTheChunkGrid) {
  test::TempDir dir;
  const fs::path a = dir / "a";
  write_v3(a, {6, 7}, {4, 3});  // a 2 x 3 grid
  write_chunk(a / "c/0/0", 12);
  write_chunk(a / "c/0/2", 12);
  write_chunk(a / "c/1/1", 10);
  // Not chunks of this grid: beyond it, spelled as the encoding never spells, or other files.
  write_chunk(a / "c/0/3", 1000);
  write_chunk(a / "c/2/0", 1000);
  write_chunk(a / "c/01/1", 1000);
  write_chunk(a / "c/1/+1", 1000);
  write_chunk(a / "0.0", 1000);
  write_chunk(a / "notes.txt", 1000);
  write_chunk(a / "c/0/1/0", 1000);  // one level too deep: c/0/1 is a folder, which a read refuses
  write_chunk(a / "c/1/1 ", 1000);
  const StorageSummary summary = Array::open(a).storage_summary();
  EXPECT_EQ(summary.chunks_total, 6u);
  EXPECT_EQ(summary.chunks_stored, 3u);
  EXPECT_EQ(summary.bytes_stored, 34u);
  EXPECT_EQ(summary.chunks_refused, 1u);
}

TEST(StorageSummary, LinksOutOfTheFolderAndFifosAreRefusedNotCounted) {
  test::TempDir dir;
  const fs::path a = dir / "a";
  write_v3(a, {4}, {1});
  write_chunk(a / "c/0", 5);
  // A terabyte (sparse) outside the folder, linked in as a chunk: a read refuses it, and so
  // must the count of bytes stored.
  {
    int fd = ::open((dir / "huge").c_str(), O_WRONLY | O_CREAT, 0600);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::ftruncate(fd, off_t{1} << 40), 0);
    ::close(fd);
  }
  fs::create_symlink(dir / "huge", a / "c/1");
  fs::create_symlink("../../huge", a / "c/2");
  ASSERT_EQ(::mkfifo((a / "c/3").c_str(), 0600), 0);  // opening it must not wait for a writer
  const StorageSummary summary = Array::open(a).storage_summary();
  EXPECT_EQ(summary.chunks_total, 4u);
  EXPECT_EQ(summary.chunks_stored, 1u);
  EXPECT_EQ(summary.bytes_stored, 5u);
  EXPECT_EQ(summary.chunks_refused, 3u);
}

TEST(StorageSummary, ALinkedChunkFolderOutsideIsNotWalked) {
  test::TempDir dir;
  write_chunk(dir / "elsewhere/0", 1000);
  const fs::path a = dir / "a";
  write_v3(a, {2, 2}, {1, 1});
  write_chunk(a / "c/0/0", 3);
  fs::create_symlink(dir / "elsewhere", a / "c/1");
  const StorageSummary summary = Array::open(a).storage_summary();
  EXPECT_EQ(summary.chunks_stored, 1u);
  EXPECT_EQ(summary.bytes_stored, 3u);
}

TEST(StorageSummary, EveryKeyEncoding) {
  test::TempDir dir;
  write_v3(dir / "v3dot", {4, 4}, {2, 2}, ".");
  write_chunk(dir / "v3dot/c.0.1", 4);
  write_chunk(dir / "v3dot/c.1.1", 4);
  write_chunk(dir / "v3dot/c.1.1.0", 100);  // one part too many
  write_chunk(dir / "v3dot/c.1", 100);      // one too few
  write_chunk(dir / "v3dot/c/1/1", 100);    // the other separator
  write_v2(dir / "v2dot", {4, 4}, {2, 2}, ".");
  write_chunk(dir / "v2dot/0.0", 4);
  write_chunk(dir / "v2dot/1.0", 3);
  write_chunk(dir / "v2dot/1.0.", 100);
  write_chunk(dir / "v2dot/c.1.0", 100);
  write_v2(dir / "v2slash", {4, 4}, {2, 2}, "/");
  write_chunk(dir / "v2slash/1/1", 2);
  write_chunk(dir / "v2slash/c/1/1", 100);
  for (const auto& [name, stored, bytes] : {std::tuple{"v3dot", 2u, 8u}, std::tuple{"v2dot", 2u, 7u},
                                            std::tuple{"v2slash", 1u, 2u}}) {
    SCOPED_TRACE(name);
    const StorageSummary summary = Array::open(dir / name).storage_summary();
    EXPECT_EQ(summary.chunks_total, 4u);
    EXPECT_EQ(summary.chunks_stored, stored);
    EXPECT_EQ(summary.bytes_stored, bytes);
  }
}

TEST(StorageSummary, ZeroDimensionalArrays) {
  test::TempDir dir;
  write_v3(dir / "v3", json::array(), json::array());
  write_v2(dir / "v2", json::array(), json::array());
  EXPECT_EQ(Array::open(dir / "v3").storage_summary().chunks_stored, 0u);
  write_chunk(dir / "v3/c", 1);
  write_chunk(dir / "v2/0", 1);
  for (const char* name : {"v3", "v2"}) {
    const StorageSummary summary = Array::open(dir / name).storage_summary();
    EXPECT_EQ(summary.chunks_total, 1u) << name;
    EXPECT_EQ(summary.chunks_stored, 1u) << name;
  }
}

TEST(StorageSummary, AHugeSparseGridCostsWhatIsStored) {
  // 9 * 10^18 chunks of one element: only the listing is walked, never the grid.
  test::TempDir dir;
  write_v3(dir / "a", {3000000000u, 3000000000u}, {1, 1});
  write_chunk(dir / "a/c/2999999999/7", 1);
  write_chunk(dir / "a/c/3000000000/7", 1);  // just outside
  const StorageSummary summary = Array::open(dir / "a").storage_summary();
  EXPECT_EQ(summary.chunks_total, 9000000000000000000u);
  EXPECT_EQ(summary.chunks_stored, 1u);
}

}  // namespace
}  // namespace zarrdirect

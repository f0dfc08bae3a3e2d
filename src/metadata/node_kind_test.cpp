// zarrdirect::node_kind: what a folder holds, read through the store's checked path.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <future>

#include "test_support.hpp"
#include "zarrdirect/group.hpp"

namespace zarrdirect {
namespace {

namespace fs = std::filesystem;
using test::TempDir;
using test::write_text;

constexpr const char* kV3Array = R"({"zarr_format": 3, "node_type": "array"})";

// node_kind(path) on another thread: a hang fails the test (after a writer releases the FIFO)
// instead of hanging it.
NodeKind node_kind_within_seconds(const fs::path& path, const fs::path& fifo) {
  auto result = std::async(std::launch::async, [&] { return node_kind(path); });
  if (result.wait_for(std::chrono::seconds(10)) != std::future_status::ready) {
    int writer = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK);
    result.wait();
    if (writer >= 0) ::close(writer);
    ADD_FAILURE() << "node_kind blocks on a FIFO";
  }
  return result.get();
}

void expect_error(const std::function<void()>& body, ErrorKind kind, std::vector<std::string> fragments) {
  try {
    body();
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), kind) << e.what();
    for (const auto& fragment : fragments)
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << "\"" << fragment << "\" not in " << e.what();
  }
}

TEST(NodeKind, TellsEachKindApart) {
  TempDir dir;
  write_text(dir / "v3a/zarr.json", kV3Array);
  write_text(dir / "v3g/zarr.json", R"({"zarr_format": 3, "node_type": "group", "attributes": {"x": 1}})");
  write_text(dir / "v3m/zarr.json", R"({"zarr_format": 3, "node_type": "group",
                                       "attributes": {"ome": {"version": "0.5", "multiscales": [{"datasets": []}]}}})");
  write_text(dir / "v2a/.zarray", "{}");
  write_text(dir / "v2g/.zgroup", R"({"zarr_format": 2})");
  write_text(dir / "v2m/.zgroup", R"({"zarr_format": 2})");
  write_text(dir / "v2m/.zattrs", R"({"multiscales": [{"version": "0.4", "datasets": [{"path": "0"}]}], "s": NaN})");
  write_text(dir / "v2g_empty_multiscales/.zgroup", R"({"zarr_format": 2})");
  write_text(dir / "v2g_empty_multiscales/.zattrs", R"({"multiscales": []})");
  write_text(dir / "both/.zarray", "{}");
  write_text(dir / "both/.zgroup", R"({"zarr_format": 2})");
  fs::create_directories(dir / "empty");
  EXPECT_EQ(node_kind(dir / "v3a"), NodeKind::array_v3);
  EXPECT_EQ(node_kind(dir / "v3g"), NodeKind::group_v3);
  EXPECT_EQ(node_kind(dir / "v3m"), NodeKind::multiscale_v3);
  EXPECT_EQ(node_kind(dir / "v2a"), NodeKind::array_v2);
  EXPECT_EQ(node_kind(dir / "v2g"), NodeKind::group_v2);
  EXPECT_EQ(node_kind(dir / "v2m"), NodeKind::multiscale_v2);
  EXPECT_EQ(node_kind(dir / "v2g_empty_multiscales"), NodeKind::group_v2);
  EXPECT_EQ(node_kind(dir / "both"), NodeKind::array_v2);
  EXPECT_EQ(node_kind(dir / "empty"), NodeKind::none);
  EXPECT_TRUE(is_array(NodeKind::array_v2) && is_array(NodeKind::array_v3) && !is_array(NodeKind::group_v3));
  EXPECT_TRUE(is_group(NodeKind::multiscale_v2) && is_group(NodeKind::group_v2) && !is_group(NodeKind::none));
  EXPECT_EQ(to_string(NodeKind::multiscale_v3), "OME-Zarr multiscale image (v3)");
}

TEST(NodeKind, BadFoldersAndDocumentsAreErrorsNamingTheFile) {
  TempDir dir;
  expect_error([&] { node_kind(dir / "missing"); }, ErrorKind::io, {"missing", "cannot open folder"});
  write_text(dir / "file", "x");
  expect_error([&] { node_kind(dir / "file"); }, ErrorKind::io, {"file"});
  write_text(dir / "broken/zarr.json", R"({"zarr_format": 3, "node_type": )");
  expect_error([&] { node_kind(dir / "broken"); }, ErrorKind::invalid_metadata, {"broken/zarr.json", "not valid JSON"});
  write_text(dir / "typeless/zarr.json", R"({"zarr_format": 3})");
  expect_error([&] { node_kind(dir / "typeless"); }, ErrorKind::invalid_metadata, {"typeless/zarr.json", "node_type"});
  write_text(dir / "odd/zarr.json", R"({"zarr_format": 3, "node_type": "table\n"})");
  expect_error([&] { node_kind(dir / "odd"); }, ErrorKind::invalid_metadata, {"odd/zarr.json", R"("table\n")"});
  fs::create_directories(dir / "folder/zarr.json");
  expect_error([&] { node_kind(dir / "folder"); }, ErrorKind::corrupt_data, {"folder/zarr.json", "regular file"});
}

TEST(NodeKind, AFifoNamedLikeMetadataDoesNotBlock) {
  for (const char* name : {"zarr.json", ".zarray", ".zgroup"}) {
    SCOPED_TRACE(name);
    TempDir dir;
    fs::create_directories(dir / "a");
    if (std::string_view(name) != ".zgroup") write_text(dir / "a/.zgroup", R"({"zarr_format": 2})");
    ASSERT_EQ(::mkfifo((dir / "a" / name).c_str(), 0600), 0);
    try {
      node_kind_within_seconds(dir / "a", dir / "a" / name);
      ADD_FAILURE() << "a FIFO was taken for metadata";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::corrupt_data) << e.what();
      EXPECT_NE(std::string(e.what()).find(std::string("a/") + name), std::string::npos) << e.what();
    }
  }
  // .zattrs is read only for a group: a FIFO there must not block either.
  TempDir dir;
  write_text(dir / "g/.zgroup", R"({"zarr_format": 2})");
  ASSERT_EQ(::mkfifo((dir / "g/.zattrs").c_str(), 0600), 0);
  expect_error([&] { node_kind_within_seconds(dir / "g", dir / "g/.zattrs"); }, ErrorKind::corrupt_data, {"g/.zattrs"});
}

TEST(NodeKind, MetadataLinkedFromOutsideTheFolderIsRefusedNamingTheFile) {
  TempDir dir;
  write_text(dir / "outside.json", kV3Array);
  fs::create_directories(dir / "a");
  fs::create_symlink(dir / "outside.json", dir / "a/zarr.json");
  expect_error([&] { node_kind(dir / "a"); }, ErrorKind::invalid_argument, {"a/zarr.json", "resolves outside"});
  fs::create_directories(dir / "b");
  fs::create_symlink("../outside.json", dir / "b/.zarray");
  expect_error([&] { node_kind(dir / "b"); }, ErrorKind::invalid_argument, {"b/.zarray", "resolves outside"});
  // A link that stays inside the folder is followed.
  write_text(dir / "c/real.json", kV3Array);
  fs::create_symlink("real.json", dir / "c/zarr.json");
  EXPECT_EQ(node_kind(dir / "c"), NodeKind::array_v3);
}

TEST(NodeKind, OversizedMetadataIsRefusedBeforeItIsRead) {
  TempDir dir;
  fs::create_directories(dir / "a");
  {
    // Sparse: 1 GiB of size, no data written; refused from its size alone.
    std::ofstream out(dir / "a/zarr.json");
  }
  fs::resize_file(dir / "a/zarr.json", std::uintmax_t{1} << 30);
  expect_error([&] { node_kind(dir / "a"); }, ErrorKind::corrupt_data, {"a/zarr.json", "1073741824 bytes"});
}

}  // namespace
}  // namespace zarrdirect

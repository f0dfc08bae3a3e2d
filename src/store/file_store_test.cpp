#include "store/file_store.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <future>

#include "test_support.hpp"
#include "zarrdirect/error.hpp"

namespace zarrdirect {
namespace {

namespace fs = std::filesystem;

std::string refusal(std::string_view key) {
  try {
    FileStore::check_key(key);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::invalid_argument) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "key accepted: " << key;
  return {};
}

TEST(FileStore, KeysThatWouldLeaveTheFolderAreRefused) {
  EXPECT_NE(refusal("..").find("leave"), std::string::npos);
  refusal("../x");
  refusal("c/../../x");
  refusal("c/..");
  refusal("./c");
  refusal("c/./0");
  EXPECT_NE(refusal("/etc/passwd").find("absolute"), std::string::npos);
  EXPECT_NE(refusal(std::string_view("c/0\0/x", 6)).find("NUL"), std::string::npos);
  EXPECT_NE(refusal(std::string_view("c/0\0/x", 6)).find("\\x00"), std::string::npos);  // printable
  EXPECT_NE(refusal("c\\..\\x").find("backslash"), std::string::npos);
  EXPECT_NE(refusal("").find("empty"), std::string::npos);
  refusal("c//0");
  refusal("c/0/");
  refusal("/");
  for (std::string_view ok : {"c", "c/0/1", "0.0", "...", "..a", "a..", ".zarray", "c/.0"})
    EXPECT_NO_THROW(FileStore::check_key(ok)) << ok;
}

TEST(FileStore, OpenReadsAndMissingIsNullopt) {
  test::TempDir dir;
  test::write_text(dir / "c/0/1", "hello");
  FileStore store(dir.path());
  EXPECT_EQ(store.root(), dir.path());
  auto file = store.open("c/0/1");
  ASSERT_TRUE(file);
  EXPECT_EQ(file->size(), 5u);
  EXPECT_NE(file->path().find("c/0/1"), std::string::npos);
  std::vector<std::byte> buffer(16);
  EXPECT_EQ(file->read_all(buffer), 5u);
  EXPECT_EQ(static_cast<char>(buffer[0]), 'h');
  std::vector<std::byte> part(3);
  file->read_exact(2, part);
  EXPECT_EQ(static_cast<char>(part[0]), 'l');
  EXPECT_EQ(static_cast<char>(part[2]), 'o');
  EXPECT_FALSE(store.open("c/0/2"));
  EXPECT_FALSE(store.open("c/9/9"));
  EXPECT_FALSE(store.open("c/0/1/x"));  // a file where a folder would be: ENOTDIR, missing
  EXPECT_TRUE(store.exists("c/0/1"));
  EXPECT_FALSE(store.exists("c/0/2"));
  EXPECT_EQ(store.list(""), (std::vector<std::string>{"c"}));
  EXPECT_EQ(store.list("c/0"), (std::vector<std::string>{"1"}));
  EXPECT_TRUE(store.list("nothing").empty());
  EXPECT_THROW(store.open("../x"), Error);
  auto usage = store.usage();
  EXPECT_EQ(usage.files, 1u);
  EXPECT_EQ(usage.bytes, 5u);
}

TEST(FileStore, ReadingPastTheEndIsCorruptDataNamingTheFile) {
  test::TempDir dir;
  test::write_text(dir / "k", "12345");
  FileStore store(dir.path());
  auto file = store.open("k");
  std::vector<std::byte> buffer(4);
  try {
    file->read_exact(3, buffer);
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::corrupt_data);
    EXPECT_NE(std::string(e.what()).find((dir / "k").string()), std::string::npos) << e.what();
  }
  std::vector<std::byte> small(4);
  EXPECT_THROW(file->read_all(small), Error);  // 5 bytes do not fit in 4
}

TEST(FileStore, ReadRefusesValuesOverTheLimit) {
  test::TempDir dir;
  test::write_text(dir / "k", "12345");
  FileStore store(dir.path());
  EXPECT_EQ(store.read("k", 5)->size(), 5u);
  EXPECT_FALSE(store.read("missing", 5));
  try {
    store.read("k", 4);
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::corrupt_data);
    EXPECT_NE(std::string(e.what()).find("k"), std::string::npos);
  }
}

TEST(FileStore, SymlinksOutOfTheFolderAreRefused) {
  test::TempDir dir;
  test::write_text(dir / "outside/secret", "secret");
  test::write_text(dir / "array/inside", "fine");
  fs::create_directories(dir / "array/c");
  fs::create_symlink(dir / "outside/secret", dir / "array/c/absolute");
  fs::create_symlink("../../outside/secret", dir / "array/c/relative");
  fs::create_directory_symlink(dir / "outside", dir / "array/d");
  fs::create_symlink("../inside", dir / "array/c/within");
  FileStore store(dir / "array");
  for (const char* key : {"c/absolute", "c/relative", "d/secret"}) {
    try {
      store.open(key);
      ADD_FAILURE() << key << " opened";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::invalid_argument) << e.what();
      EXPECT_NE(std::string(e.what()).find(key), std::string::npos) << e.what();
    }
  }
  // A link that stays inside the folder is followed.
  auto file = store.open("c/within");
  ASSERT_TRUE(file);
  EXPECT_EQ(file->size(), 4u);

  // exists() and list() do not look through links out of the folder either: what lies outside
  // is neither reported nor listed.
  EXPECT_TRUE(store.exists("c/within"));
  EXPECT_TRUE(store.exists("inside"));
  for (const char* key : {"c/absolute", "c/relative", "d", "d/secret"}) EXPECT_FALSE(store.exists(key)) << key;
  EXPECT_TRUE(store.list("d").empty());
  EXPECT_EQ(store.list("c"), (std::vector<std::string>{"absolute", "relative", "within"}));
}

TEST(FileStore, ADirectoryWhereAFileShouldBeIsAnError) {
  test::TempDir dir;
  fs::create_directories(dir / "c/0/0");
  FileStore store(dir.path());
  try {
    store.open("c/0/0");
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::corrupt_data);
    EXPECT_NE(std::string(e.what()).find("c/0/0"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("regular file"), std::string::npos) << e.what();
  }
}

TEST(FileStore, AFifoWhereAChunkShouldBeDoesNotHang) {
  test::TempDir dir;
  fs::create_directories(dir / "c/0");
  ASSERT_EQ(::mkfifo((dir / "c/0/0").c_str(), 0600), 0);
  FileStore store(dir.path());
  // Opening a FIFO for reading blocks until a writer comes: the store must not wait for one.
  auto result = std::async(std::launch::async, [&] {
    try {
      store.open("c/0/0");
    } catch (const Error& e) {
      return e.kind();
    }
    return ErrorKind::cuda;
  });
  if (result.wait_for(std::chrono::seconds(10)) != std::future_status::ready) {
    // Release the blocked open with a writer, so the test fails instead of hanging.
    int writer = ::open((dir / "c/0/0").c_str(), O_WRONLY | O_NONBLOCK);
    result.wait();
    if (writer >= 0) ::close(writer);
    FAIL() << "open of a FIFO hangs until a writer comes";
  }
  EXPECT_EQ(result.get(), ErrorKind::corrupt_data);
}

TEST(FileStore, RootMustBeAReadableFolder) {
  test::TempDir dir;
  test::write_text(dir / "file", "x");
  EXPECT_THROW(FileStore(dir / "file"), Error);
  EXPECT_THROW(FileStore(dir / "missing"), Error);
}

TEST(FileStore, MovedFilesKeepOneOwner) {
  test::TempDir dir;
  test::write_text(dir / "a", "aa");
  test::write_text(dir / "b", "bbb");
  FileStore store(dir.path());
  auto a = store.open("a");
  auto b = store.open("b");
  StoreFile moved = std::move(*a);
  EXPECT_EQ(moved.size(), 2u);
  moved = std::move(*b);
  EXPECT_EQ(moved.size(), 3u);
  std::vector<std::byte> buffer(3);
  EXPECT_EQ(moved.read_all(buffer), 3u);
}

}  // namespace
}  // namespace zarrdirect

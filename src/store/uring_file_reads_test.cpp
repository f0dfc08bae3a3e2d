// The io_uring batch reader against real files: contents, missing files, and everything it must
// leave to the ordinary path (wrong size, not a regular file, a link out of the folder); and the
// refusal a container gives (forced here), which makes it unusable rather than failing.
#include "store/uring_file_reads.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <vector>

#include "test_support.hpp"
#include "zarrdirect/error.hpp"

namespace zarrdirect {
namespace {

namespace fs = std::filesystem;

#define REQUIRE_URING() \
  if (!uring_support().usable) GTEST_SKIP() << "io_uring unusable here: " << uring_support().reason

void write_file(const fs::path& path, std::size_t size, int seed) {
  fs::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary);
  for (std::size_t i = 0; i < size; ++i) out.put(static_cast<char>((i * 7 + static_cast<std::size_t>(seed)) & 0xff));
}

std::vector<std::byte> expected(std::size_t size, int seed) {
  std::vector<std::byte> bytes(size);
  for (std::size_t i = 0; i < size; ++i) bytes[i] = static_cast<std::byte>((i * 7 + static_cast<std::size_t>(seed)) & 0xff);
  return bytes;
}

struct Folder {
  test::TempDir dir;
  int fd = -1;
  Folder() { fd = ::open(dir.path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); }
  ~Folder() { ::close(fd); }
};

TEST(UringFileReads, ReadsEveryFileOfABatch) {
  REQUIRE_URING();
  Folder folder;
  constexpr std::size_t kSize = 5000;
  std::vector<std::string> names;
  for (int i = 0; i < 40; ++i) {
    names.push_back("c/0/" + std::to_string(i));
    write_file(folder.dir.path() / names.back(), kSize, i);
  }
  auto reader = UringFileReader::create(40);
  ASSERT_NE(reader, nullptr);
  std::vector<std::vector<std::byte>> buffers(40, std::vector<std::byte>(kSize));
  std::vector<UringFileRead> files;
  for (int i = 0; i < 40; ++i) files.push_back({names[i].c_str(), buffers[i]});
  // Twice: the descriptor slots are free again after a batch.
  for (int round = 0; round < 2; ++round) {
    reader->read_files(folder.fd, files);
    for (int i = 0; i < 40; ++i) {
      EXPECT_EQ(files[i].outcome, UringFileRead::Outcome::read) << names[i];
      EXPECT_EQ(buffers[i], expected(kSize, i)) << names[i];
    }
  }
}

TEST(UringFileReads, MissingFilesAndFoldersAreMissing) {
  REQUIRE_URING();
  Folder folder;
  write_file(folder.dir.path() / "a", 10, 1);
  auto reader = UringFileReader::create(4);
  ASSERT_NE(reader, nullptr);
  std::vector<std::byte> a(10), b(10), c(10);
  std::vector<UringFileRead> files{{"a", a}, {"b", b}, {"no/such/folder", c}};
  reader->read_files(folder.fd, files);
  EXPECT_EQ(files[0].outcome, UringFileRead::Outcome::read);
  EXPECT_EQ(a, expected(10, 1));
  EXPECT_EQ(files[1].outcome, UringFileRead::Outcome::missing);
  EXPECT_EQ(files[2].outcome, UringFileRead::Outcome::missing);
}

TEST(UringFileReads, AnythingButAPlainFileOfTheRightSizeIsLeftToTheOrdinaryPath) {
  REQUIRE_URING();
  Folder folder;
  const fs::path root = folder.dir.path();
  write_file(root / "short", 9, 0);
  write_file(root / "long", 11, 0);
  fs::create_directories(root / "folder");
  ASSERT_EQ(::mkfifo((root / "fifo").c_str(), 0600), 0);
  test::TempDir outside;
  write_file(outside.path() / "secret", 10, 3);
  fs::create_symlink(outside.path() / "secret", root / "link_out");
  auto reader = UringFileReader::create(8);
  ASSERT_NE(reader, nullptr);
  std::vector<std::vector<std::byte>> buffers(5, std::vector<std::byte>(10, std::byte{0x5a}));
  std::vector<UringFileRead> files{{"short", buffers[0]}, {"long", buffers[1]}, {"folder", buffers[2]},
                                   {"fifo", buffers[3]},  {"link_out", buffers[4]}};
  reader->read_files(folder.fd, files);  // returns: the FIFO is never opened for reading
  for (std::size_t i = 0; i < files.size(); ++i) EXPECT_EQ(files[i].outcome, UringFileRead::Outcome::retry) << files[i].path;
  // The link out of the folder: opened beneath the folder, so nothing of it is read.
  EXPECT_EQ(buffers[4], std::vector<std::byte>(10, std::byte{0x5a}));
}

TEST(UringFileReads, ABatchLargerThanTheRingIsRefused) {
  REQUIRE_URING();
  Folder folder;
  auto reader = UringFileReader::create(2);
  ASSERT_NE(reader, nullptr);
  std::vector<std::byte> buffer(1);
  std::vector<UringFileRead> files(3, UringFileRead{"x", buffer});
  EXPECT_THROW(reader->read_files(folder.fd, files), Error);
}

// A container's seccomp profile makes io_uring_queue_init fail with EPERM (or ENOSYS): forced
// here through the same call. io_uring is then unusable, with the reason, and no reader is made.
TEST(UringFileReads, ARefusedRingMakesItUnusableWithTheReason) {
  if (uring_support().reason == "built without liburing") GTEST_SKIP() << "built without liburing";
  for (int error : {EPERM, ENOSYS}) {
    refuse_uring_for_testing(error);
    const UringSupport support = uring_support();
    EXPECT_FALSE(support.usable);
    EXPECT_NE(support.reason.find(error == EPERM ? "EPERM" : "ENOSYS"), std::string::npos) << support.reason;
    EXPECT_EQ(UringFileReader::create(8), nullptr);
  }
  refuse_uring_for_testing(0);
}

}  // namespace
}  // namespace zarrdirect

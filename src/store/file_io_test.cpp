// I/O faults through the FileIo seam: short reads, EINTR, EIO, files that shrink mid-read, and
// requests over 1 GiB, without a real fault or a real big file.
#include "store/file_io.hpp"

#include <gtest/gtest.h>

#include <sys/mman.h>

#include <cerrno>
#include <cstring>
#include <deque>
#include <numeric>

#include "store/file_store.hpp"
#include "test_support.hpp"
#include "zarrdirect/error.hpp"

namespace zarrdirect {
namespace {

// Real opens, fstat and close; pread follows a script of faults, then behaves.
class FaultyFileIo final : public FileIo {
 public:
  enum class Fault { none, eintr, eio, short_read, end_of_file };

  std::deque<Fault> script;
  std::size_t short_read_bytes = 1;
  std::vector<std::size_t> requests;  // the count of every pread call
  std::size_t calls = 0;

  int open_beneath(int dir_fd, const char* path, int flags) override {
    return system_file_io().open_beneath(dir_fd, path, flags);
  }
  int fstat(int fd, struct stat* info) override { return system_file_io().fstat(fd, info); }
  int close(int fd) override { return system_file_io().close(fd); }

  ssize_t pread(int fd, void* buffer, std::size_t count, off_t offset) override {
    ++calls;
    requests.push_back(count);
    Fault fault = Fault::none;
    if (!script.empty()) {
      fault = script.front();
      script.pop_front();
    }
    switch (fault) {
      case Fault::eintr: errno = EINTR; return -1;
      case Fault::eio: errno = EIO; return -1;
      case Fault::end_of_file: return 0;
      case Fault::short_read: return system_file_io().pread(fd, buffer, std::min(count, short_read_bytes), offset);
      case Fault::none: break;
    }
    return system_file_io().pread(fd, buffer, count, offset);
  }
};

using Fault = FaultyFileIo::Fault;

class FileIoTest : public ::testing::Test {
 protected:
  void SetUp() override {
    content.resize(1000);
    std::iota(content.begin(), content.end(), std::uint8_t{0});
    test::write_bytes(dir / "c/0", content);
  }
  std::vector<std::byte> expected(std::size_t offset, std::size_t n) const {
    std::vector<std::byte> out(n);
    std::memcpy(out.data(), content.data() + offset, n);
    return out;
  }
  test::TempDir dir;
  std::vector<std::uint8_t> content;
  FaultyFileIo io;
};

TEST_F(FileIoTest, ShortReadsAreLooped) {
  FileStore store(dir.path(), io);
  auto file = store.open("c/0");
  ASSERT_TRUE(file);
  io.short_read_bytes = 7;
  io.script.assign(50, Fault::short_read);
  std::vector<std::byte> buffer(1000);
  EXPECT_EQ(file->read_all(buffer), 1000u);
  EXPECT_EQ(buffer, expected(0, 1000));
  EXPECT_EQ(io.calls, 51u);  // 50 short reads of 7, then the rest in one
}

TEST_F(FileIoTest, EintrIsRetried) {
  FileStore store(dir.path(), io);
  auto file = store.open("c/0");
  io.script = {Fault::eintr, Fault::eintr, Fault::short_read, Fault::eintr};
  std::vector<std::byte> buffer(100);
  file->read_exact(300, buffer);
  EXPECT_EQ(buffer, expected(300, 100));
  EXPECT_EQ(io.calls, 5u);
}

TEST_F(FileIoTest, EioIsAnIoErrorNamingTheFile) {
  FileStore store(dir.path(), io);
  auto file = store.open("c/0");
  io.script = {Fault::short_read, Fault::eio};
  std::vector<std::byte> buffer(1000);
  try {
    file->read_all(buffer);
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::io);
    std::string message = e.what();
    EXPECT_NE(message.find((dir / "c/0").string()), std::string::npos) << message;
    EXPECT_NE(message.find(std::strerror(EIO)), std::string::npos) << message;
    EXPECT_NE(message.find("offset 1"), std::string::npos) << message;  // after the 1-byte short read
  }
}

TEST_F(FileIoTest, AFileThatShrinksMidReadIsCorruptDataNamingTheFile) {
  FileStore store(dir.path(), io);
  auto file = store.open("c/0");
  io.short_read_bytes = 600;
  io.script = {Fault::short_read, Fault::end_of_file};
  std::vector<std::byte> buffer(1000);
  try {
    file->read_all(buffer);
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::corrupt_data);
    std::string message = e.what();
    EXPECT_NE(message.find((dir / "c/0").string()), std::string::npos) << message;
    EXPECT_NE(message.find("shrank"), std::string::npos) << message;
    EXPECT_NE(message.find("600"), std::string::npos) << message;
  }
  io.script = {Fault::end_of_file};
  std::vector<std::byte> part(10);
  try {
    file->read_exact(990, part);
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::corrupt_data);
    EXPECT_NE(std::string(e.what()).find((dir / "c/0").string()), std::string::npos) << e.what();
  }
}

TEST_F(FileIoTest, ReadFullyAtStopsAtEndOfFile) {
  FileStore store(dir.path(), io);
  auto file = store.open("c/0");
  std::vector<std::byte> buffer(100);
  EXPECT_EQ(read_fully_at(io, file->fd(), buffer, 950, "x"), 50u);
  EXPECT_EQ(std::vector<std::byte>(buffer.begin(), buffer.begin() + 50), expected(950, 50));
  EXPECT_EQ(read_fully_at(io, file->fd(), buffer, 5000, "x"), 0u);
  EXPECT_EQ(read_fully_at(io, file->fd(), std::span<std::byte>(), 0, "x"), 0u);
}

// Never touches memory: reports every request as fully read.
class RecordingFileIo final : public FileIo {
 public:
  std::vector<std::size_t> requests;
  std::vector<std::uint64_t> offsets;
  int open_beneath(int, const char*, int) override { return -1; }
  int fstat(int, struct stat*) override { return -1; }
  int close(int) override { return 0; }
  ssize_t pread(int, void*, std::size_t count, off_t offset) override {
    requests.push_back(count);
    offsets.push_back(static_cast<std::uint64_t>(offset));
    return static_cast<ssize_t>(count);
  }
};

TEST(ReadFullyAt, RequestsOverOneGibibyteAreSplit) {
  // Address space only (PROT_NONE, no memory behind it): the fake never writes.
  const std::size_t size = (std::size_t{5} << 29) + 12345;  // 2.5 GiB and a bit
  void* region = ::mmap(nullptr, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  ASSERT_NE(region, MAP_FAILED);
  RecordingFileIo io;
  std::span<std::byte> buffer(static_cast<std::byte*>(region), size);
  EXPECT_EQ(read_fully_at(io, 3, buffer, 100, "big"), size);
  ::munmap(region, size);
  const std::size_t gib = std::size_t{1} << 30;
  ASSERT_EQ(io.requests.size(), 3u);
  EXPECT_EQ(io.requests[0], gib);
  EXPECT_EQ(io.requests[1], gib);
  EXPECT_EQ(io.requests[2], size - 2 * gib);
  EXPECT_EQ(io.offsets, (std::vector<std::uint64_t>{100, 100 + gib, 100 + 2 * gib}));
}

TEST(ReadFullyAt, ErrorsOtherThanEintrAreIoErrors) {
  class Failing final : public FileIo {
   public:
    int error = EIO;
    int open_beneath(int, const char*, int) override { return -1; }
    int fstat(int, struct stat*) override { return -1; }
    int close(int) override { return 0; }
    ssize_t pread(int, void*, std::size_t, off_t) override {
      errno = error;
      return -1;
    }
  };
  std::vector<std::byte> buffer(8);
  for (int error : {EIO, EBADF, EINVAL, ENOMEM}) {
    Failing io;
    io.error = error;
    try {
      read_fully_at(io, 3, buffer, 0, "/data/c/1");
      ADD_FAILURE();
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::io);
      EXPECT_NE(std::string(e.what()).find("/data/c/1"), std::string::npos);
    }
  }
}

TEST(FileStoreIo, OpenFailuresOtherThanMissingAreIoErrors) {
  class DenyingIo final : public FileIo {
   public:
    int error = EACCES;
    int open_beneath(int, const char*, int) override {
      errno = error;
      return -1;
    }
    ssize_t pread(int, void*, std::size_t, off_t) override { return -1; }
    int fstat(int, struct stat*) override { return -1; }
    int close(int) override { return 0; }
  };
  test::TempDir dir;
  DenyingIo io;
  FileStore store(dir.path(), io);
  try {
    store.open("c/0");
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::io);
    EXPECT_NE(std::string(e.what()).find("c/0"), std::string::npos);
  }
  io.error = ENOENT;
  EXPECT_FALSE(store.open("c/0"));
  io.error = EXDEV;
  EXPECT_THROW(store.open("c/0"), Error);
}

}  // namespace
}  // namespace zarrdirect

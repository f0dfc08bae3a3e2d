#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include "store/file_store.hpp"
#include "test_support.hpp"
#include "zarrdirect/error.hpp"

namespace zarrdirect {
namespace {

namespace fs = std::filesystem;

std::span<const std::byte> bytes_of(const std::string& text) { return std::as_bytes(std::span(text)); }

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

std::vector<std::string> files_below(const fs::path& root) {
  std::vector<std::string> names;
  for (const auto& entry : fs::recursive_directory_iterator(root))
    names.push_back(fs::relative(entry.path(), root).string());
  std::sort(names.begin(), names.end());
  return names;
}

TEST(FileStoreWrite, SetCreatesFoldersAndReplacesAtomically) {
  test::TempDir dir;
  FileStore store(dir.path());
  store.set("c/0/1", bytes_of("first"));
  EXPECT_EQ(read_text(dir / "c/0/1"), "first");
  store.set("c/0/1", bytes_of("second, longer"), /*durable=*/true);
  EXPECT_EQ(read_text(dir / "c/0/1"), "second, longer");
  store.set("c/0/1", bytes_of("3"));
  EXPECT_EQ(read_text(dir / "c/0/1"), "3");
  store.set("zarr.json", bytes_of("{}"), true);
  // No lock or temporary file is left behind.
  EXPECT_EQ(files_below(dir.path()), (std::vector<std::string>{"c", "c/0", "c/0/1", "zarr.json"}));
}

TEST(FileStoreWrite, KeysAndLinksOutsideTheRootAreRefused) {
  test::TempDir dir;
  test::TempDir outside;
  fs::create_directories(dir / "array");
  fs::create_symlink(outside.path(), dir / "array/link");
  FileStore store(dir / "array");
  EXPECT_THROW(store.set("../x", bytes_of("x")), Error);
  EXPECT_THROW(store.set("/tmp/x", bytes_of("x")), Error);
  try {
    store.set("link/c/0", bytes_of("x"));
    ADD_FAILURE() << "a write through a link out of the root was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::invalid_argument) << e.what();
    EXPECT_NE(std::string(e.what()).find("array/link"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(fs::is_empty(outside.path()));
  // A link planted under a lock file's name is not followed either.
  fs::create_symlink(outside / "victim", dir / "array/k.__lock");
  EXPECT_THROW(store.set("k", bytes_of("x")), Error);
  EXPECT_FALSE(fs::exists(outside / "victim"));
}

TEST(FileStoreWrite, EraseRemovesAndToleratesMissingKeys) {
  test::TempDir dir;
  FileStore store(dir.path());
  store.set("c/0/0", bytes_of("x"));
  store.erase("c/0/0");
  EXPECT_FALSE(fs::exists(dir / "c/0/0"));
  EXPECT_NO_THROW(store.erase("c/0/0"));
  EXPECT_NO_THROW(store.erase("d/1/2", true));
  EXPECT_FALSE(fs::exists(dir / "d"));  // erasing does not create folders
  EXPECT_EQ(files_below(dir.path()), (std::vector<std::string>{"c", "c/0"}));
}

TEST(FileStoreWrite, EraseTreeStaysBeneathTheRoot) {
  test::TempDir dir;
  test::TempDir outside;
  test::write_text(outside / "keep/precious", "p");
  fs::create_directories(dir / "a");
  FileStore store(dir / "a");
  store.set("c/0/0", bytes_of("x"));
  store.set("zarr.json", bytes_of("{}"));
  fs::create_symlink(outside / "keep", dir / "a/c/link");
  fs::create_symlink(outside / "keep", dir / "a/toplink");
  store.erase_tree("c");
  EXPECT_FALSE(fs::exists(dir / "a/c"));
  EXPECT_TRUE(fs::exists(dir / "a/zarr.json"));
  store.erase_tree();
  EXPECT_TRUE(fs::is_directory(dir / "a"));
  EXPECT_TRUE(fs::is_empty(dir / "a"));
  EXPECT_EQ(read_text(outside / "keep/precious"), "p");
  EXPECT_NO_THROW(store.erase_tree("missing/key"));
}

// Fails writes after `budget` bytes with ENOSPC, or every fsync with EIO.
class FailingIo final : public FileIo {
 public:
  explicit FailingIo(std::size_t budget, bool fail_fsync = false) : budget_(budget), fail_fsync_(fail_fsync) {}
  int open_beneath(int dir_fd, const char* path, int flags) override {
    return system_file_io().open_beneath(dir_fd, path, flags);
  }
  ssize_t pread(int fd, void* buffer, std::size_t count, off_t offset) override {
    return system_file_io().pread(fd, buffer, count, offset);
  }
  int fstat(int fd, struct stat* info) override { return system_file_io().fstat(fd, info); }
  int close(int fd) override { return system_file_io().close(fd); }
  ssize_t write(int fd, const void* buffer, std::size_t count) override {
    if (budget_ == 0) {
      errno = ENOSPC;
      return -1;
    }
    std::size_t now = std::min({count, budget_, std::size_t{3}});  // short writes too
    budget_ -= now;
    return ::write(fd, buffer, now);
  }
  int fsync(int fd) override {
    if (fail_fsync_) {
      errno = EIO;
      return -1;
    }
    return ::fsync(fd);
  }

 private:
  std::size_t budget_;
  bool fail_fsync_;
};

TEST(FileStoreWrite, AFailedWriteLeavesTheOldValue) {
  test::TempDir dir;
  FileStore(dir.path()).set("c/0", bytes_of("old value"));
  FailingIo short_disk(5);
  FileStore store(dir.path(), short_disk);
  try {
    store.set("c/0", bytes_of("a new value that does not fit"));
    ADD_FAILURE() << "the write succeeded";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::io);
    EXPECT_NE(std::string(e.what()).find("No space left"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("c/0"), std::string::npos) << e.what();
  }
  EXPECT_EQ(read_text(dir / "c/0"), "old value");
  FailingIo bad_fsync(1000, true);
  FileStore durable_store(dir.path(), bad_fsync);
  EXPECT_THROW(durable_store.set("c/0", bytes_of("new"), true), Error);
  EXPECT_EQ(read_text(dir / "c/0"), "old value");
  // A short write that completes is fine.
  FailingIo small_steps(1000);
  FileStore(dir.path(), small_steps).set("c/0", bytes_of("written three bytes at a time"));
  EXPECT_EQ(read_text(dir / "c/0"), "written three bytes at a time");
  EXPECT_EQ(files_below(dir.path()), (std::vector<std::string>{"c", "c/0"}));
}

// Replacing a stored value swaps it with the lock file and then removes the old file (see
// KeyLock::exchange_with_key): the key holds the newest value, the old file goes, no lock file
// stays, and the key's inode is the one the writer wrote (not a copy).
TEST(FileStoreWrite, ReplacingAStoredValueLeavesOnlyTheNewFile) {
  test::TempDir dir;
  FileStore store(dir.path());
  store.set("c/0", bytes_of("old value"));
  for (int round = 0; round < 3; ++round) {
    auto lock = store.lock("c/0");
    struct stat written {};
    ASSERT_EQ(::stat((dir / "c/0.__lock").c_str(), &written), 0);
    lock.commit(bytes_of("value " + std::to_string(round)), round == 2);
    struct stat stored {};
    ASSERT_EQ(::stat((dir / "c/0").c_str(), &stored), 0);
    EXPECT_EQ(stored.st_ino, written.st_ino);
    EXPECT_EQ(read_text(dir / "c/0"), "value " + std::to_string(round));
    EXPECT_EQ(files_below(dir.path()), (std::vector<std::string>{"c", "c/0"}));
  }
}

// The moment between the exchange and the removal of the old file, made by hand: the lock
// file's name holds the old value, flocked by the writer that is publishing. Another writer that
// opens it must wait, then see that it is no longer the lock file, and take a fresh one.
TEST(FileStoreWrite, AWriterArrivingDuringAnExchangeWaitsAndTakesAFreshLock) {
  test::TempDir dir;
  FileStore store(dir.path());
  store.set("k", bytes_of("newest"));
  { std::ofstream(dir / "k.__lock") << "the old value"; }
  int old_file = ::open((dir / "k.__lock").c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(old_file, 0);
  ASSERT_EQ(::flock(old_file, LOCK_EX), 0);
  std::atomic<bool> done{false};
  std::thread other([&] {
    store.set("k", bytes_of("from the other writer"));
    done = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_FALSE(done.load());  // waiting on the old file's flock
  EXPECT_EQ(read_text(dir / "k"), "newest");
  ASSERT_EQ(::unlink((dir / "k.__lock").c_str()), 0);
  ::close(old_file);
  other.join();
  EXPECT_EQ(read_text(dir / "k"), "from the other writer");
  EXPECT_EQ(files_below(dir.path()), (std::vector<std::string>{"k"}));
}

// Read-modify-write of one counter key: every increment must land.
void increment(const FileStore& store, int times) {
  for (int i = 0; i < times; ++i) {
    auto lock = store.lock("n/counter");
    auto old = store.read("n/counter", 64);
    long value = old ? std::stol(std::string(reinterpret_cast<const char*>(old->data()), old->size())) : 0;
    lock.commit(bytes_of(std::to_string(value + 1)), false);
  }
}

TEST(FileStoreWrite, LockedReadModifyWriteLosesNothingAcrossThreadsAndProcesses) {
  test::TempDir dir;
  FileStore store(dir.path());
  constexpr int kThreads = 4, kProcesses = 3, kTimes = 40;
  std::vector<pid_t> children;
  for (int p = 0; p < kProcesses; ++p) {
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      int status = 0;
      try {
        FileStore own(dir.path());
        increment(own, kTimes);
      } catch (...) {
        status = 1;
      }
      ::_exit(status);
    }
    children.push_back(pid);
  }
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) threads.emplace_back([&] { increment(store, kTimes); });
  for (auto& thread : threads) thread.join();
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  EXPECT_EQ(read_text(dir / "n/counter"), std::to_string((kThreads + kProcesses) * kTimes));
  EXPECT_EQ(files_below(dir.path()), (std::vector<std::string>{"n", "n/counter"}));
}

TEST(FileStoreWrite, AnAbandonedLockKeepsTheOldValueAndFreesTheKey) {
  test::TempDir dir;
  FileStore store(dir.path());
  store.set("k", bytes_of("old"));
  { auto lock = store.lock("k"); }
  EXPECT_EQ(read_text(dir / "k"), "old");
  // A stale lock file from a crashed writer (holding no lock) is taken over.
  test::write_text(dir / "j.__lock", "half-written garbage");
  store.set("j", bytes_of("v"));
  EXPECT_EQ(read_text(dir / "j"), "v");
  EXPECT_EQ(files_below(dir.path()), (std::vector<std::string>{"j", "k"}));
}

TEST(FileStoreWrite, AFolderCacheOpensEachFolderOnceAndStaysBeneathTheRoot) {
  test::TempDir dir;
  test::TempDir outside;
  FileStore store(dir.path());
  FolderCache folders;
  // More folders than the cache holds: it starts over and every value still lands.
  const std::size_t count = FolderCache::kMaxFolders + 20;
  for (std::size_t i = 0; i < count; ++i) {
    auto lock = store.lock("c/" + std::to_string(i % 7) + "/" + std::to_string(i) + "/k", false, &folders);
    lock.commit(bytes_of("value " + std::to_string(i)), false);
  }
  for (std::size_t i = 0; i < count; ++i)
    EXPECT_EQ(read_text(dir / "c" / std::to_string(i % 7) / std::to_string(i) / "k"), "value " + std::to_string(i));
  auto lock = store.lock("k0", false, &folders);  // a key at the root, through the cache too
  lock.commit(bytes_of("root"), false);
  EXPECT_EQ(read_text(dir / "k0"), "root");

  // A link planted where a folder the cache has not seen would go is refused, as without a cache.
  fs::create_symlink(outside.path(), dir / "c/link");
  EXPECT_THROW(store.lock("c/link/x", false, &folders), Error);
  EXPECT_TRUE(fs::is_empty(outside.path()));
}

TEST(FileStoreWrite, AValueWrittenInPiecesWithSeeksAndCopies) {
  test::TempDir dir;
  FileStore store(dir.path());
  store.set("old", bytes_of("0123456789"));
  auto old = store.open("old");
  ASSERT_TRUE(old);
  {
    auto lock = store.lock("shard/0");
    lock.seek(4);  // room for a header written last
    lock.write(bytes_of("body"));
    lock.copy_from(*old, 3, 4);
    lock.seek(0);
    lock.write(bytes_of("HEAD"));
    EXPECT_EQ(read_text(dir / "shard/0.__lock"), "HEADbody3456");
    EXPECT_FALSE(fs::exists(dir / "shard/0"));  // nothing visible before publish()
    lock.publish(false);
  }
  EXPECT_EQ(read_text(dir / "shard/0"), "HEADbody3456");
  EXPECT_EQ(files_below(dir.path()), (std::vector<std::string>{"old", "shard", "shard/0"}));

  // Copying past the end of the source is corrupt data naming it; the key keeps its value.
  {
    auto lock = store.lock("shard/0");
    try {
      lock.copy_from(*old, 8, 5);
      FAIL() << "copy past the end accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::corrupt_data);
      EXPECT_NE(std::string(e.what()).find("old"), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(read_text(dir / "shard/0"), "HEADbody3456");
}

TEST(FileStoreWrite, ALockFileLeftWithBytesStartsTheNewValueEmpty) {
  test::TempDir dir;
  FileStore store(dir.path());
  { std::ofstream(dir / "k.__lock") << "stale bytes of a crashed writer"; }
  store.set("k", bytes_of("ab"));
  EXPECT_EQ(read_text(dir / "k"), "ab");
  { std::ofstream(dir / "k.__lock") << "stale again"; }
  auto lock = store.lock("k");
  lock.write(bytes_of("xyz"));
  lock.publish(false);
  EXPECT_EQ(read_text(dir / "k"), "xyz");
}

}  // namespace
}  // namespace zarrdirect

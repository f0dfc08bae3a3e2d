#include "util/output_file.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <functional>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "test_support.hpp"
#include "zarrdirect/error.hpp"
#include "zarrdirect/npy.hpp"

namespace zarrdirect {
namespace {

namespace fs = std::filesystem;

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::span<const std::byte> bytes_of(const std::string& text) { return std::as_bytes(std::span(text)); }

// Names in `folder`, to see that no temporary is left behind.
std::vector<std::string> names_in(const fs::path& folder) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(folder)) names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

void expect_io_error(const std::function<void()>& action, std::initializer_list<std::string_view> fragments) {
  try {
    action();
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::io) << e.what();
    for (auto fragment : fragments) EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST(OutputFile, ReplacesTheTargetOnlyAtCommit) {
  test::TempDir dir;
  test::write_text(dir / "out", "old contents");
  {
    OutputFile out(dir / "out");
    EXPECT_FALSE(out.direct());
    out.write(bytes_of("new "));
    out.write(bytes_of("contents"));
    EXPECT_EQ(read_text(dir / "out"), "old contents");  // not yet
    out.commit();
  }
  EXPECT_EQ(read_text(dir / "out"), "new contents");
  EXPECT_EQ(names_in(dir.path()), std::vector<std::string>{"out"});
}

TEST(OutputFile, WithoutCommitNothingChangesAndNoTemporaryRemains) {
  test::TempDir dir;
  test::write_text(dir / "out", "old contents");
  {
    OutputFile out(dir / "out");
    out.write(bytes_of("half"));
  }
  EXPECT_EQ(read_text(dir / "out"), "old contents");
  {
    OutputFile fresh(dir / "new");
    fresh.write(bytes_of("half"));
  }
  EXPECT_EQ(names_in(dir.path()), std::vector<std::string>{"out"});
}

TEST(OutputFile, KeepsTheTargetsPermissionsAndFollowsLinks) {
  test::TempDir dir;
  test::write_text(dir / "real", "old");
  fs::permissions(dir / "real", fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
  fs::create_symlink("real", dir / "link");
  OutputFile out(dir / "link");
  out.write(bytes_of("new"));
  out.commit();
  EXPECT_TRUE(fs::is_symlink(dir / "link"));
  EXPECT_EQ(read_text(dir / "real"), "new");
  EXPECT_EQ(fs::status(dir / "real").permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
}

TEST(OutputFile, AFullDeviceIsAnErrorWithTheReason) {
  if (!fs::exists("/dev/full")) GTEST_SKIP() << "no /dev/full";
  // Small writes to /dev/full fail at write(); the error names the target and says why.
  expect_io_error(
      [] {
        OutputFile out("/dev/full");
        EXPECT_TRUE(out.direct());
        out.write(bytes_of("x"));
        out.commit();
      },
      {"/dev/full", "No space left on device"});
}

TEST(OutputFile, FoldersAndMissingFoldersAreErrors) {
  test::TempDir dir;
  expect_io_error([&] { OutputFile out(dir.path()); }, {dir.path().string(), "Is a directory"});
  expect_io_error([&] { OutputFile out(dir / "no/such/file"); }, {"no/such/file", "No such file or directory"});
}

TEST(OutputFile, WritesAFifoDirectly) {
  test::TempDir dir;
  ASSERT_EQ(::mkfifo((dir / "pipe").c_str(), 0600), 0);
  std::string received;
  std::thread reader([&] { received = read_text(dir / "pipe"); });
  {
    OutputFile out(dir / "pipe");
    EXPECT_TRUE(out.direct());
    out.write(bytes_of("through the pipe"));
    out.commit();
  }
  reader.join();
  EXPECT_EQ(received, "through the pipe");
}

// Under a file-size limit (RLIMIT_FSIZE) of 16 KiB, writes 100 kB over dir/out.npy, which holds
// "previous output"; exits 0 when that fails saying why, leaving the file and no temporary.
[[noreturn]] void write_npy_past_a_size_limit(const fs::path& dir) {
  std::signal(SIGXFSZ, SIG_IGN);  // the write then fails with EFBIG instead of killing us
  rlimit limit{16384, 16384};
  ::setrlimit(RLIMIT_FSIZE, &limit);
  std::vector<std::byte> data(100000, std::byte{7});
  std::vector<std::uint64_t> shape{100000};
  try {
    write_npy(dir / "out.npy", {ScalarKind::unsigned_int, 1}, shape, data);
  } catch (const Error& e) {
    const bool says_why = std::string(e.what()).find("File too large") != std::string::npos;
    const bool untouched = read_text(dir / "out.npy") == "previous output";
    const bool clean = names_in(dir) == std::vector<std::string>{"out.npy"};
    std::_Exit(says_why && untouched && clean ? 0 : 3);
  }
  std::_Exit(4);  // the limit did not stop it
}

// A size limit stops the write part way, as a full disk does. In a child: the limit is per process.
TEST(OutputFileDeathTest, ASizeLimitLeavesTheTargetUntouched) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  test::TempDir dir;
  test::write_text(dir / "out.npy", "previous output");
  EXPECT_EXIT(write_npy_past_a_size_limit(dir.path()), ::testing::ExitedWithCode(0), "");
  EXPECT_EQ(read_text(dir / "out.npy"), "previous output");
}

}  // namespace
}  // namespace zarrdirect

// Array::read_async / read_many_async / read_many_into_async: results equal to the synchronous reads, errors carried
// to get(), cancellation before and during a read, a prefetcher beside the main thread.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <thread>

#include <sys/wait.h>
#include <unistd.h>

#include "test_support.hpp"
#include "zarrdirect/array.hpp"

namespace zarrdirect {
namespace {

using nlohmann::json;

Array make(const test::TempDir& dir, std::vector<std::uint64_t> shape, std::vector<std::uint64_t> chunks) {
  json doc = {{"zarr_format", 3},
              {"node_type", "array"},
              {"shape", shape},
              {"data_type", "uint16"},
              {"chunk_grid", {{"name", "regular"}, {"configuration", {{"chunk_shape", chunks}}}}},
              {"chunk_key_encoding", {{"name", "default"}}},
              {"fill_value", 0},
              {"codecs", json::array({{{"name", "bytes"}, {"configuration", {{"endian", "little"}}}},
                                      {{"name", "zstd"}, {"configuration", {{"level", 1}, {"checksum", false}}}}})}};
  Array array = Array::create(dir / "a", doc);
  std::uint64_t n = 1;
  for (auto e : shape) n *= e;
  std::vector<std::uint16_t> data(n);
  for (std::size_t i = 0; i < n; ++i) data[i] = static_cast<std::uint16_t>(i * 7);
  array.write({}, Source{data.data(), {}, Device::cpu, nullptr, {}, {}});
  return array;
}

std::vector<std::byte> bytes_of(const NDArray& array) {
  const auto* p = static_cast<const std::byte*>(array.data());
  return {p, p + array.nbytes()};
}

TEST(ReadAsync, ResultsEqualSynchronousReads) {
  test::TempDir dir;
  Array array = make(dir, {40, 40}, {8, 8});
  Region a{{1, 30}, {2, 9}}, b{{10, 20}, {10, 20}}, c{{30, 40}, {0, 10}};
  ReadHandle one = array.read_async(a);
  ReadHandle many = array.read_many_async({a, b});
  ReadHandle stacked = array.read_many_async({b, c}, Device::cpu, true);
  auto one_result = one.get();
  ASSERT_EQ(one_result.size(), 1u);
  EXPECT_EQ(bytes_of(one_result[0]), bytes_of(array.read(a)));
  auto many_result = many.get();
  ASSERT_EQ(many_result.size(), 2u);
  EXPECT_EQ(bytes_of(many_result[1]), bytes_of(array.read(b)));
  auto batch = stacked.get();
  ASSERT_EQ(batch.size(), 1u);
  EXPECT_EQ(batch[0].shape(), (std::vector<std::uint64_t>{2, 10, 10}));
  EXPECT_TRUE(one.done());
  EXPECT_TRUE(one.wait_for(std::chrono::seconds(0)));
  EXPECT_FALSE(one.cancel());  // finished: keeps its result
  EXPECT_EQ(one.get().size(), 1u);
}

TEST(ReadAsync, IntoTheCallersMemory) {
  test::TempDir dir;
  Array array = make(dir, {40, 40}, {8, 8});
  Region a{{1, 30}, {2, 9}}, b{{10, 20}, {10, 20}};
  std::vector<std::uint16_t> first(29 * 7, 0xFFFF), second(10 * 10, 0xFFFF);
  // The second region lands in a column block of a wider buffer: strides are honoured.
  std::vector<std::uint16_t> wide(10 * 16, 0xFFFF);
  ReadHandle handle = array.read_many_into_async(
      {a, b}, {Destination{first.data(), {}, Device::cpu, nullptr},
               Destination{wide.data() + 3, {16 * 2, 2}, Device::cpu, nullptr}});
  EXPECT_TRUE(handle.get().empty());  // nothing allocated: the data is in the caller's buffers
  const ReadStats stats = handle.stats();
  EXPECT_EQ(stats.bytes_out, (29u * 7 + 10 * 10) * 2);
  EXPECT_GT(stats.chunks_total, 0u);
  const auto expected_a = bytes_of(array.read(a));
  EXPECT_EQ(std::memcmp(first.data(), expected_a.data(), expected_a.size()), 0);
  const auto expected_b = array.read(b);
  const auto* rows = static_cast<const std::uint16_t*>(expected_b.data());
  for (std::size_t y = 0; y < 10; ++y) {
    for (std::size_t x = 0; x < 16; ++x) {
      const bool inside = x >= 3 && x < 13;
      EXPECT_EQ(wide[y * 16 + x], inside ? rows[y * 10 + x - 3] : 0xFFFF) << y << "," << x;
    }
  }
  // Regions are checked at once; so is the count of destinations.
  EXPECT_THROW(array.read_many_into_async({{{0, 41}, {0, 1}}}, {Destination{first.data(), {}, Device::cpu, nullptr}}),
               Error);
  EXPECT_THROW(array.read_many_into_async({a, b}, {Destination{first.data(), {}, Device::cpu, nullptr}}), Error);
  // A destination the read refuses fails out of get() and stats(), naming the destination.
  ReadHandle refused = array.read_many_into_async({a}, {Destination{nullptr, {}, Device::cpu, nullptr}});
  try {
    refused.stats();
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("destination 0"), std::string::npos) << e.what();
  }
}

TEST(ReadAsync, ErrorsComeOutOfGet) {
  test::TempDir dir;
  Array array = make(dir, {16, 16}, {8, 8});
  EXPECT_THROW(array.read_async({{0, 17}, {0, 1}}), Error);  // a bad region fails at once
  test::write_text(dir / "a" / "c" / "0" / "0", "garbage");
  ReadHandle broken = array.read_many_async({{{0, 2}, {0, 2}}});
  try {
    broken.get();
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("c/0/0"), std::string::npos) << e.what();
  }
}

TEST(ReadAsync, CancelStopsTheRead) {
  test::TempDir dir;
  Array array = make(dir, {64, 64}, {4, 4});  // 256 chunks
  std::atomic<bool> release{false};
  std::atomic<std::size_t> seen{0};
  Settings slow;
  slow.threads = 1;
  // The progress callback holds the read after its first chunk until the test has cancelled.
  slow.progress = [&](std::size_t done, std::size_t) {
    seen = done;
    while (!release) std::this_thread::yield();
    return true;
  };
  ReadHandle running = array.read_many_async({{}}, Device::cpu, false, slow);
  while (seen == 0) std::this_thread::yield();
  EXPECT_TRUE(running.cancel());
  release = true;
  try {
    running.get();
    FAIL() << "not cancelled";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::cancelled);
  }
  EXPECT_LT(seen.load(), 256u);  // stopped early
}

TEST(ReadAsync, PrefetcherBesideTheMainThread) {
  test::TempDir dir;
  Array array = make(dir, {48, 48}, {8, 8});
  array.set_cache_bytes(1 << 20);
  const auto whole = bytes_of(array.read({}, Device::cpu, Settings{}));
  std::vector<ReadHandle> pending;
  for (std::uint64_t i = 0; i < 12; ++i) pending.push_back(array.read_many_async({{{i, i + 20}, {i, i + 9}}}, Device::cpu, true));
  // The main thread reads through the same handle meanwhile.
  for (int round = 0; round < 10; ++round) EXPECT_EQ(bytes_of(array.read()), whole);
  for (std::uint64_t i = 0; i < pending.size(); ++i) {
    auto batch = pending[i].get();
    EXPECT_EQ(bytes_of(batch[0]), bytes_of(array.read({{i, i + 20}, {i, i + 9}})));
  }
}

TEST(ReadAsync, WorksInAForkedChild) {
  test::TempDir dir;
  Array array = make(dir, {16, 16}, {8, 8});
  const auto expected = bytes_of(array.read());
  ASSERT_EQ(bytes_of(array.read_async({}).get()[0]), expected);  // the parent's drivers exist now
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // The parent's driver threads are not here: a child with the parent's count would wait forever.
    ReadHandle handle = array.read_async({});
    const bool finished = handle.wait_for(std::chrono::seconds(20));
    ::_exit(finished && bytes_of(handle.get()[0]) == expected ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
}

}  // namespace
}  // namespace zarrdirect

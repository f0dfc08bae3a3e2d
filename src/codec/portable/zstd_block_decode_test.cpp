// The lane-split copies of the zstd block decoder's step two (zstd_block_decode.hpp): every lane
// count and alignment of source and destination gives memcpy's (or a match's) bytes, and no lane
// reads outside its source or writes outside its destination (under AddressSanitizer the bytes
// around both are poisoned). The frames themselves: src/cuda/zstd_gpu_jobs_test.cpp.
#include "codec/portable/zstd_block_decode.hpp"

#include <algorithm>
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#if defined(__has_include)
#if __has_include(<sanitizer/asan_interface.h>)
#include <sanitizer/asan_interface.h>
#endif
#endif
#ifndef ASAN_POISON_MEMORY_REGION
#define ASAN_POISON_MEMORY_REGION(address, size) ((void)(address), (void)(size))
#define ASAN_UNPOISON_MEMORY_REGION(address, size) ((void)(address), (void)(size))
#endif

namespace zarrdirect::codec::portable {
namespace {

using zstd_block_detail::copy_part;
using zstd_block_detail::match_part;

// n bytes at `offset` in a buffer with 16 poisoned bytes (at least) on each side.
struct Guarded {
  std::vector<std::uint8_t> buffer;
  std::uint8_t* data;
  std::uint64_t n;
  Guarded(std::uint64_t size, std::uint64_t offset, std::uint8_t seed) : buffer(size + 48), n(size) {
    for (std::size_t i = 0; i < buffer.size(); ++i) buffer[i] = static_cast<std::uint8_t>(i * 7 + seed);
    // The vector's storage is 16-aligned: data starts `offset` past a 16-byte boundary.
    data = buffer.data() + 16 + offset;
    ASAN_POISON_MEMORY_REGION(buffer.data(), 16 + offset);
    ASAN_POISON_MEMORY_REGION(data + n, buffer.size() - 16 - offset - n);
  }
  ~Guarded() { ASAN_UNPOISON_MEMORY_REGION(buffer.data(), buffer.size()); }
  Guarded(const Guarded&) = delete;
  Guarded& operator=(const Guarded&) = delete;
};

TEST(ZstdBlockCopies, EveryAlignmentAndLaneCountCopiesExactly) {
  for (const std::uint32_t lanes : {1u, 3u, 32u}) {
    for (const std::uint64_t n : {0ull, 1ull, 63ull, 64ull, 65ull, 100ull, 257ull, 1000ull}) {
      for (std::uint64_t to_offset = 0; to_offset < 16; ++to_offset) {
        for (std::uint64_t from_offset = 0; from_offset < 16; ++from_offset) {
          Guarded from(n, from_offset, 1);
          Guarded to(n, to_offset, 2);
          std::vector<std::uint8_t> expected(from.data, from.data + n);
          for (std::uint32_t lane = 0; lane < lanes; ++lane) copy_part(lane, lanes, to.data, from.data, n);
          ASSERT_TRUE(std::equal(expected.begin(), expected.end(), to.data))
              << "lanes " << lanes << ", n " << n << ", offsets " << to_offset << "/" << from_offset;
        }
      }
    }
  }
}

TEST(ZstdBlockCopies, MatchesRepeatTheirOffsetsBytes) {
  for (const std::uint32_t lanes : {1u, 32u}) {
    for (const std::uint64_t offset : {1ull, 2ull, 3ull, 7ull, 8ull, 13ull, 64ull, 300ull}) {
      for (const std::uint64_t n : {3ull, 4ull, 50ull, 200ull, 1000ull}) {
        for (std::uint64_t at = 0; at < 8; ++at) {
          std::vector<std::uint8_t> out(offset + n + 16 + at);
          for (std::size_t i = 0; i < out.size(); ++i) out[i] = static_cast<std::uint8_t>(i * 31 + 5);
          std::vector<std::uint8_t> expected = out;
          std::uint8_t* to = out.data() + at + offset;
          for (std::uint64_t i = 0; i < n; ++i) expected[at + offset + i] = expected[at + offset + i - offset];
          for (std::uint32_t lane = 0; lane < lanes; ++lane) match_part(lane, lanes, to, offset, n);
          ASSERT_EQ(out, expected) << "lanes " << lanes << ", offset " << offset << ", n " << n << ", at " << at;
        }
      }
    }
  }
}

}  // namespace
}  // namespace zarrdirect::codec::portable

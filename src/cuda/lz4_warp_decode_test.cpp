// The warp LZ4 decoder's own code (lz4_warp_decode.cuh), run on the host by an emulated warp: 32
// lanes as contexts (ucontext) switched at each __syncwarp(), all lanes running up to the barrier
// before any goes on, in lane order 0..31 and again in 31..0. That is the ordering the GPU
// guarantees and no more: a lane that read what another lane writes without a __syncwarp() in
// between would see it in one order and not the other, and the bytes would differ. The emulator
// also fails the test when lanes reach different numbers of barriers or leave at different times
// (divergence around a collective). Runs without a GPU, so the warp logic is checked in CI; the
// GPU tests (lz4_warp_kernels_test.cpp) run the same code compiled by nvcc.
#include <gtest/gtest.h>

#include <ucontext.h>

#include <lz4.h>
#include <lz4hc.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <random>
#include <vector>

#include "codec/portable/lz4_block.hpp"

// Host stand-ins for the CUDA builtins lz4_warp_decode.cuh uses (it is otherwise plain C++).
#define __device__
namespace {
void emulated_syncwarp();
unsigned emulated_ballot(bool predicate);
std::uint32_t emulated_shuffle(std::uint32_t value, unsigned from_lane);
}  // namespace
inline void __syncwarp(unsigned = 0xffffffffu) { emulated_syncwarp(); }
inline unsigned __ballot_sync(unsigned, bool predicate) { return emulated_ballot(predicate); }
inline std::uint32_t __shfl_sync(unsigned, std::uint32_t value, unsigned from_lane) {
  return emulated_shuffle(value, from_lane);
}
inline int __ffs(int x) { return __builtin_ffs(x); }
// Input reads go through __ldg: the copy test checks each against the range a copy may read.
namespace {
const std::uint8_t* g_read_lo = nullptr;
const std::uint8_t* g_read_hi = nullptr;
bool g_read_outside = false;
}  // namespace
template <typename T>
T __ldg(const T* p) {
  const auto* byte = reinterpret_cast<const std::uint8_t*>(p);
  if (g_read_lo != nullptr && (byte < g_read_lo || byte + sizeof(T) > g_read_hi)) g_read_outside = true;
  return *p;
}
#include "cuda/lz4_warp_decode.cuh"
#undef __device__

namespace {

constexpr unsigned kLanes = zarrdirect::cuda::warp::kWarpSize;

// 32 lanes in lock step between barriers (see the top of the file).
class EmulatedWarp {
 public:
  EmulatedWarp() : stacks_(kLanes, std::vector<char>(256 * 1024)) {}

  // Runs body(lane) on every lane; false (with `problem` set) when the lanes diverged.
  bool run(const std::function<void(unsigned)>& body, bool reverse) {
    body_ = &body;
    for (unsigned lane = 0; lane < kLanes; ++lane) {
      Lane& l = lanes_[lane];
      l = Lane{};
      getcontext(&l.context);
      l.context.uc_stack.ss_sp = stacks_[lane].data();
      l.context.uc_stack.ss_size = stacks_[lane].size();
      l.context.uc_link = &scheduler_;
      makecontext(&l.context, reinterpret_cast<void (*)()>(&EmulatedWarp::entry), 1, static_cast<int>(lane));
    }
    current_ = this;
    for (;;) {
      for (unsigned i = 0; i < kLanes; ++i) {
        const unsigned lane = reverse ? kLanes - 1 - i : i;
        if (lanes_[lane].done) continue;
        running_ = lane;
        swapcontext(&scheduler_, &lanes_[lane].context);
      }
      unsigned done = 0;
      for (const Lane& l : lanes_) done += l.done ? 1 : 0;
      for (const Lane& l : lanes_)
        if (l.barriers != lanes_[0].barriers) {
          problem = "lanes reached different numbers of __syncwarp()";
          return false;
        }
      if (done == kLanes) return true;
      if (done != 0) {
        problem = "some lanes returned while others wait at a __syncwarp()";
        return false;
      }
    }
  }

  void barrier() {
    Lane& l = lanes_[running_];
    ++l.barriers;
    swapcontext(&l.context, &scheduler_);
  }

  // A collective: every lane posts a value, then (after all have) reads all of them; the second
  // barrier keeps a fast lane's next collective from overwriting a value another still reads.
  template <typename Combine>
  std::uint32_t collective(std::uint32_t value, Combine combine) {
    const unsigned lane = running_;
    posted_[lane] = value;
    barrier();
    const std::uint32_t result = combine(posted_, lane);
    barrier();
    return result;
  }

  static EmulatedWarp* current_;
  const char* problem = "";

 private:
  struct Lane {
    ucontext_t context{};
    bool done = false;
    unsigned barriers = 0;
  };
  static void entry(int lane) {
    (*current_->body_)(static_cast<unsigned>(lane));
    current_->lanes_[static_cast<unsigned>(lane)].done = true;
  }

  std::vector<std::vector<char>> stacks_;
  std::uint32_t posted_[kLanes] = {};
  Lane lanes_[kLanes];
  ucontext_t scheduler_{};
  unsigned running_ = 0;
  const std::function<void(unsigned)>* body_ = nullptr;
};
EmulatedWarp* EmulatedWarp::current_ = nullptr;

void emulated_syncwarp() { EmulatedWarp::current_->barrier(); }
unsigned emulated_ballot(bool predicate) {
  return EmulatedWarp::current_->collective(predicate ? 1u : 0u, [](const std::uint32_t* posted, unsigned) {
    std::uint32_t bits = 0;
    for (unsigned lane = 0; lane < kLanes; ++lane) bits |= (posted[lane] != 0 ? 1u : 0u) << lane;
    return bits;
  });
}
std::uint32_t emulated_shuffle(std::uint32_t value, unsigned from_lane) {
  // Each lane may name a different source lane: the result is the value that lane posted.
  struct Ask {
    unsigned from;
    std::uint32_t operator()(const std::uint32_t* posted, unsigned) const { return posted[from % kLanes]; }
  };
  return EmulatedWarp::current_->collective(value, Ask{from_lane});
}

namespace portable = zarrdirect::codec::portable;
namespace warp = zarrdirect::cuda::warp;
using Bytes = std::vector<std::uint8_t>;

// Decodes `block` with the emulated warp in both lane orders and with the portable decoder:
// the same status, size and bytes, every lane the same outcome, nothing written past `capacity`,
// no input byte read outside the block.
void expect_same_as_portable(EmulatedWarp& emulated, const Bytes& block, std::size_t capacity) {
  Bytes want(capacity + 16, 0xab);
  const portable::DecodeOutcome expected = portable::lz4_decode_block(block.data(), block.size(), want.data(), capacity);
  for (const bool reverse : {false, true}) {
    Bytes got(capacity + 16, 0xab);
    std::vector<portable::DecodeOutcome> outcomes(kLanes);
    g_read_lo = block.data();
    g_read_hi = block.data() + block.size();
    g_read_outside = false;
    const bool converged = emulated.run(
        [&](unsigned lane) {
          outcomes[lane] = warp::lz4_decode_block(block.data(), block.size(), got.data(), capacity, lane);
        },
        reverse);
    g_read_lo = g_read_hi = nullptr;
    ASSERT_TRUE(converged) << emulated.problem;
    ASSERT_FALSE(g_read_outside) << "read outside the block";
    for (unsigned lane = 0; lane < kLanes; ++lane) {
      ASSERT_EQ(outcomes[lane].status, expected.status) << "lane " << lane << (reverse ? " (reverse)" : "");
      ASSERT_EQ(outcomes[lane].written, expected.written) << "lane " << lane;
    }
    if (expected.status == portable::DecodeStatus::ok) {
      ASSERT_TRUE(std::equal(want.begin(), want.begin() + static_cast<std::ptrdiff_t>(expected.written), got.begin()))
          << (reverse ? "reverse lane order" : "lane order");
    }
    for (std::size_t k = capacity; k < got.size(); ++k) ASSERT_EQ(got[k], 0xab) << "byte past the capacity";
  }
}

Bytes random_bytes(std::size_t n, std::mt19937& rng) {
  Bytes out(n);
  for (auto& b : out) b = static_cast<std::uint8_t>(rng());
  return out;
}

Bytes compress(const Bytes& data, bool hc) {
  Bytes out(static_cast<std::size_t>(LZ4_compressBound(static_cast<int>(data.size()))));
  const auto* in = reinterpret_cast<const char*>(data.data());
  auto* to = reinterpret_cast<char*>(out.data());
  const int n = hc ? LZ4_compress_HC(in, to, static_cast<int>(data.size()), static_cast<int>(out.size()), 9)
                   : LZ4_compress_default(in, to, static_cast<int>(data.size()), static_cast<int>(out.size()));
  EXPECT_GT(n, 0);
  out.resize(static_cast<std::size_t>(n > 0 ? n : 0));
  return out;
}

void put_length(Bytes& out, std::size_t extra) {
  for (; extra >= 255; extra -= 255) out.push_back(255);
  out.push_back(static_cast<std::uint8_t>(extra));
}

// literals, one match (offset, length), last literals `tail`.
Bytes block_with_match(const Bytes& literals, std::size_t offset, std::size_t length, const Bytes& tail) {
  Bytes out;
  const std::size_t code = length - 4;
  out.push_back(static_cast<std::uint8_t>((std::min<std::size_t>(literals.size(), 15) << 4) | std::min<std::size_t>(code, 15)));
  if (literals.size() >= 15) put_length(out, literals.size() - 15);
  out.insert(out.end(), literals.begin(), literals.end());
  out.push_back(static_cast<std::uint8_t>(offset & 0xff));
  out.push_back(static_cast<std::uint8_t>(offset >> 8));
  if (code >= 15) put_length(out, code - 15);
  out.push_back(static_cast<std::uint8_t>(std::min<std::size_t>(tail.size(), 15) << 4));
  if (tail.size() >= 15) put_length(out, tail.size() - 15);
  out.insert(out.end(), tail.begin(), tail.end());
  return out;
}

// copy_input (literal runs, raw streams) at every alignment of source and destination and every
// length around the word path's limits: the bytes arrive, nothing around the destination changes,
// and no byte outside the source run is read. copy_match against the byte-by-byte rule for every
// short offset and lengths around the steps.
TEST(Lz4WarpDecode, EmulatedWarpCopies) {
  EmulatedWarp emulated;
  std::mt19937 rng(24);
  std::vector<std::size_t> lengths;
  for (std::size_t n = 0; n <= 300; ++n) lengths.push_back(n);
  for (const std::size_t n : {511u, 512u, 513u, 515u, 1000u, 4099u, 70001u}) lengths.push_back(n);
  for (const std::size_t n : lengths)
    for (std::size_t src_misalign = 0; src_misalign < 4; ++src_misalign)
      for (std::size_t dst_misalign = 0; dst_misalign < 4; ++dst_misalign) {
        SCOPED_TRACE(testing::Message() << "n " << n << " src +" << src_misalign << " dst +" << dst_misalign);
        const Bytes source = random_bytes(n + 16, rng);
        Bytes target(n + 16, 0xab);
        const std::uint8_t* src = source.data() + 4 + src_misalign;
        std::uint8_t* dst = target.data() + 4 + dst_misalign;
        g_read_lo = src;
        g_read_hi = src + n;
        g_read_outside = false;
        const bool converged = emulated.run([&](unsigned lane) { warp::copy_input(src, dst, n, lane); }, false);
        g_read_lo = g_read_hi = nullptr;
        ASSERT_TRUE(converged) << emulated.problem;
        ASSERT_FALSE(g_read_outside) << "read outside the source run";
        ASSERT_TRUE(std::equal(src, src + n, dst));
        for (std::uint8_t* p = target.data(); p < dst; ++p) ASSERT_EQ(*p, 0xab);
        for (std::uint8_t* p = dst + n; p < target.data() + target.size(); ++p) ASSERT_EQ(*p, 0xab);
      }
  for (std::size_t offset = 1; offset <= 70; ++offset)
    for (std::size_t length = 0; length <= 300; length += 1 + length / 40) {
      Bytes want = random_bytes(offset + 8, rng);
      want.resize(offset + 8 + length + 16, 0xab);
      Bytes got = want;
      std::uint8_t* at = want.data() + offset + 8;
      for (std::size_t k = 0; k < length; ++k) at[k] = at[k - offset];
      std::uint8_t* dst = got.data() + offset + 8;
      ASSERT_TRUE(emulated.run([&](unsigned lane) { warp::copy_match(dst, offset, length, lane); }, true))
          << emulated.problem;
      ASSERT_EQ(got, want) << "offset " << offset << " length " << length;
    }
}

TEST(Lz4WarpDecode, EmulatedWarpEqualsThePortableDecoder) {
  EmulatedWarp emulated;
  std::mt19937 rng(21);
  for (int i = 0; i < 120; ++i) {
    SCOPED_TRACE(testing::Message() << "input " << i);
    const std::size_t n = i % 10 == 0 ? 0 : 1 + rng() % 3000;
    Bytes data(n);
    const std::size_t period = 1 + rng() % 40;
    for (std::size_t k = 0; k < n; ++k)
      data[k] = i % 3 == 0 ? static_cast<std::uint8_t>(rng())                                   // literals
                : i % 3 == 1 ? static_cast<std::uint8_t>(k % period + (rng() % 50 == 0 ? 7 : 0))  // short periods
                             : static_cast<std::uint8_t>((k / 64) % 7 + rng() % 3);              // signal-like
    expect_same_as_portable(emulated, compress(data, i % 2 == 1), n);
  }
}

TEST(Lz4WarpDecode, EmulatedWarpOverlappingMatches) {
  EmulatedWarp emulated;
  std::mt19937 rng(22);
  for (std::size_t offset = 1; offset <= 40; ++offset)
    for (const std::size_t length : {4u, 19u, 31u, 32u, 33u, 64u, 65u, 100u, 275u}) {
      SCOPED_TRACE(testing::Message() << "offset " << offset << " length " << length);
      const Bytes literals = random_bytes(offset + rng() % 20, rng);
      const Bytes block = block_with_match(literals, offset, length, random_bytes(12, rng));
      expect_same_as_portable(emulated, block, literals.size() + length + 12);
    }
}

// Length extensions longer than one 32-byte step of the warp's ballot (runs of 255 bytes), around
// the step's edges, and cut or run on to the end of the input anywhere in them.
TEST(Lz4WarpDecode, EmulatedWarpLongLengthExtensions) {
  EmulatedWarp emulated;
  std::mt19937 rng(25);
  for (const std::size_t literals : {15u + 255u * 31u, 15u + 255u * 32u, 15u + 255u * 32u + 254u, 20000u})
    for (const std::size_t length : {19u + 255u * 32u, 19u + 255u * 32u - 1u, 30000u}) {
      SCOPED_TRACE(testing::Message() << "literals " << literals << " length " << length);
      const Bytes head = random_bytes(literals, rng);
      const Bytes block = block_with_match(head, 1 + rng() % 40, length, random_bytes(12, rng));
      expect_same_as_portable(emulated, block, literals + length + 12);
      // Cut inside the literal length's extension, the literals, the match's extension.
      for (std::size_t cut = 1; cut < block.size(); cut += cut < 200 ? 1 : 997)
        expect_same_as_portable(emulated, Bytes(block.begin(), block.begin() + static_cast<std::ptrdiff_t>(cut)),
                                literals + length + 12);
    }
  // read_length_extension itself: the run's end at every distance from the read limit.
  for (std::size_t run = 0; run < 100; ++run)
    for (std::size_t last = 0; last < 110; last += 1 + last / 20) {
      Bytes bytes(run, 255);
      bytes.push_back(7);
      bytes.resize(120, 255);
      std::vector<int> ok(kLanes);
      std::vector<std::uint64_t> lengths(kLanes), ips(kLanes);
      g_read_lo = bytes.data();
      g_read_hi = bytes.data() + last + 1;  // nothing past `last` may be read
      g_read_outside = false;
      ASSERT_TRUE(emulated.run(
          [&](unsigned lane) {
            std::uint64_t ip = 0, length = 15;
            ok[lane] = warp::read_length_extension(bytes.data(), ip, last, length, lane) ? 1 : 0;
            lengths[lane] = length;
            ips[lane] = ip;
          },
          false));
      g_read_lo = g_read_hi = nullptr;
      ASSERT_FALSE(g_read_outside) << "run " << run << " last " << last;
      const bool fits = run <= last;  // the byte ending the run (at `run`) may be read
      for (unsigned lane = 0; lane < kLanes; ++lane) {
        ASSERT_EQ(ok[lane], fits ? 1 : 0) << "run " << run << " last " << last;
        if (fits) {
          ASSERT_EQ(lengths[lane], 15 + 255 * run + 7);
          ASSERT_EQ(ips[lane], run + 1);
        }
      }
    }
  // A token announcing a long run, then nothing but 255s to the end of the input.
  for (const std::size_t n : {17u, 40u, 1000u}) {
    Bytes block(n, 255);
    block[0] = 0xf0;
    expect_same_as_portable(emulated, block, 100000);
    block[0] = 0x0f;  // literals 0, a match whose length extension never ends
    expect_same_as_portable(emulated, block, 100000);
  }
}

TEST(Lz4WarpDecode, EmulatedWarpDamagedBlocks) {
  EmulatedWarp emulated;
  std::mt19937 rng(23);
  for (int i = 0; i < 800; ++i) {
    SCOPED_TRACE(testing::Message() << "input " << i);
    const std::size_t n = 1 + rng() % 1500;
    Bytes data(n);
    // Runs and periods (long length extensions) with stray bytes (literal runs).
    for (std::size_t k = 0; k < n; ++k)
      data[k] = static_cast<std::uint8_t>(i % 8 < 4 ? k % 13 + (rng() % 9 == 0 ? rng() : 0) : (k / 300) + (rng() % 97 == 0 ? rng() : 0));
    Bytes block = compress(data, false);
    std::size_t capacity = n;
    switch (i % 4) {
      case 0:
        for (int f = 0; f < 3; ++f) block[rng() % block.size()] ^= static_cast<std::uint8_t>(1 + rng() % 255);
        break;
      case 1: block.resize(rng() % block.size()); break;
      case 2: capacity = rng() % n; break;
      default: block = random_bytes(1 + rng() % 500, rng); break;
    }
    expect_same_as_portable(emulated, block, capacity);
  }
}

}  // namespace

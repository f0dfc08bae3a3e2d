// The warp-per-block decoders give the CPU's answer job by job (the portable decoder, itself
// checked against liblz4 and c-blosc): the same status, size and bytes, over inputs of many kinds
// (the sample-like signal, noise, runs, periods, liblz4's fast, default and HC encoders), blocks
// written by hand with every match offset from 1 to 40 against lengths around the 32-byte step
// and the 15/255 length codes, long literal runs, and damaged or hostile blocks, which fail with
// no byte written outside the job's output and no hang. Skips where no CUDA device is usable.
#include "cuda/lz4_warp_kernels.cuh"

#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <blosc.h>
#include <lz4.h>
#include <lz4hc.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "codec/portable/blosc_frame.hpp"
#include "codec/portable/lz4_block.hpp"
#include "cuda/blosc_unshuffle_kernels.cuh"
#include "cuda/device_test_support.hpp"

namespace zarrdirect::cuda {
namespace {

namespace portable = codec::portable;
using test::DeviceArray;
using Bytes = std::vector<std::uint8_t>;

// Bytes left untouched between the jobs' outputs, to catch a write past a job's room.
constexpr std::size_t kGuard = 64;
constexpr std::uint8_t kGuardByte = 0xab;

Bytes signal(std::size_t n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  Bytes out(n);
  for (std::size_t i = 0; i < n; ++i) {
    const auto sample = static_cast<std::uint32_t>(1000 + (i / 64) % 300 + rng() % 32);
    out[i] = static_cast<std::uint8_t>(i % 2 == 0 ? sample & 0xff : sample >> 8);
  }
  return out;
}

// Inputs of several kinds, so that the encoders write every sequence shape: short and long
// literal runs, matches with short offsets (periods), long matches (runs), and mixes.
Bytes input(int kind, std::size_t n, std::mt19937& rng) {
  Bytes out(n);
  switch (kind % 5) {
    case 0: return signal(n, static_cast<std::uint32_t>(rng()));
    case 1: {  // a period of 1..40 bytes with an occasional stray byte
      const std::size_t period = 1 + rng() % 40;
      Bytes unit(period);
      for (auto& b : unit) b = static_cast<std::uint8_t>(rng());
      for (std::size_t i = 0; i < n; ++i) out[i] = rng() % 97 == 0 ? static_cast<std::uint8_t>(rng()) : unit[i % period];
      return out;
    }
    case 2:  // noise: literal runs only
      for (auto& b : out) b = static_cast<std::uint8_t>(rng());
      return out;
    case 3:  // long runs of one byte
      for (std::size_t i = 0; i < n;) {
        const std::size_t run = std::min<std::size_t>(n - i, 1 + rng() % 5000);
        std::fill_n(out.begin() + static_cast<std::ptrdiff_t>(i), run, static_cast<std::uint8_t>(rng()));
        i += run;
      }
      return out;
    default:  // noise and repeats of earlier bytes at every distance
      for (std::size_t i = 0; i < n; ++i) {
        if (i > 64 && rng() % 3 == 0) {
          const std::size_t back = 1 + rng() % std::min<std::size_t>(i, 60000);
          const std::size_t len = std::min<std::size_t>(n - i, 4 + rng() % 300);
          for (std::size_t k = 0; k < len; ++k) out[i + k] = out[i + k - back];
          i += len - 1;
        } else {
          out[i] = static_cast<std::uint8_t>(rng());
        }
      }
      return out;
  }
}

Bytes lz4_compress(const Bytes& data, int mode) {
  Bytes out(static_cast<std::size_t>(LZ4_compressBound(static_cast<int>(data.size()))));
  const auto* in = reinterpret_cast<const char*>(data.data());
  auto* to = reinterpret_cast<char*>(out.data());
  const int size = static_cast<int>(data.size());
  const int room = static_cast<int>(out.size());
  int n = 0;
  if (mode == 0) n = LZ4_compress_default(in, to, size, room);
  else if (mode == 1) n = LZ4_compress_fast(in, to, size, room, 8);
  else n = LZ4_compress_HC(in, to, size, room, 9);
  EXPECT_GT(n, 0);
  out.resize(static_cast<std::size_t>(n > 0 ? n : 0));
  return out;
}

// An LZ4 length field's extension bytes (after the token's 15).
void put_length(Bytes& out, std::size_t extra) {
  for (; extra >= 255; extra -= 255) out.push_back(255);
  out.push_back(static_cast<std::uint8_t>(extra));
}

// A block written by hand: `literals`, one match of `length` (>= 4) at `offset`, then `tail` as
// the last literals (at least 12 bytes keeps the format's end rules).
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

Bytes random_bytes(std::size_t n, std::mt19937& rng) {
  Bytes out(n);
  for (auto& b : out) b = static_cast<std::uint8_t>(rng());
  return out;
}

// A batch of LZ4 jobs packed back to back (so blocks start at every alignment), each output
// followed by guard bytes.
struct Lz4Batch {
  Bytes src;
  std::vector<GpuDecodeJob> jobs;
  std::size_t dst_size = kGuard;
  void add(const Bytes& block, std::uint64_t capacity) {
    GpuDecodeJob job;
    job.src_offset = src.size();
    job.src_size = block.size();
    job.dst_offset = dst_size;
    job.dst_capacity = capacity;
    src.insert(src.end(), block.begin(), block.end());
    dst_size += capacity + kGuard;
    jobs.push_back(job);
  }
};

struct Lz4Result {
  std::vector<portable::DecodeOutcome> outcomes;
  Bytes dst;
};

Lz4Result decode_on_cpu(const Lz4Batch& batch) {
  Lz4Result result;
  result.dst.assign(batch.dst_size, kGuardByte);
  for (const GpuDecodeJob& job : batch.jobs)
    result.outcomes.push_back(portable::lz4_decode_block(batch.src.data() + job.src_offset, job.src_size,
                                                         result.dst.data() + job.dst_offset, job.dst_capacity));
  return result;
}

Lz4Result decode_on_gpu(const Lz4Batch& batch) {
  const DeviceArray<std::uint8_t> src(batch.src);
  const DeviceArray<std::uint8_t> dst(Bytes(batch.dst_size, kGuardByte));
  const DeviceArray<GpuDecodeJob> jobs(batch.jobs);
  const DeviceArray<portable::DecodeOutcome> outcomes(std::vector<portable::DecodeOutcome>(batch.jobs.size()));
  EXPECT_EQ(launch_lz4_warp_decode(jobs.get(), static_cast<std::uint32_t>(batch.jobs.size()), src.get(), dst.get(),
                                   outcomes.get(), nullptr),
            cudaSuccess);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  return {outcomes.to_host(), dst.to_host()};
}

// The GPU's outcome and bytes equal the CPU's for every job, and no guard byte changed. Returns
// the number of jobs that decoded.
int expect_same(const Lz4Batch& batch, const Lz4Result& gpu, const Lz4Result& cpu) {
  int ok = 0;
  EXPECT_EQ(gpu.outcomes.size(), batch.jobs.size());
  if (gpu.outcomes.size() != batch.jobs.size() || gpu.dst.size() != batch.dst_size) return -1;
  for (std::size_t i = 0; i < batch.jobs.size(); ++i) {
    SCOPED_TRACE(testing::Message() << "job " << i);
    const GpuDecodeJob& job = batch.jobs[i];
    EXPECT_EQ(gpu.outcomes[i].status, cpu.outcomes[i].status) << portable::describe(gpu.outcomes[i].status);
    if (gpu.outcomes[i].status == portable::DecodeStatus::ok && cpu.outcomes[i].status == portable::DecodeStatus::ok) {
      ++ok;
      EXPECT_EQ(gpu.outcomes[i].written, cpu.outcomes[i].written);
      const auto at = static_cast<std::ptrdiff_t>(job.dst_offset);
      const auto n = static_cast<std::ptrdiff_t>(cpu.outcomes[i].written);
      EXPECT_TRUE(std::equal(gpu.dst.begin() + at, gpu.dst.begin() + at + n, cpu.dst.begin() + at));
    }
    for (std::size_t k = 0; k < kGuard; ++k) {
      if (gpu.dst[job.dst_offset + job.dst_capacity + k] != kGuardByte) {
        ADD_FAILURE() << "guard byte " << k << " after the job's output written";
        break;
      }
    }
  }
  return ok;
}

TEST(GpuLz4WarpDecode, InputsOfEveryKindEqualTheCpuAndLiblz4) {
  REQUIRE_GPU();
  std::mt19937 rng(1234);
  Lz4Batch batch;
  std::vector<Bytes> originals;
  for (int i = 0; i < 900; ++i) {
    std::size_t n = 1 + rng() % (i % 4 == 0 ? 300000 : 5000);
    if (i % 100 == 0) n = 0;
    if (i % 150 == 1) n = std::size_t{4} << 20;  // a numcodecs chunk of 4 MiB
    const Bytes data = input(i, n, rng);
    batch.add(lz4_compress(data, i % 3), data.size());
    originals.push_back(data);
  }
  const Lz4Result gpu = decode_on_gpu(batch);
  EXPECT_EQ(expect_same(batch, gpu, decode_on_cpu(batch)), 900);
  // And each equals what liblz4 was given.
  for (std::size_t i = 0; i < originals.size() && i < gpu.outcomes.size(); ++i) {
    ASSERT_EQ(gpu.outcomes[i].written, originals[i].size()) << "job " << i;
    ASSERT_TRUE(std::equal(originals[i].begin(), originals[i].end(),
                           gpu.dst.begin() + static_cast<std::ptrdiff_t>(batch.jobs[i].dst_offset)))
        << "job " << i;
  }
}

TEST(GpuLz4WarpDecode, OverlappingMatchesAtEveryShortOffset) {
  REQUIRE_GPU();
  std::mt19937 rng(7);
  Lz4Batch batch;
  std::vector<Bytes> expected;
  for (std::size_t offset = 1; offset <= 40; ++offset)
    for (const std::size_t length : {4u, 5u, 18u, 19u, 20u, 31u, 32u, 33u, 40u, 63u, 64u, 65u, 127u, 129u, 273u,
                                     274u, 529u, 1000u, 5003u})
      for (const std::size_t extra_literals : {0u, 3u, 15u, 47u, 300u}) {
        const Bytes literals = random_bytes(offset + extra_literals, rng);
        const Bytes tail = random_bytes(12 + rng() % 40, rng);
        // The byte-by-byte rule, written out: what the block decodes to.
        Bytes want = literals;
        for (std::size_t k = 0; k < length; ++k) want.push_back(want[want.size() - offset]);
        want.insert(want.end(), tail.begin(), tail.end());
        const Bytes block = block_with_match(literals, offset, length, tail);
        // liblz4 agrees that the block is valid and what it holds.
        Bytes check(want.size());
        ASSERT_EQ(LZ4_decompress_safe(reinterpret_cast<const char*>(block.data()), reinterpret_cast<char*>(check.data()),
                                      static_cast<int>(block.size()), static_cast<int>(check.size())),
                  static_cast<int>(want.size()));
        ASSERT_EQ(check, want);
        batch.add(block, want.size());
        expected.push_back(want);
      }
  const Lz4Result gpu = decode_on_gpu(batch);
  EXPECT_EQ(expect_same(batch, gpu, decode_on_cpu(batch)), static_cast<int>(expected.size()));
  for (std::size_t i = 0; i < expected.size() && i < gpu.outcomes.size(); ++i)
    ASSERT_TRUE(std::equal(expected[i].begin(), expected[i].end(),
                           gpu.dst.begin() + static_cast<std::ptrdiff_t>(batch.jobs[i].dst_offset)))
        << "job " << i;
}

TEST(GpuLz4WarpDecode, LongLiteralRuns) {
  REQUIRE_GPU();
  std::mt19937 rng(8);
  Lz4Batch batch;
  std::vector<Bytes> expected;
  // Literal-only blocks around the length codes (15, 15 + 255) and the 128-byte copy step.
  for (const std::size_t n : {1u, 5u, 14u, 15u, 16u, 127u, 128u, 129u, 255u, 269u, 270u, 271u, 524u, 525u, 65536u,
                              1000003u}) {
    const Bytes data = random_bytes(n, rng);
    batch.add(lz4_compress(data, 0), n);
    expected.push_back(data);
  }
  // A long literal run, then a long match of a short period, then more literals.
  for (const std::size_t literals : {40u, 4096u, 100000u}) {
    const Bytes head = random_bytes(literals, rng);
    const Bytes tail = random_bytes(5000, rng);
    Bytes want = head;
    for (std::size_t k = 0; k < 70000; ++k) want.push_back(want[want.size() - 3]);
    want.insert(want.end(), tail.begin(), tail.end());
    batch.add(block_with_match(head, 3, 70000, tail), want.size());
    expected.push_back(want);
  }
  const Lz4Result gpu = decode_on_gpu(batch);
  EXPECT_EQ(expect_same(batch, gpu, decode_on_cpu(batch)), static_cast<int>(expected.size()));
  for (std::size_t i = 0; i < expected.size() && i < gpu.outcomes.size(); ++i)
    ASSERT_TRUE(std::equal(expected[i].begin(), expected[i].end(),
                           gpu.dst.begin() + static_cast<std::ptrdiff_t>(batch.jobs[i].dst_offset)))
        << "job " << i;
}

TEST(GpuLz4WarpDecode, DamagedAndHostileBlocksFailCleanly) {
  REQUIRE_GPU();
  std::mt19937 rng(9);
  Lz4Batch batch;
  for (int i = 0; i < 1500; ++i) {
    const std::size_t n = 1 + rng() % 20000;
    const Bytes data = input(i, n, rng);
    Bytes block = lz4_compress(data, i % 3);
    std::uint64_t capacity = n;
    switch (i % 6) {
      case 0:  // flipped bytes
        for (int f = 0; f < 1 + i % 4; ++f) block[rng() % block.size()] ^= static_cast<std::uint8_t>(1 + rng() % 255);
        break;
      case 1: block.resize(rng() % block.size()); break;  // truncated
      case 2: capacity = rng() % n; break;                 // too little room
      case 3: capacity = n + 1 + rng() % 100; break;       // more room than needed: decodes, shorter
      case 4: block = random_bytes(1 + rng() % 3000, rng); break;  // garbage
      default:  // a match offset past the start, or 0, or a length running past the output
        block = block_with_match(random_bytes(20, rng), i % 2 == 0 ? 21 + rng() % 1000 : 0, 4 + rng() % 100,
                                 random_bytes(20, rng));
        if (i % 4 == 1) block = block_with_match(random_bytes(20, rng), 5, 100000, random_bytes(20, rng));
        capacity = 200;
        break;
    }
    batch.add(block, capacity);
  }
  const Lz4Result cpu = decode_on_cpu(batch);
  const int ok = expect_same(batch, decode_on_gpu(batch), cpu);
  EXPECT_GT(ok, 100);    // unchanged blocks with room to spare, and some flips land in literals
  EXPECT_LT(ok, 1200);   // the damaged ones did fail
}

// Blosc: the stream jobs and the unshuffle jobs, run on the GPU, equal the portable decoder (which
// equals c-blosc on the intact frames); damaged frames fail when the CPU's do (a frame fails when
// any of its streams does) and write nothing outside their output.
TEST(GpuBloscWarpDecode, FramesEqualCBloscAndDamageFails) {
  REQUIRE_GPU();
  std::mt19937 rng(11);
  Bytes src;
  std::vector<Bytes> originals;
  struct Frame {
    std::uint64_t dst_offset = 0;
    std::size_t first_job = 0, jobs = 0;
    bool damaged = false;
    bool cpu_ok = true;
  };
  std::vector<Frame> frames;
  BloscGpuJobs jobs;
  std::uint64_t scratch_end = 0;
  std::size_t dst_size = kGuard;
  for (const int split : {BLOSC_FORWARD_COMPAT_SPLIT, BLOSC_ALWAYS_SPLIT, BLOSC_NEVER_SPLIT}) {
    blosc_set_splitmode(split);
    for (const char* cname : {"lz4", "lz4hc"})
      for (const int shuffle : {BLOSC_NOSHUFFLE, BLOSC_SHUFFLE, BLOSC_BITSHUFFLE})
        for (const std::size_t typesize : {1u, 2u, 3u, 4u, 8u, 16u})
          for (const std::size_t n : {std::size_t{100}, std::size_t{5003}, std::size_t{300008}})
            for (const int variant : {0, 1, 2}) {  // 0 intact, 1 damaged, 2 intact with clevel 0 or noise
              Bytes data = signal(n, static_cast<std::uint32_t>(rng()));
              if (variant == 2 && n > 1000)
                for (std::size_t k = 0; k < n; k += 2) data[k] = static_cast<std::uint8_t>(rng());
              const int clevel = variant == 2 && n < 1000 ? 0 : 5;
              Bytes frame(n + BLOSC_MAX_OVERHEAD);
              const int written = blosc_compress_ctx(clevel, shuffle, typesize, n, data.data(), frame.data(),
                                                     frame.size(), cname, n > 100000 ? 16384 : 0, 1);
              ASSERT_GT(written, 0);
              frame.resize(static_cast<std::size_t>(written));
              portable::BloscFrame plan;
              ASSERT_EQ(portable::blosc_plan(frame.data(), frame.size(), n, plan), portable::DecodeStatus::ok);
              const bool damaged = variant == 1 && frame.size() > 200 && !plan.memcpyed();
              if (damaged) {
                // Inside the streams' bytes, so the plan and the stream sizes still hold.
                for (int f = 0; f < 4; ++f) frame[200 + rng() % (frame.size() - 200)] ^= 0x5a;
              }
              Frame f;
              f.dst_offset = dst_size;
              f.first_job = jobs.streams.size();
              f.damaged = damaged;
              if (append_blosc_jobs(plan, frame, src.size(), dst_size, scratch_end, jobs) != portable::DecodeStatus::ok) {
                ASSERT_TRUE(damaged);  // a flip hit a stream's size field: left to the CPU
                continue;
              }
              f.jobs = jobs.streams.size() - f.first_job;
              // The CPU's verdict: every block decoded by the portable decoder.
              Bytes cpu(n);
              Bytes scratch(plan.scratch_size() + 1);
              for (std::uint32_t b = 0; b < plan.nblocks; ++b)
                if (portable::blosc_decode_block(plan, frame.data(), b, cpu.data(), scratch.data()) !=
                    portable::DecodeStatus::ok)
                  f.cpu_ok = false;
              if (!damaged) {
                ASSERT_TRUE(f.cpu_ok);
                ASSERT_EQ(cpu, data);
              }
              frames.push_back(f);
              // What the GPU must give: the CPU's bytes (a flip inside a raw stream or a literal
              // decodes, to other bytes).
              originals.push_back(cpu);
              src.insert(src.end(), frame.begin(), frame.end());
              dst_size += n + kGuard;
            }
  }
  blosc_set_splitmode(BLOSC_FORWARD_COMPAT_SPLIT);

  const DeviceArray<std::uint8_t> device_src(src);
  const DeviceArray<std::uint8_t> device_dst(Bytes(dst_size, kGuardByte));
  const DeviceArray<std::uint8_t> device_scratch(Bytes(scratch_end + kGuard, kGuardByte));
  const DeviceArray<GpuBloscStreamJob> device_streams(jobs.streams);
  const DeviceArray<GpuUnshuffleJob> device_unshuffles(jobs.unshuffles);
  const DeviceArray<portable::DecodeStatus> device_statuses(std::vector<portable::DecodeStatus>(jobs.streams.size()));
  ASSERT_EQ(launch_blosc_stream_decode(device_streams.get(), static_cast<std::uint32_t>(jobs.streams.size()),
                                       device_src.get(), device_dst.get(), device_scratch.get(), device_statuses.get(),
                                       nullptr),
            cudaSuccess);
  ASSERT_EQ(launch_blosc_unshuffle(device_unshuffles.get(), static_cast<std::uint32_t>(jobs.unshuffles.size()),
                                   device_scratch.get(), device_dst.get(), nullptr),
            cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const auto statuses = device_statuses.to_host();
  const Bytes got = device_dst.to_host();
  const Bytes scratch = device_scratch.to_host();
  int ok = 0, failed = 0;
  std::vector<bool> output(dst_size, false);
  for (std::size_t i = 0; i < frames.size(); ++i) {
    SCOPED_TRACE(testing::Message() << "frame " << i);
    const Frame& f = frames[i];
    bool gpu_ok = true;
    for (std::size_t j = f.first_job; j < f.first_job + f.jobs; ++j) gpu_ok = gpu_ok && statuses[j] == portable::DecodeStatus::ok;
    EXPECT_EQ(gpu_ok, f.cpu_ok);
    std::fill_n(output.begin() + static_cast<std::ptrdiff_t>(f.dst_offset), originals[i].size(), true);
    if (!gpu_ok) {
      ++failed;
      continue;
    }
    ++ok;
    EXPECT_TRUE(std::equal(originals[i].begin(), originals[i].end(),
                           got.begin() + static_cast<std::ptrdiff_t>(f.dst_offset)));
  }
  for (std::size_t k = 0; k < dst_size; ++k)
    if (!output[k]) {
      ASSERT_EQ(got[k], kGuardByte) << "byte " << k << " written outside every frame's output";
    }
  for (std::size_t k = scratch_end; k < scratch.size(); ++k) ASSERT_EQ(scratch[k], kGuardByte) << "scratch byte " << k;
  EXPECT_GT(ok, 500);
  EXPECT_GT(failed, 20);
  EXPECT_EQ(launch_blosc_stream_decode(nullptr, 0, nullptr, nullptr, nullptr, nullptr, nullptr), cudaSuccess);
  EXPECT_EQ(launch_lz4_warp_decode(nullptr, 0, nullptr, nullptr, nullptr, nullptr), cudaSuccess);
}

}  // namespace
}  // namespace zarrdirect::cuda

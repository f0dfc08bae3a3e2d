// The portable (CPU and GPU) decoders of src/codec/portable/ on arbitrary bytes: they must never
// read or write outside their buffers (ASan sees the exact-size heap buffers here), and whatever
// they accept, the reference library decodes to the same bytes. A blosc frame also goes the GPU's
// way: the job list the GPU decode sink builds on the host (cuda/blosc_gpu_jobs.hpp, one job per
// stream, one unshuffle per shuffled block), run by the host model of the kernels
// (run_blosc_jobs_on_host), with the same two properties.
//
// The first byte picks the mode:
//   0: an LZ4 block; bytes 1-2 give the output capacity, the rest is the block.
//   1: a blosc frame, as it is.
//   2, 3: the rest is data that liblz4 (2) or c-blosc (3) compresses here, and bytes 1-4 say where
//      one byte of the result is changed and to what, so the fuzzer reaches deep into valid
//      blocks without a seed corpus.
#include <blosc.h>
#include <lz4.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "codec/portable/blosc_frame.hpp"
#include "codec/portable/lz4_block.hpp"
#include "cuda/blosc_gpu_jobs.hpp"

namespace {

namespace portable = zarrdirect::codec::portable;
using Bytes = std::vector<std::uint8_t>;

[[noreturn]] void violated(const char* what) {
  std::fprintf(stderr, "property violated: %s\n", what);
  std::abort();
}

// Whether ours decoded it.
bool check_lz4(const Bytes& block, std::size_t capacity) {
  Bytes ours(capacity);
  const portable::DecodeOutcome outcome = portable::lz4_decode_block(block.data(), block.size(), ours.data(), capacity);
  if (outcome.status != portable::DecodeStatus::ok) return false;
  Bytes reference(capacity);
  const int n = LZ4_decompress_safe(reinterpret_cast<const char*>(block.data()), reinterpret_cast<char*>(reference.data()),
                                    static_cast<int>(block.size()), static_cast<int>(capacity));
  if (n < 0) violated("lz4: accepted a block liblz4 refuses");
  if (static_cast<std::uint64_t>(n) != outcome.written) violated("lz4: decoded size differs from liblz4's");
  if (outcome.written > 0 && std::memcmp(ours.data(), reference.data(), outcome.written) != 0) violated("lz4: bytes differ from liblz4's");
  return true;
}

// The GPU's way through a planned frame. `reference`: c-blosc's bytes, null where it refused.
void check_blosc_jobs(const Bytes& frame, const portable::BloscFrame& plan, const Bytes* reference) {
  zarrdirect::cuda::BloscGpuJobs jobs;
  std::uint64_t scratch_end = 0;
  if (zarrdirect::cuda::append_blosc_jobs(plan, {frame.data(), frame.size()}, 0, 0, scratch_end, jobs) !=
      portable::DecodeStatus::ok)
    return;
  Bytes dst(plan.nbytes);
  Bytes scratch(scratch_end);
  std::vector<portable::DecodeStatus> statuses;
  zarrdirect::cuda::run_blosc_jobs_on_host(jobs, frame.data(), dst.data(), scratch.empty() ? nullptr : scratch.data(),
                                           statuses);
  for (portable::DecodeStatus status : statuses)
    if (status != portable::DecodeStatus::ok) return;  // the read fails naming the chunk
  if (!reference) violated("blosc GPU jobs: accepted a frame c-blosc refuses");
  if (dst != *reference) violated("blosc GPU jobs: bytes differ from c-blosc's");
}

bool check_blosc(const Bytes& frame) {
  constexpr std::uint64_t kMaxDecoded = 1 << 20;
  portable::BloscFrame plan;
  if (portable::blosc_plan(frame.data(), frame.size(), kMaxDecoded, plan) != portable::DecodeStatus::ok) return false;
  {
    // Only a frame the plan accepted (cbytes within the buffer) goes to c-blosc, which trusts it.
    Bytes reference(plan.nbytes);
    const int n = blosc_decompress_ctx(frame.data(), reference.data(), reference.size(), 1);
    const bool accepted = n >= 0 && static_cast<std::uint32_t>(n) == plan.nbytes;
    check_blosc_jobs(frame, plan, accepted ? &reference : nullptr);
  }
  Bytes ours(plan.nbytes);
  for (std::uint32_t i = 0; i < plan.nblocks; ++i) {
    Bytes scratch(plan.scratch_size());
    if (portable::blosc_decode_block(plan, frame.data(), i, ours.data(), scratch.empty() ? nullptr : scratch.data()) !=
        portable::DecodeStatus::ok)
      return false;
  }
  // Only a frame the plan accepted (cbytes within the buffer) goes to c-blosc, which trusts it.
  Bytes reference(plan.nbytes);
  const int n = blosc_decompress_ctx(frame.data(), reference.data(), reference.size(), 1);
  if (n < 0 || static_cast<std::uint32_t>(n) != plan.nbytes) violated("blosc: accepted a frame c-blosc refuses");
  if (ours != reference) violated("blosc: bytes differ from c-blosc's");
  return true;
}

std::uint32_t le32(const std::uint8_t* p) {
  return static_cast<std::uint32_t>(p[0]) | (static_cast<std::uint32_t>(p[1]) << 8) |
         (static_cast<std::uint32_t>(p[2]) << 16) | (static_cast<std::uint32_t>(p[3]) << 24);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 5) return 0;
  const std::uint8_t mode = data[0] % 4;
  if (mode == 0) {
    const std::size_t capacity = static_cast<std::size_t>(data[1]) | (static_cast<std::size_t>(data[2]) << 8);
    check_lz4(Bytes(data + 3, data + size), capacity);
  } else if (mode == 1) {
    check_blosc(Bytes(data + 1, data + size));
  } else {
    const std::uint32_t edit = le32(data + 1);
    const Bytes plain(data + 5, data + size);
    Bytes encoded;
    if (mode == 2) {
      encoded.resize(static_cast<std::size_t>(LZ4_compressBound(static_cast<int>(plain.size()))));
      const int n = LZ4_compress_default(reinterpret_cast<const char*>(plain.data()), reinterpret_cast<char*>(encoded.data()),
                                         static_cast<int>(plain.size()), static_cast<int>(encoded.size()));
      if (n <= 0) return 0;
      encoded.resize(static_cast<std::size_t>(n));
    } else {
      // Typesize, shuffle and block size from the edit word's high bits.
      const std::size_t typesize = std::size_t{1} << ((edit >> 24) % 4);
      const int shuffle = static_cast<int>((edit >> 26) % 3);
      encoded.resize(plain.size() + BLOSC_MAX_OVERHEAD);
      const int n = blosc_compress_ctx(5, shuffle, typesize, plain.size(), plain.data(), encoded.data(), encoded.size(),
                                       (edit >> 28) % 2 ? "lz4hc" : "lz4", (edit >> 29) % 2 ? 256 : 0, 1);
      if (n <= 0) return 0;
      encoded.resize(static_cast<std::size_t>(n));
    }
    // Unchanged when the edit's byte is 0: then the valid encoding itself must decode.
    const auto change = static_cast<std::uint8_t>(edit >> 16);
    encoded[(edit & 0xffff) % encoded.size()] ^= change;
    const bool decoded = mode == 2 ? check_lz4(encoded, plain.size()) : check_blosc(encoded);
    if (change == 0 && plain.size() <= (1u << 20) && !decoded) violated("a valid encoding was refused");
  }
  return 0;
}

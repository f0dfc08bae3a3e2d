// The portable (CPU and GPU) zstd decoders on arbitrary bytes: the serial frame decoder
// (src/codec/portable/zstd_frame.hpp) and the GPU's block jobs (src/cuda/zstd_gpu_jobs.hpp, listed
// and run on the host with 32 emulated lanes a frame, the Huffman literals decoded serially; then
// split over 8 lanes, and over 32 with 256 lanes a frame). None may read or write outside its buffers (ASan sees the exact-size
// heap buffers here), the three runs of the jobs agree, and whatever any accepts, libzstd decodes
// to the same bytes.
//
// The first byte picks the mode:
//   0: a zstd frame, as it is; bytes 1-3 give the output capacity.
//   1: the rest is data that libzstd compresses here; bytes 1-4 say at which level (and with or
//      without checksum and long-distance matching) and where one byte of the frame is changed
//      and to what, so the fuzzer reaches deep into valid frames without a seed corpus.
#include <zstd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "codec/portable/zstd_frame.hpp"
#include "cuda/zstd_gpu_jobs.hpp"

namespace {

namespace portable = zarrdirect::codec::portable;
using Bytes = std::vector<std::uint8_t>;

[[noreturn]] void violated(const char* what) {
  std::fprintf(stderr, "property violated: %s\n", what);
  std::abort();
}

constexpr std::uint64_t kMaxDecoded = 1 << 22;

// The block jobs' status for a frame (into exactly-sized output and scratch).
portable::DecodeStatus decode_with_block_jobs(const Bytes& frame, std::size_t capacity, Bytes& out,
                                              std::uint32_t literal_lanes, std::uint32_t frame_lanes) {
  zarrdirect::cuda::ZstdGpuJobs jobs;
  std::uint64_t scratch_size = 0;
  const portable::DecodeStatus listed = zarrdirect::cuda::append_zstd_jobs(frame, 0, 0, capacity, scratch_size, jobs);
  if (listed != portable::DecodeStatus::ok) return listed;
  out.assign(capacity, 0);
  Bytes scratch(scratch_size);
  std::vector<portable::DecodeOutcome> outcomes;
  zarrdirect::cuda::run_zstd_jobs_on_host(jobs, frame.data(), out.data(), scratch.data(), outcomes, literal_lanes,
                                          frame_lanes);
  if (outcomes.size() != 1) violated("one frame listed, not one outcome");
  if (outcomes[0].status == portable::DecodeStatus::ok) out.resize(outcomes[0].written);
  return outcomes[0].status;
}

// Whether ours decoded it.
bool check_frame(const Bytes& frame, std::size_t capacity) {
  // The plan and the decoder agree on what they refuse for the header's sake.
  const portable::ZstdFramePlan plan = portable::zstd_frame_plan(frame.data(), frame.size(), kMaxDecoded);
  Bytes ours(capacity);
  auto workspace = std::make_unique<portable::ZstdWorkspace>();
  const portable::DecodeOutcome outcome =
      portable::zstd_decode_frame(frame.data(), frame.size(), ours.data(), capacity, *workspace, kMaxDecoded);
  if (plan.status != portable::DecodeStatus::ok && outcome.status != plan.status)
    violated("the decoder and the plan disagree on the header");
  Bytes by_blocks;
  const portable::DecodeStatus blocks_status = capacity <= kMaxDecoded
                                                    ? decode_with_block_jobs(frame, capacity, by_blocks, 1, 32)
                                                    : portable::DecodeStatus::unsupported;
  if (capacity <= kMaxDecoded) {
    for (const std::uint32_t lanes : {8u, 32u}) {
      Bytes split;
      // 32 lanes a stream with a block of threads a frame, as the decoder's batches of few frames run.
      if (decode_with_block_jobs(frame, capacity, split, lanes, lanes == 32 ? 256 : 32) != blocks_status)
        violated("literals split over lanes and decoded serially differ in status");
      if (blocks_status == portable::DecodeStatus::ok && split != by_blocks)
        violated("literals split over lanes and decoded serially differ in bytes");
    }
  }
  const bool blocks_decoded = blocks_status == portable::DecodeStatus::ok;
  if (outcome.status != portable::DecodeStatus::ok && !blocks_decoded) return false;
  Bytes reference(capacity);
  const std::size_t n = ZSTD_decompress(reference.data(), reference.size(), frame.data(), frame.size());
  if (ZSTD_isError(n)) violated("accepted a frame libzstd refuses");
  if (blocks_decoded && (by_blocks.size() != n || (n > 0 && std::memcmp(by_blocks.data(), reference.data(), n) != 0)))
    violated("the block jobs' bytes differ from libzstd's");
  if (outcome.status != portable::DecodeStatus::ok) return false;
  if (outcome.written != plan.content_size) violated("decoded size differs from the plan's");
  if (n != outcome.written) violated("decoded size differs from libzstd's");
  if (n > 0 && std::memcmp(ours.data(), reference.data(), n) != 0) violated("bytes differ from libzstd's");
  // The block jobs leave some valid frames to libzstd (`unsupported`: scratch past 4x the content,
  // for frames of many tiny blocks), and refuse nothing else the serial decoder takes.
  if (!blocks_decoded && blocks_status != portable::DecodeStatus::unsupported)
    violated("the serial decoder took a frame the block jobs refused");
  return true;
}

std::uint32_t le32(const std::uint8_t* p) {
  return static_cast<std::uint32_t>(p[0]) | (static_cast<std::uint32_t>(p[1]) << 8) |
         (static_cast<std::uint32_t>(p[2]) << 16) | (static_cast<std::uint32_t>(p[3]) << 24);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 5) return 0;
  if (data[0] % 2 == 0) {
    const std::size_t capacity = static_cast<std::size_t>(data[1]) | (static_cast<std::size_t>(data[2]) << 8) |
                                 (static_cast<std::size_t>(data[3] % 64) << 16);
    check_frame(Bytes(data + 4, data + size), capacity);
    return 0;
  }
  const std::uint32_t edit = le32(data + 1);
  const Bytes plain(data + 5, data + size);
  // Level -4..19 from the edit word's top bits; checksum and long-distance matching from two more.
  const int level = static_cast<int>((edit >> 24) % 24) - 4;
  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, level == 0 ? 1 : level);
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, (edit >> 30) & 1);
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_enableLongDistanceMatching, (edit >> 31) != 0 ? 1 : 2);
  Bytes encoded(ZSTD_compressBound(plain.size()));
  const std::size_t n = ZSTD_compress2(cctx, encoded.data(), encoded.size(), plain.data(), plain.size());
  ZSTD_freeCCtx(cctx);
  if (ZSTD_isError(n)) return 0;
  encoded.resize(n);
  // Unchanged when the edit's byte is 0: then the valid frame itself must decode.
  const auto change = static_cast<std::uint8_t>(edit >> 16);
  encoded[(edit & 0xffff) % encoded.size()] ^= change;
  const bool decoded = check_frame(encoded, plain.size());
  if (change == 0 && !decoded) violated("a valid frame was refused");
  return 0;
}

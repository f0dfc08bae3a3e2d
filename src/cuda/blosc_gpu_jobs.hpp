// The GPU's work list for blosc frames, built on the host: one job per compressed stream (a blosc
// block is 1 stream, or `typesize` streams when split) and one unshuffle job per shuffled block.
// Streams are the unit a warp decodes (lz4_warp_kernels.cuh), so that a batch of chunks gives
// thousands of independent jobs; the unshuffles run afterwards (blosc_unshuffle_kernels.cuh).
//
// Finding the streams means reading each stream's 4-byte size field, which the host does from the
// stored bytes it already holds (codec::portable::blosc_block_streams, the same code the CPU
// decoder uses), checking every stream against the frame's bytes before a job is listed.
//
// Pure host C++ (no CUDA): tested without a GPU, including by running a frame's jobs with the
// portable decoders (run_blosc_jobs_on_host) and comparing with c-blosc.
#pragma once

#include <cstdint>
#include <span>
#include <type_traits>
#include <vector>

#include "codec/portable/blosc_frame.hpp"
#include "codec/portable/decode_status.hpp"

namespace zarrdirect::cuda {

// One stream: src_size stored bytes at src_offset in the batch's source, decoding to exactly
// dst_size bytes at dst_offset in the batch's output (or in its scratch, when to_scratch). A
// stream whose stored size equals its decoded size is stored raw (blosc's rule) and is copied.
struct GpuBloscStreamJob {
  std::uint64_t src_offset = 0;
  std::uint64_t dst_offset = 0;
  std::uint32_t src_size = 0;
  std::uint32_t dst_size = 0;
  std::uint32_t to_scratch = 0;  // 1: the block is shuffled, its streams decode into scratch
  std::uint32_t unused = 0;
  bool raw() const { return src_size == dst_size; }
};

// One shuffled block: `size` bytes at scratch_offset in the scratch, unshuffled (byte or bit
// shuffle of elements of `typesize` bytes) into dst_offset in the output, once all its streams
// are decoded.
struct GpuUnshuffleJob {
  std::uint64_t scratch_offset = 0;
  std::uint64_t dst_offset = 0;
  std::uint32_t size = 0;
  std::uint32_t typesize = 1;
  std::uint32_t bit_shuffle = 0;  // 0: byte shuffle, 1: bit shuffle
  std::uint32_t unused = 0;
};

// Tables are copied to the device byte for byte.
static_assert(std::is_trivially_copyable_v<GpuBloscStreamJob> && std::is_trivially_copyable_v<GpuUnshuffleJob>);
static_assert(sizeof(GpuBloscStreamJob) == 32 && sizeof(GpuUnshuffleJob) == 32);

struct BloscGpuJobs {
  std::vector<GpuBloscStreamJob> streams;
  std::vector<GpuUnshuffleJob> unshuffles;
  void clear() {
    streams.clear();
    unshuffles.clear();
  }
};

// Appends the jobs of one frame that blosc_plan accepted as `frame`: `bytes` are its stored bytes
// on the host (at least frame.cbytes), which sit at src_offset in the batch's source; its decoded
// bytes go to dst_offset in the batch's output; shuffled blocks take frame.scratch_size() bytes of
// scratch each from scratch_end (rounded up to 16; scratch_end advances). On anything but `ok`
// (a stream's size field that the frame's bytes cannot hold) nothing is appended and scratch_end
// is unchanged: the caller decodes that chunk on the CPU, which reports the damage.
codec::portable::DecodeStatus append_blosc_jobs(const codec::portable::BloscFrame& frame,
                                                std::span<const std::uint8_t> bytes, std::uint64_t src_offset,
                                                std::uint64_t dst_offset, std::uint64_t& scratch_end,
                                                BloscGpuJobs& jobs);

// Runs jobs the way the kernels do, with the portable decoders, on host buffers (src, dst and
// scratch stand for the batch's device buffers): the reference the kernels and the table are
// checked against. statuses gets one status per stream job.
void run_blosc_jobs_on_host(const BloscGpuJobs& jobs, const std::uint8_t* src, std::uint8_t* dst,
                            std::uint8_t* scratch, std::vector<codec::portable::DecodeStatus>& statuses);

}  // namespace zarrdirect::cuda

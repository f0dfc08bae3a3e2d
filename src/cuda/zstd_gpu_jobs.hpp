// The GPU's work list for zstd frames, built on the host: one job per block, one per frame (the
// jobs and the two decoding steps: codec/portable/zstd_block_jobs.hpp, zstd_block_decode.hpp).
//
// Listing walks the frame's block headers and, in each compressed block, the literals and
// sequences section headers and table descriptions (a few dozen bytes a block; the streams
// themselves are the GPU's). It resolves what the format leaves to earlier blocks, the tree of
// "treeless" literals and the "repeat" sequence tables, to the description each one re-uses, so
// that every block's streams can be decoded on their own. It checks every size it reads against the
// frame's bytes, and that the blocks' literals and sequences fit the content size, which bounds the
// scratch a frame takes.
//
// Pure host C++ (no CUDA): tested without a GPU, including by running the jobs with the portable
// steps (run_zstd_jobs_on_host) and comparing with libzstd.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "codec/portable/decode_status.hpp"
#include "codec/portable/zstd_block_jobs.hpp"

namespace zarrdirect::cuda {

struct ZstdGpuJobs {
  std::vector<codec::portable::ZstdFrameJob> frames;
  std::vector<codec::portable::ZstdBlockJob> blocks;
  void clear() {
    frames.clear();
    blocks.clear();
  }
};

// Appends the jobs of the single zstd frame that is all of `bytes` (its stored bytes on the host,
// which sit at src_offset in the batch's source), decoding to dst_offset in the batch's output, at
// most dst_capacity bytes; its blocks' scratch is taken from scratch_end (which advances, by a
// multiple of 16). On anything but `ok` nothing is appended and scratch_end is unchanged: the
// caller decodes that chunk on the CPU, which names the damage or handles what this decoder leaves
// to libzstd (`unsupported`: a dictionary, no content size, more frames after this one, a content
// size over dst_capacity, or a frame whose scratch would pass 4x its content).
codec::portable::DecodeStatus append_zstd_jobs(std::span<const std::uint8_t> bytes, std::uint64_t src_offset,
                                               std::uint64_t dst_offset, std::uint64_t dst_capacity,
                                               std::uint64_t& scratch_end, ZstdGpuJobs& jobs);

// Appends jobs listed at offsets 0 (one chunk's, listed before its place in a batch was known) to
// `into`, moved to their place: src_base into the batch's source, dst_base into its output,
// scratch_base into its scratch; their blocks' indexes follow into's.
void append_rebased(const ZstdGpuJobs& listed, std::uint64_t src_base, std::uint64_t dst_base,
                    std::uint64_t scratch_base, ZstdGpuJobs& into);

// Runs jobs the way the kernels do (step one for every block and slot, each Huffman stream split
// over `literal_lanes` lanes (1: the serial decoder), then step two for every frame with
// `frame_lanes` lanes: 32 as a warp, 256 as a block of threads), with the portable code, on host
// buffers standing for the batch's device buffers: the reference the kernels and the listing are
// checked against. outcomes gets one outcome per frame job.
void run_zstd_jobs_on_host(const ZstdGpuJobs& jobs, const std::uint8_t* src, std::uint8_t* dst, std::uint8_t* scratch,
                           std::vector<codec::portable::DecodeOutcome>& outcomes, std::uint32_t literal_lanes = 1,
                           std::uint32_t frame_lanes = 32);

}  // namespace zarrdirect::cuda

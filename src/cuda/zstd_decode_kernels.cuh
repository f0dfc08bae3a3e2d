// Launcher for the batched zstd decoder (zstd_decode_kernels.cu). A plain host declaration: it
// decodes the frames of a batch listed as block jobs (cuda/zstd_gpu_jobs.hpp) in two launches on
// `stream`, running the portable steps of codec/portable/zstd_block_decode.hpp on the device, and
// leaves one outcome per frame; nothing here throws or reads a status back (the caller checks the
// outcomes after its stream synchronizes, names the chunk of any frame that is not `ok`, and
// decodes `unsupported` ones with libzstd).
//
//   step one: the literals, each Huffman stream decoded by 1, 8 or 32 lanes (chosen by the
//     batch's size: a small batch splits each stream over many lanes so that it does not wait on
//     one thread per stream; codec/portable/zstd_huffman_lanes.hpp), then the sequences, a thread
//     per block;
//   step two: one warp per frame, or a block of 256 threads per frame for batches of few frames.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "codec/portable/decode_status.hpp"
#include "codec/portable/zstd_block_jobs.hpp"

namespace zarrdirect::cuda {

// Decodes `frame_count` frames whose blocks are blocks[0, block_count): frame i writes its content
// at dst + frames[i].dst and gets outcomes[i]. `blocks`, `frames` and `outcomes` are device
// arrays; src, dst and scratch the batch's device buffers, scratch as large as the listing took
// (each block's workspace, literals and sequences). Returns the launch status (cudaGetLastError
// after the launches); execution errors show up at the stream's next synchronization.
cudaError_t launch_zstd_decode(const codec::portable::ZstdBlockJob* blocks, std::uint32_t block_count,
                               const codec::portable::ZstdFrameJob* frames, std::uint32_t frame_count,
                               const std::uint8_t* src, std::uint8_t* dst, std::uint8_t* scratch,
                               codec::portable::DecodeOutcome* outcomes, cudaStream_t stream);

// The steps alone, as launch_zstd_decode runs them one after the other on `stream` (for
// kernel-level timing: bench/zstd_kernel_bench.cpp): step one's two launches each alone
// (literals, sequences), both of them (launch_zstd_block_slots), and step two.
// launch_zstd_literals' `lanes` is the lanes a Huffman stream: 1, 8 or 32, or 0 for the choice
// launch_zstd_decode makes (literal_lanes); anything else is cudaErrorInvalidValue.
cudaError_t launch_zstd_literals(const codec::portable::ZstdBlockJob* blocks, std::uint32_t block_count,
                                 const std::uint8_t* src, std::uint8_t* scratch, cudaStream_t stream,
                                 std::uint32_t lanes);
// The lanes a Huffman stream launch_zstd_decode takes, whatever the batch: 32
// (ZARRDIRECT_ZSTD_LITERAL_LANES=1|8|32 fixes it, for benchmarks).
std::uint32_t literal_lanes();
// The threads a frame's step two takes for a batch of `frame_count` frames: 32 (a warp) or 256 (a
// block of threads) (ZARRDIRECT_ZSTD_FRAME_TEAM=32|256 fixes it, for benchmarks).
std::uint32_t frame_team_for(std::uint32_t frame_count);
cudaError_t launch_zstd_sequences(const codec::portable::ZstdBlockJob* blocks, std::uint32_t block_count,
                                  const std::uint8_t* src, std::uint8_t* scratch, cudaStream_t stream);
cudaError_t launch_zstd_block_slots(const codec::portable::ZstdBlockJob* blocks, std::uint32_t block_count,
                                    const std::uint8_t* src, std::uint8_t* scratch, cudaStream_t stream);
// launch_zstd_execute's `team` is the threads a frame: 32 or 256, or 0 for frame_team_for's choice;
// anything else is cudaErrorInvalidValue.
cudaError_t launch_zstd_execute(const codec::portable::ZstdBlockJob* blocks,
                                const codec::portable::ZstdFrameJob* frames, std::uint32_t frame_count,
                                const std::uint8_t* src, std::uint8_t* dst, std::uint8_t* scratch,
                                codec::portable::DecodeOutcome* outcomes, cudaStream_t stream, std::uint32_t team);

}  // namespace zarrdirect::cuda

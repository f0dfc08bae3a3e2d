// Launcher for the batched zstd decode kernel (zstd_decode_kernels.cu). A plain host declaration:
// it decodes a table of independent zstd frames in one launch, running the portable decoder of
// src/codec/portable/zstd_frame.hpp on the device, and leaves one outcome per job; nothing here
// throws or reads a status back (the caller checks the outcomes after its stream synchronizes,
// names the chunk of any job that is not `ok`, and decodes `unsupported` ones with libzstd).
//
// First version: one device thread decodes one frame from start to end (the portable code is
// sequential); parallelism comes from the number of jobs, so a batch should hold many.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "codec/portable/decode_status.hpp"
#include "codec/portable/zstd_frame.hpp"
#include "cuda/gpu_decode_job.hpp"

namespace zarrdirect::cuda {

// Device scratch each job needs: its frame's tables (Huffman, the three sequence code tables,
// repeat offsets, length code tables), 9720 bytes. Job i uses scratch + i * kZstdScratchPerJob.
constexpr std::uint64_t kZstdScratchPerJob = sizeof(codec::portable::ZstdWorkspace);

// Decodes `count` zstd frames: job i reads the single frame src[src_offset, + src_size) and writes
// its content (at most dst_capacity bytes) at dst + dst_offset; outcomes[i] gets its status and
// decoded size. A frame whose content size exceeds dst_capacity is output_overflow, before
// anything is written; frames with a dictionary, without a content size, or followed by more
// frames are `unsupported` (see zstd_frame.hpp). `jobs` and `outcomes` are device arrays of
// `count`; src and dst device buffers; scratch a device buffer of count * kZstdScratchPerJob
// bytes (cudaMalloc's alignment). Returns the launch status (cudaGetLastError after the launch);
// execution errors show up at the stream's next synchronization.
cudaError_t launch_zstd_decode(const GpuDecodeJob* jobs, std::uint32_t count, const std::uint8_t* src,
                               std::uint8_t* dst, std::uint8_t* scratch, codec::portable::DecodeOutcome* outcomes,
                               cudaStream_t stream);

}  // namespace zarrdirect::cuda

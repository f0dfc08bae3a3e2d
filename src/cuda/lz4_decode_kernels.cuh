// Launchers for the batched LZ4 and blosc decode kernels (lz4_decode_kernels.cu). Plain host
// declarations. Each decodes a table of independent jobs in one launch, running the portable
// decoders of src/codec/portable/ on the device, and leaves one status per job; nothing here
// throws or reads a status back (the caller checks the statuses after its stream synchronizes and
// names the chunk of any job that is not `ok`).
//
// First version: one device thread decodes one job from start to end (the portable code is
// sequential); parallelism comes from the number of jobs, so a batch should hold many. The read
// path now uses the warp-per-block kernels (lz4_warp_kernels.cuh); these
// stay as the baseline bench/lz4_kernel_bench.cpp times them against. Both
// launchers return the launch status (cudaGetLastError after the launch); execution errors show
// up at the stream's next synchronization.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <type_traits>

#include "codec/portable/blosc_frame.hpp"
#include "codec/portable/decode_status.hpp"
#include "cuda/gpu_decode_job.hpp"

namespace zarrdirect::cuda {

// One blosc block: block `block` of the frame that starts at src + frame_offset, planned on the
// host by codec::portable::blosc_plan (which checked the header and block starts against the
// frame's bytes, and the frame's nbytes against the room at dst + dst_offset).
struct GpuBloscBlockJob {
  codec::portable::BloscFrame frame;
  std::uint64_t frame_offset = 0;    // where the frame starts in the batch's source
  std::uint64_t dst_offset = 0;      // where the frame's decoded bytes start (block i at + i * blocksize)
  std::uint64_t scratch_offset = 0;  // frame.scratch_size() bytes of this job's own in the scratch buffer
  std::uint32_t block = 0;
};
// Job tables are built on the host and copied to the device byte for byte.
static_assert(std::is_trivially_copyable_v<GpuBloscBlockJob> && std::is_trivially_copyable_v<GpuDecodeJob> &&
              std::is_trivially_copyable_v<codec::portable::DecodeOutcome>);

// Decodes `count` LZ4 blocks: job i reads src[src_offset, + src_size) and writes at most
// dst_capacity bytes at dst + dst_offset; outcomes[i] gets its status and decoded size. `jobs` and
// `outcomes` are device arrays of `count`; src and dst device buffers.
cudaError_t launch_lz4_decode(const GpuDecodeJob* jobs, std::uint32_t count, const std::uint8_t* src,
                              std::uint8_t* dst, codec::portable::DecodeOutcome* outcomes, cudaStream_t stream);

// Decodes `count` blosc blocks (any mix of frames); statuses[i] gets job i's status. `jobs` and
// `statuses` are device arrays of `count`; src, dst and scratch device buffers (scratch may be null
// when no job needs any).
cudaError_t launch_blosc_decode(const GpuBloscBlockJob* jobs, std::uint32_t count, const std::uint8_t* src,
                                std::uint8_t* dst, std::uint8_t* scratch, codec::portable::DecodeStatus* statuses,
                                cudaStream_t stream);

}  // namespace zarrdirect::cuda

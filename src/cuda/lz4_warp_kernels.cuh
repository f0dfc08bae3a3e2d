// Launchers for the warp-per-block LZ4 decode kernels (lz4_warp_kernels.cu): each job is decoded
// by the 32 lanes of one warp together (lz4_warp_decode.cuh), where the first kernels
// (lz4_decode_kernels.cuh) give a job to one thread; the jobs, statuses and results are the same.
// Plain host declarations; nothing here throws or reads a status back (the caller checks the
// statuses after its stream synchronizes and names the chunk of any job that is not `ok`). Both
// return the launch status (cudaGetLastError after the launch); execution errors show up at the
// stream's next synchronization.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "codec/portable/decode_status.hpp"
#include "cuda/blosc_gpu_jobs.hpp"
#include "cuda/gpu_decode_job.hpp"

namespace zarrdirect::cuda {

// Decodes `count` LZ4 blocks (numcodecs lz4 chunks after their size header), one warp each: job i
// reads src[src_offset, + src_size) and writes at most dst_capacity bytes at dst + dst_offset;
// outcomes[i] gets codec::portable::lz4_decode_block's status and decoded size for it. `jobs`
// and `outcomes` are device arrays of `count`; src and dst device buffers that do not overlap.
cudaError_t launch_lz4_warp_decode(const GpuDecodeJob* jobs, std::uint32_t count, const std::uint8_t* src,
                                   std::uint8_t* dst, codec::portable::DecodeOutcome* outcomes, cudaStream_t stream);

// Decodes `count` blosc streams (blosc_gpu_jobs.hpp), one warp each: job i's stored bytes at
// src + src_offset go to dst + dst_offset, or scratch + dst_offset when to_scratch; a raw stream is
// copied, any other must decode to exactly dst_size bytes (else size_mismatch). statuses[i] gets
// job i's status. Shuffled blocks are unshuffled afterwards by launch_blosc_unshuffle on the same
// stream. `jobs` and `statuses` are device arrays of `count`; scratch may be null when no job
// writes to it.
cudaError_t launch_blosc_stream_decode(const GpuBloscStreamJob* jobs, std::uint32_t count, const std::uint8_t* src,
                                       std::uint8_t* dst, std::uint8_t* scratch,
                                       codec::portable::DecodeStatus* statuses, cudaStream_t stream);

}  // namespace zarrdirect::cuda

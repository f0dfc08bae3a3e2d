// Launcher for the blosc unshuffle kernel (blosc_unshuffle_kernels.cu): undoes the byte or bit
// shuffle of many blosc blocks at once, after their streams were decoded into scratch
// (launch_blosc_stream_decode, on the same stream). The layouts are those of
// codec::portable::blosc_byte_unshuffle and blosc_bit_unshuffle, which the tests compare against.
// A plain host declaration; returns the launch status.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "cuda/blosc_gpu_jobs.hpp"

namespace zarrdirect::cuda {

// Unshuffles `count` blocks: job i reads `size` bytes at scratch + scratch_offset and writes them
// unshuffled at dst + dst_offset. One thread block per job, its threads over the block's elements.
// `jobs` a device array of `count`; scratch and dst device buffers that do not overlap.
cudaError_t launch_blosc_unshuffle(const GpuUnshuffleJob* jobs, std::uint32_t count, const std::uint8_t* scratch,
                                   std::uint8_t* dst, cudaStream_t stream);

}  // namespace zarrdirect::cuda

// Launcher for the batch kernel (batch_kernels.cu). Plain host declaration: included by the sink.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "cuda/batch_entry.hpp"

namespace zarrdirect::cuda {

// Places every entry of a batch with one launch on `stream`: copies each box from `staging`
// (device memory: the batch's uploaded chunks), or from the device address an absolute entry
// names (a chunk in the device cache), to its destination, or writes its fill value.
// `entries` (device memory, `count` of them, at most 65535) is the table; `max_units` the most
// units of any entry. Returns the launch status; execution errors show at the next sync.
cudaError_t launch_batch(const BatchEntry* entries, std::size_t count, std::uint32_t max_units,
                         const std::byte* staging, cudaStream_t stream);

}  // namespace zarrdirect::cuda

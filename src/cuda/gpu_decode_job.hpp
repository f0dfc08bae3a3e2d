// One unit of work for a batched GPU decoder: a compressed frame or block in a device buffer of
// many, and where its decoded bytes go in another. A batch is an array of these in device memory
// beside an array of DecodeOutcome (one per job) that the kernel fills; offsets are relative to the
// batch's source and destination base pointers, so the host builds the table once in pinned memory
// and ships it with one copy.
#pragma once

#include <cstdint>

#include "codec/portable/decode_status.hpp"

namespace zarrdirect::cuda {

struct GpuDecodeJob {
  std::uint64_t src_offset = 0;
  std::uint64_t src_size = 0;
  std::uint64_t dst_offset = 0;
  std::uint64_t dst_capacity = 0;  // bytes the job may write; a decoder stops with output_overflow past it
};

}  // namespace zarrdirect::cuda

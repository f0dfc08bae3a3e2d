// One entry of a batch's descriptor table: where a chunk's box lies in the batch's staging and
// where it goes in the destination, or a fill value to write over a box. Shared by the host
// builder and reference (batch_table.cpp, C++20) and the batch kernel (batch_kernels.cu), so it
// is plain data: no std::span, no engine types.
//
// An entry is a CopyPlan (copy_plan_types.hpp) cut down to kBatchMaxRank dims of 32-bit extents,
// which is what the planner makes of every box of up to 4 non-trivial dims in a destination of
// any strides; boxes the planner leaves with more dims are placed one by one instead.
#pragma once

#include <cstdint>

#include "cuda/copy_plan_types.hpp"

namespace zarrdirect::cuda {

inline constexpr int kBatchMaxRank = 4;

struct BatchEntry {
  // Bytes from the start of the batch's staging to the box's first unit; with `src_absolute`, the
  // box's first unit's address itself (a chunk already in device memory: the device cache).
  std::uint64_t src_offset = 0;
  std::uint64_t dst = 0;         // address of the box's first unit in the destination
  std::uint32_t count = 0;       // units to write: the product of the extents
  std::uint8_t unit = 1;         // bytes per unit: 1, 2, 4, 8 or 16
  std::uint8_t rank = 1;         // 1..kBatchMaxRank
  std::uint8_t fill = 0;         // 1: write `value` (no source)
  std::uint8_t src_absolute = 0;  // 1: src_offset is an address, not an offset into the staging
  std::uint32_t extent[kBatchMaxRank] = {};    // outer to inner
  std::int64_t src_stride[kBatchMaxRank] = {}; // in units
  std::int64_t dst_stride[kBatchMaxRank] = {}; // in units
  unsigned char value[16] = {};                // the unit a fill writes
};

// Source and destination offsets (in units, from the entry's origins) of the unit with C-order
// index `i` of the entry's loop. R is the entry's rank, known at compile time in the kernel and
// picked by a switch in the host reference, so both run the same arithmetic.
template <int R>
ZARRDIRECT_HOST_DEVICE inline void batch_unit_offsets(const BatchEntry& entry, std::uint32_t i, std::int64_t& src,
                                                      std::int64_t& dst) {
  std::int64_t s = 0;
  std::int64_t d = 0;
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
  for (int k = R - 1; k > 0; --k) {
    const std::uint32_t extent = entry.extent[k];
    const std::uint32_t index = i % extent;
    i /= extent;
    s += static_cast<std::int64_t>(index) * entry.src_stride[k];
    d += static_cast<std::int64_t>(index) * entry.dst_stride[k];
  }
  src = s + static_cast<std::int64_t>(i) * entry.src_stride[0];
  dst = d + static_cast<std::int64_t>(i) * entry.dst_stride[0];
}

}  // namespace zarrdirect::cuda

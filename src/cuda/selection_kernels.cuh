// Launchers for the selection kernels (selection_kernels.cu): placing the selected elements of
// one chunk, or writing the fill value at them, from per-axis index tables in device memory.
// Plain host declarations, included by the C++ sink (selection_sink.cpp).
//
// Each launches on `stream` and returns the launch status; execution errors show up at the
// stream's next synchronization.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace zarrdirect::cuda {

inline constexpr int kMaxSelectionRank = 32;

// One chunk's part of a selection: per axis, the entries [first, first + extent) of the sorted
// tables (index: array index; out: output position) that fall in the chunk. Element `i` of the
// part (C order over the extents) comes from byte
//   sum((index[d][first[d] + i_d] - origin[d]) * src_stride[d]) - src_shift
// of the source and goes to byte sum(out[d][first[d] + i_d] * dst_stride[d]) of the destination.
struct SelectionPart {
  int rank = 0;
  unsigned element_size = 1;
  bool aligned = false;  // source, destination and every stride are multiples of element_size (1, 2, 4, 8, 16)
  std::uint64_t count = 0;
  std::int64_t src_shift = 0;
  unsigned char fill[16] = {};
  std::uint64_t first[kMaxSelectionRank] = {};
  std::uint64_t extent[kMaxSelectionRank] = {};
  std::uint64_t origin[kMaxSelectionRank] = {};
  std::int64_t src_stride[kMaxSelectionRank] = {};
  std::int64_t dst_stride[kMaxSelectionRank] = {};
  const std::uint64_t* index[kMaxSelectionRank] = {};
  const std::uint64_t* out[kMaxSelectionRank] = {};
};

cudaError_t launch_selection_copy(const SelectionPart& part, const std::byte* src, std::byte* dst, cudaStream_t stream);
cudaError_t launch_selection_fill(const SelectionPart& part, std::byte* dst, cudaStream_t stream);

}  // namespace zarrdirect::cuda

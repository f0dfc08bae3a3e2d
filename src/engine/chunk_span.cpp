// chunk_span_of (device_placer.hpp): which bytes of a chunk a batch stages for its boxes. Pure
// host arithmetic, shared by the CUDA placer's caller and tested without a device.
#include <algorithm>
#include <limits>

#include "engine/device_placer.hpp"

namespace zarrdirect {

ChunkSpan chunk_span_of(std::span<const ManyBox> boxes, std::size_t element_size) {
  std::uint64_t first = std::numeric_limits<std::uint64_t>::max();
  std::uint64_t end = 0;
  for (const ManyBox& many : boxes) {
    const ChunkBox& box = many.box;
    if (box.num_elements() == 0) continue;
    Extents last{};
    for (std::size_t d = 0; d < box.rank; ++d) last[d] = box.offset_in_chunk[d] + box.extent[d] - 1;
    first = std::min(first, coords_to_linear(box.offset_in_chunk, box.chunk_shape, box.rank) * element_size);
    end = std::max(end, (coords_to_linear(last, box.chunk_shape, box.rank) + 1) * element_size);
  }
  if (end == 0) return {};
  return {first, end - first};
}

}  // namespace zarrdirect

#include <cstring>

#include "engine/chunk_source.hpp"

namespace zarrdirect {

void gather_box_from_host(const DestinationLayout& source, const ChunkBox& box, std::byte* chunk) {
  const std::size_t rank = box.rank;
  const std::size_t size = source.element_size;
  if (rank == 0) {
    std::memcpy(chunk, source.data, size);
    return;
  }
  for (std::size_t d = 0; d < rank; ++d)
    if (box.extent[d] == 0) return;
  // Element strides of the chunk (C order), and the starting points on both sides.
  Extents chunk_strides{};
  chunk_strides[rank - 1] = 1;
  for (std::size_t d = rank - 1; d-- > 0;) chunk_strides[d] = chunk_strides[d + 1] * box.chunk_shape[d + 1];
  std::uint64_t out = 0;
  for (std::size_t d = 0; d < rank; ++d) out += box.offset_in_chunk[d] * chunk_strides[d];
  const std::byte* in = source.address_of(box.offset_in_dest);
  const std::uint64_t row = box.extent[rank - 1];
  const std::int64_t inner_stride = source.byte_strides[rank - 1];
  const bool packed_rows = inner_stride == static_cast<std::int64_t>(size);
  // Odometer over the dimensions before the last, one row of the box per step.
  Extents index{};
  while (true) {
    std::byte* to = chunk + out * size;
    if (packed_rows) {
      std::memcpy(to, in, row * size);
    } else {
      for (std::uint64_t i = 0; i < row; ++i) std::memcpy(to + i * size, in + static_cast<std::int64_t>(i) * inner_stride, size);
    }
    std::size_t d = rank - 1;
    while (true) {
      if (d == 0) return;
      --d;
      if (++index[d] < box.extent[d]) {
        in += source.byte_strides[d];
        out += chunk_strides[d];
        break;
      }
      in -= source.byte_strides[d] * static_cast<std::int64_t>(box.extent[d] - 1);
      out -= chunk_strides[d] * (box.extent[d] - 1);
      index[d] = 0;
    }
  }
}

void HostSource::gather(unsigned, const ChunkBox& box, std::span<std::byte> chunk) {
  gather_box_from_host(layout_, box, chunk.data());
}

std::span<const std::byte> HostSource::whole_chunk(unsigned, const ChunkBox& box) {
  if (!box.covers_chunk() || !layout_.box_is_contiguous(box)) return {};
  return {layout_.address_of(box.offset_in_dest), static_cast<std::size_t>(box.num_elements()) * layout_.element_size};
}

}  // namespace zarrdirect

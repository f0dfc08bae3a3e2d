#include "util/box_copy.hpp"

#include <algorithm>
#include <cstring>

namespace zarrdirect {

namespace {

// Calls run(dest_pointer, chunk_element_index) for each innermost row of the box, with rows of
// box.extent[rank-1] elements. Odometer over the outer dimensions.
template <typename Row>
void for_each_row(const ChunkBox& box, const DestinationLayout& dest, Row&& run) {
  const std::size_t rank = box.rank;
  if (rank == 0) {
    run(dest.data, std::uint64_t{0});
    return;
  }
  for (std::size_t d = 0; d < rank; ++d)
    if (box.extent[d] == 0) return;
  const Extents chunk_strides = c_order_strides(box.chunk_shape, rank);
  Extents index{};
  std::byte* out = dest.address_of(box.offset_in_dest);
  std::uint64_t in = 0;
  for (std::size_t d = 0; d < rank; ++d) in += box.offset_in_chunk[d] * chunk_strides[d];
  while (true) {
    run(out, in);
    std::size_t d = rank - 1;
    while (true) {
      if (d == 0) return;
      --d;
      if (++index[d] < box.extent[d]) {
        out += dest.byte_strides[d];
        in += chunk_strides[d];
        break;
      }
      out -= dest.byte_strides[d] * static_cast<std::int64_t>(box.extent[d] - 1);
      in -= chunk_strides[d] * (box.extent[d] - 1);
      index[d] = 0;
    }
  }
}

}  // namespace

void copy_box_to_host(const std::byte* chunk, const ChunkBox& box, const DestinationLayout& dest) {
  const std::size_t size = dest.element_size;
  if (box.rank > 0 && box.covers_chunk() && dest.box_is_contiguous(box)) {
    std::memcpy(dest.address_of(box.offset_in_dest), chunk, box.num_elements() * size);
    return;
  }
  const std::uint64_t row = box.rank ? box.extent[box.rank - 1] : 1;
  const std::int64_t inner_stride = box.rank ? dest.byte_strides[box.rank - 1] : 0;
  const bool packed_rows = box.rank == 0 || inner_stride == static_cast<std::int64_t>(size);
  for_each_row(box, dest, [&](std::byte* out, std::uint64_t in) {
    const std::byte* from = chunk + in * size;
    if (packed_rows) {
      std::memcpy(out, from, row * size);
    } else {
      for (std::uint64_t i = 0; i < row; ++i) std::memcpy(out + static_cast<std::int64_t>(i) * inner_stride, from + i * size, size);
    }
  });
}

void copy_box_from_host(const DestinationLayout& source, const ChunkBox& box, std::byte* chunk) {
  const std::size_t size = source.element_size;
  const std::uint64_t row = box.rank ? box.extent[box.rank - 1] : 1;
  const std::int64_t inner_stride = box.rank ? source.byte_strides[box.rank - 1] : 0;
  const bool packed_rows = box.rank == 0 || inner_stride == static_cast<std::int64_t>(size);
  for_each_row(box, source, [&](const std::byte* in, std::uint64_t out) {
    std::byte* to = chunk + out * size;
    if (packed_rows) {
      std::memcpy(to, in, row * size);
    } else {
      for (std::uint64_t i = 0; i < row; ++i) std::memcpy(to + i * size, in + static_cast<std::int64_t>(i) * inner_stride, size);
    }
  });
}

void fill_box_on_host(const std::byte* fill, const ChunkBox& box, const DestinationLayout& dest) {
  const std::size_t size = dest.element_size;
  const std::uint64_t row = box.rank ? box.extent[box.rank - 1] : 1;
  const std::int64_t inner_stride = box.rank ? dest.byte_strides[box.rank - 1] : 0;
  const bool all_zero = std::all_of(fill, fill + size, [](std::byte b) { return b == std::byte{0}; });
  const bool packed_rows = box.rank == 0 || inner_stride == static_cast<std::int64_t>(size);
  for_each_row(box, dest, [&](std::byte* out, std::uint64_t) {
    if (all_zero && packed_rows) {
      std::memset(out, 0, row * size);
      return;
    }
    for (std::uint64_t i = 0; i < row; ++i) std::memcpy(out + static_cast<std::int64_t>(i) * inner_stride, fill, size);
  });
}

}  // namespace zarrdirect

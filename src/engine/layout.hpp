// Boxes and strided destinations: where each chunk's part of a read lands.
//
// Fixed-capacity arrays (kMaxRank) keep per-chunk work free of allocation.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

namespace zarrdirect {

inline constexpr std::size_t kMaxRank = 32;

using Extents = std::array<std::uint64_t, kMaxRank>;

// The part of one chunk that a read needs, and where it goes.
struct ChunkBox {
  std::size_t rank = 0;
  Extents chunk_shape{};     // the whole (stored) chunk, as decoded
  Extents offset_in_chunk{};
  Extents extent{};          // size of the overlap in each dimension
  Extents offset_in_dest{};  // position of the overlap in the destination

  std::uint64_t num_elements() const;
  // True when the overlap is the whole chunk.
  bool covers_chunk() const;
};

// A strided n-d destination (the region read), strides in bytes.
struct DestinationLayout {
  std::byte* data = nullptr;
  std::size_t rank = 0;
  Extents shape{};
  std::array<std::int64_t, kMaxRank> byte_strides{};
  std::size_t element_size = 1;

  // C-contiguous strides for `shape`.
  static DestinationLayout contiguous(std::byte* data, std::span<const std::uint64_t> shape, std::size_t element_size);
  // Address of the element at `offset_in_dest`.
  std::byte* address_of(const Extents& offset) const;
  // True when the box lands as one contiguous run of bytes in the destination.
  bool box_is_contiguous(const ChunkBox& box) const;
};

// Copies the box's elements from a decoded chunk (C order, box.chunk_shape) into the destination.
void copy_box_to_host(const std::byte* chunk, const ChunkBox& box, const DestinationLayout& dest);

// Writes `fill` (one element) over the box's place in the destination.
void fill_box_on_host(const std::byte* fill, const ChunkBox& box, const DestinationLayout& dest);

}  // namespace zarrdirect

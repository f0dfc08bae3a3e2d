// Moving the elements of a box between a C-order chunk and a strided array on the host.
#pragma once

#include "util/geometry.hpp"

namespace zarrdirect {

// Copies the box's elements from a decoded chunk (C order, box.chunk_shape) into the destination.
void copy_box_to_host(const std::byte* chunk, const ChunkBox& box, const DestinationLayout& dest);

// The reverse: copies the box's place in a strided host array (`source`, laid out as a
// destination would be) into its place in a C-order chunk of box.chunk_shape.
void copy_box_from_host(const DestinationLayout& source, const ChunkBox& box, std::byte* chunk);

// Writes `fill` (one element) over the box's place in the destination.
void fill_box_on_host(const std::byte* fill, const ChunkBox& box, const DestinationLayout& dest);

}  // namespace zarrdirect

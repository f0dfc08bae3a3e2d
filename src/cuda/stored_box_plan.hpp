// Planning the copy of a box out of a chunk that was decoded on the GPU but is still in its stored
// layout: possibly transposed (its axes permuted) and possibly in the other byte order. The copy
// plan (copy_plan_types.hpp) takes any source strides, so a transpose is only other strides, and a
// byte swap is the element's bytes walked backwards (one more innermost dim with source stride -1,
// and for complex numbers a dim over the halves). The existing kernels then place the box, swap and
// transpose included, in the same pass that writes the destination.
//
// Pure host C++: tested without a GPU against the host reference of the copy (copy_plan_test's
// way: the plan applied on the host).
#pragma once

#include <cstddef>
#include <cstdint>

#include "cuda/copy_plan.hpp"
#include "util/geometry.hpp"

namespace zarrdirect::cuda {

// Where a chunk's elements lie in its decoded-but-stored bytes.
struct StoredLayout {
  std::size_t rank = 0;
  Extents strides{};           // per decoded axis, in elements (C order of the stored shape, permuted)
  std::size_t element_size = 1;
  std::size_t swap_unit = 0;   // 0: native order; else bytes reversed in groups of this many
};

struct StoredBoxPlan {
  CopyPlan plan;
  // Bytes from the chunk's first stored byte to the source origin of the plan's first unit (with
  // a byte swap, the last byte of the box's first swap unit).
  std::uint64_t src_offset = 0;
};

// Copying `box` (box.offset_in_chunk and box.extent in decoded axes) from a chunk stored as
// `stored` into `dest`. `chunk_base` and `dst_origin` (the destination address of the box's first
// element) choose the widest aligned unit; the source address is chunk_base + src_offset.
StoredBoxPlan plan_stored_box_copy(const ChunkBox& box, const DestinationLayout& dest, const StoredLayout& stored,
                                   std::uintptr_t chunk_base, std::uintptr_t dst_origin);

// Applies a plan on the host (the kernels' arithmetic, unit by unit): the reference for tests.
void apply_plan_on_host(const CopyPlan& plan, const std::byte* src, std::byte* dst);

}  // namespace zarrdirect::cuda

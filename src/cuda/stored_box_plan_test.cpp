// Placing boxes out of chunks decoded on the GPU but still in their stored layout (byte-swapped,
// transposed), checked on the host: the plan applied unit by unit (the kernels' arithmetic) must
// give exactly what the CPU codec chain's decode followed by a plain box copy gives, in C-order,
// F-order and padded destinations, and write nothing else.
#include "cuda/stored_box_plan.hpp"

#include <gtest/gtest.h>

#include <numeric>
#include <string>
#include <vector>

#include "codec/codec.hpp"
#include "codec/codec_test_support.hpp"
#include "engine/gpu_decode_route.hpp"

namespace zarrdirect::cuda {
namespace {

using nlohmann::json;

constexpr std::byte kUntouched{0xab};

struct Case {
  const char* dtype;
  const char* endian;
  std::vector<std::size_t> order;  // empty: no transpose
};

json chain_codecs(const Case& c, bool compressed) {
  json codecs = json::array();
  if (!c.order.empty()) codecs.push_back({{"name", "transpose"}, {"configuration", {{"order", c.order}}}});
  codecs.push_back({{"name", "bytes"}, {"configuration", {{"endian", c.endian}}}});
  if (compressed) codecs.push_back({{"name", "numcodecs.lz4"}, {"configuration", {{"acceleration", 1}}}});
  return codecs;
}

std::uintptr_t address(const void* p) { return reinterpret_cast<std::uintptr_t>(p); }

TEST(StoredBoxPlan, MatchesTheCpuDecodeForSwapsTransposesAndDestinations) {
  const std::vector<std::uint64_t> chunk{5, 6, 7};
  const std::vector<Case> cases = {
      {"uint16", "little", {}},      {"uint16", "big", {}},        {"float64", "big", {2, 0, 1}},
      {"uint8", "big", {1, 2, 0}},   {"int32", "little", {2, 1, 0}}, {"complex64", "big", {}},
      {"complex128", "big", {0, 2, 1}}, {"uint16", "little", {1, 0, 2}},
  };
  // Boxes: the whole chunk, and a part of it landing inside a larger destination.
  struct BoxCase {
    std::vector<std::uint64_t> offset_in_chunk, extent, offset_in_dest, dest_shape;
  };
  const std::vector<BoxCase> boxes = {{{0, 0, 0}, {5, 6, 7}, {0, 0, 0}, {5, 6, 7}},
                                      {{1, 2, 3}, {3, 4, 4}, {2, 0, 1}, {6, 5, 6}},
                                      {{4, 0, 6}, {1, 6, 1}, {0, 1, 0}, {1, 8, 2}}};
  for (const Case& c : cases) {
    const codec::ArraySpec spec = codec::test::make_spec(chunk, parse_v3_data_type(c.dtype));
    const codec::CodecChain stored_chain = codec::CodecChain::create(chain_codecs(c, false), spec, "t/zarr.json");
    const codec::CodecChain routed_chain = codec::CodecChain::create(chain_codecs(c, true), spec, "t/zarr.json");
    const GpuDecodeRoute route = gpu_decode_route(chain_codecs(c, true), routed_chain);
    ASSERT_EQ(route.codec, GpuCodec::lz4) << route.why;
    StoredLayout layout;
    layout.rank = 3;
    for (std::size_t d = 0; d < 3; ++d) layout.strides[d] = static_cast<std::uint64_t>(route.stored_strides[d]);
    layout.element_size = route.element_size;
    layout.swap_unit = route.swap_unit;

    // Distinct bytes in every position (the copy moves bytes, whatever they mean as values).
    std::vector<std::byte> decoded(static_cast<std::size_t>(spec.nbytes()));
    for (std::size_t i = 0; i < decoded.size(); ++i) decoded[i] = static_cast<std::byte>((i * 37 + 11) % 251);
    const codec::ByteBuffer stored = stored_chain.encode(decoded);  // what the GPU decompresses to
    ASSERT_EQ(stored.size(), decoded.size());
    const std::size_t element = spec.dtype.size;

    for (const BoxCase& b : boxes) {
      for (int shape_kind = 0; shape_kind < 3; ++shape_kind) {  // C, F, padded
        SCOPED_TRACE(std::string(c.dtype) + " " + c.endian + " order " + json(c.order).dump() + " destination " +
                     std::to_string(shape_kind) + " box at " + json(b.offset_in_chunk).dump());
        DestinationLayout dest;
        dest.rank = 3;
        dest.element_size = element;
        std::int64_t stride = static_cast<std::int64_t>(element);
        for (std::size_t n = 0; n < 3; ++n) {
          const std::size_t d = shape_kind == 1 ? n : 2 - n;
          dest.shape[d] = b.dest_shape[d];
          dest.byte_strides[d] = stride;
          stride *= static_cast<std::int64_t>(b.dest_shape[d] + (shape_kind == 2 ? 1 : 0));
        }
        std::vector<std::byte> expected(static_cast<std::size_t>(stride), kUntouched);
        std::vector<std::byte> got = expected;
        ChunkBox box;
        box.rank = 3;
        for (std::size_t d = 0; d < 3; ++d) {
          box.chunk_shape[d] = chunk[d];
          box.offset_in_chunk[d] = b.offset_in_chunk[d];
          box.extent[d] = b.extent[d];
          box.offset_in_dest[d] = b.offset_in_dest[d];
        }
        // Expected: the decoded chunk (C order, native) copied element by element.
        dest.data = expected.data();
        for (std::uint64_t i = 0; i < b.extent[0]; ++i)
          for (std::uint64_t j = 0; j < b.extent[1]; ++j)
            for (std::uint64_t k = 0; k < b.extent[2]; ++k) {
              const std::uint64_t src = ((b.offset_in_chunk[0] + i) * chunk[1] + b.offset_in_chunk[1] + j) * chunk[2] +
                                        b.offset_in_chunk[2] + k;
              const std::int64_t at = static_cast<std::int64_t>(b.offset_in_dest[0] + i) * dest.byte_strides[0] +
                                      static_cast<std::int64_t>(b.offset_in_dest[1] + j) * dest.byte_strides[1] +
                                      static_cast<std::int64_t>(b.offset_in_dest[2] + k) * dest.byte_strides[2];
              std::memcpy(expected.data() + at, decoded.data() + src * element, element);
            }
        dest.data = got.data();
        std::byte* dst = dest.address_of(box.offset_in_dest);
        const StoredBoxPlan plan = plan_stored_box_copy(box, dest, layout, 0, address(dst));
        EXPECT_EQ(plan.plan.count * plan.plan.unit, box.num_elements() * element);
        if (route.swap_unit > 1) {
          EXPECT_EQ(plan.plan.unit, 1u);
        }
        apply_plan_on_host(plan.plan, stored.data() + plan.src_offset, dst);
        EXPECT_EQ(got, expected);
      }
    }
  }
}

TEST(StoredBoxPlan, WidensUnitsWhereAlignmentAllows) {
  // A whole little-endian uint16 chunk into a C-contiguous destination: one run, 16-byte units.
  ChunkBox box;
  box.rank = 2;
  box.chunk_shape[0] = 8;
  box.chunk_shape[1] = 16;
  box.extent = box.chunk_shape;
  DestinationLayout dest;
  dest.rank = 2;
  dest.element_size = 2;
  dest.shape[0] = 8;
  dest.shape[1] = 16;
  dest.byte_strides[0] = 32;
  dest.byte_strides[1] = 2;
  StoredLayout layout;
  layout.rank = 2;
  layout.strides[0] = 16;
  layout.strides[1] = 1;
  layout.element_size = 2;
  const StoredBoxPlan plan = plan_stored_box_copy(box, dest, layout, 256, 4096);
  EXPECT_EQ(plan.plan.rank, 1);
  EXPECT_EQ(plan.plan.unit, 16u);
  EXPECT_EQ(plan.src_offset, 0u);
  // Swapped: byte units, the source origin at the first element's last byte.
  layout.swap_unit = 2;
  const StoredBoxPlan swapped = plan_stored_box_copy(box, dest, layout, 256, 4096);
  EXPECT_EQ(swapped.plan.unit, 1u);
  EXPECT_EQ(swapped.src_offset, 1u);
  EXPECT_EQ(swapped.plan.rank, 2);
}

TEST(StoredBoxPlan, RefusesLayoutsItCannotPlan) {
  ChunkBox box;
  box.rank = 2;
  DestinationLayout dest;
  dest.rank = 2;
  dest.element_size = 4;
  StoredLayout layout;
  layout.rank = 3;  // not the box's
  layout.element_size = 4;
  EXPECT_THROW(plan_stored_box_copy(box, dest, layout, 0, 0), Error);
  layout.rank = 2;
  layout.swap_unit = 3;  // does not divide the element
  EXPECT_THROW(plan_stored_box_copy(box, dest, layout, 0, 0), Error);
}

}  // namespace
}  // namespace zarrdirect::cuda

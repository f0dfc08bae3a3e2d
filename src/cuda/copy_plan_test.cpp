// The planning and index arithmetic of the box kernels, checked on the host: plans for random
// boxes, element sizes, padded strides and misaligned origins are run with the kernels' own
// unit_offsets() and must write exactly what layout.cpp's host copy and fill write. Runs without
// a GPU; the GPU tests (device_read_test.cpp) then only need to confirm the launches.
#include <gtest/gtest.h>

#include <cstring>
#include <algorithm>
#include <random>
#include <set>
#include <vector>

#include "cuda/copy_plan.hpp"
#include "util/box_copy.hpp"

namespace zarrdirect::cuda {
namespace {

// Runs a plan on the host the way the kernels do: the rank-specialized instantiation with
// 32-bit indices for ranks 1-4, the any-rank one with 64-bit indices otherwise.
template <int R, typename Index>
void run_plan_as(const CopyPlan& plan, const std::byte* src, std::byte* dst, const std::byte* fill) {
  PlanDims<R> dims{};
  for (int k = 0; k < plan.rank && k < R; ++k) {
    dims.extent[k] = plan.dims.extent[k];
    dims.src_stride[k] = plan.dims.src_stride[k];
    dims.dst_stride[k] = plan.dims.dst_stride[k];
  }
  for (Index i = 0; i < static_cast<Index>(plan.count); ++i) {
    std::int64_t s = 0;
    std::int64_t d = 0;
    if (fill) {
      unit_offsets<R, Index, false>(dims, plan.rank, i, s, d);
      std::memcpy(dst + d * plan.unit, fill, plan.unit);
    } else {
      unit_offsets<R, Index, true>(dims, plan.rank, i, s, d);
      std::memcpy(dst + d * plan.unit, src + s * plan.unit, plan.unit);
    }
  }
}

void run_plan(const CopyPlan& plan, const std::byte* src, std::byte* dst, const std::byte* fill = nullptr) {
  switch (plan.rank) {
    case 1: run_plan_as<1, std::uint32_t>(plan, src, dst, fill); break;
    case 2: run_plan_as<2, std::uint32_t>(plan, src, dst, fill); break;
    case 3: run_plan_as<3, std::uint32_t>(plan, src, dst, fill); break;
    case 4: run_plan_as<4, std::uint32_t>(plan, src, dst, fill); break;
    default: run_plan_as<kMaxPlanDims, std::uint64_t>(plan, src, dst, fill); break;
  }
}

struct Case {
  ChunkBox box;
  Extents dest_shape{};
  std::vector<std::int64_t> strides;  // bytes, one per dim
  std::size_t element = 1;
  std::size_t dest_bytes = 0;  // span of the destination buffer
  std::size_t misalign = 0;    // bytes the destination's origin is moved from 256-byte alignment
};

Case random_case(std::mt19937& rng) {
  auto pick = [&](std::uint64_t lo, std::uint64_t hi) { return std::uniform_int_distribution<std::uint64_t>(lo, hi)(rng); };
  Case c;
  static constexpr std::size_t kElements[] = {1, 2, 4, 8, 16};
  c.element = kElements[pick(0, 4)];
  c.box.rank = pick(0, 9) == 0 ? pick(5, 7) : pick(0, 4);
  const bool small = c.box.rank > 4;
  for (std::size_t d = 0; d < c.box.rank; ++d) {
    c.box.chunk_shape[d] = pick(1, small ? 3 : 9);
    c.box.offset_in_chunk[d] = pick(0, c.box.chunk_shape[d] - 1);
    c.box.extent[d] = pick(1, c.box.chunk_shape[d] - c.box.offset_in_chunk[d]);
    if (pick(0, 2) == 0) {  // often the whole chunk along this dim
      c.box.offset_in_chunk[d] = 0;
      c.box.extent[d] = c.box.chunk_shape[d];
    }
    c.dest_shape[d] = c.box.extent[d] + (pick(0, 1) ? 0 : pick(0, 3));
    c.box.offset_in_dest[d] = pick(0, c.dest_shape[d] - c.box.extent[d]);
  }
  // Packed strides most of the time; else a gap between elements or padding after rows.
  c.strides.resize(c.box.rank);
  std::int64_t stride = static_cast<std::int64_t>(c.element);
  for (std::size_t d = c.box.rank; d-- > 0;) {
    if (d + 1 == c.box.rank && pick(0, 5) == 0) stride *= 2;
    else if (pick(0, 3) == 0) stride += static_cast<std::int64_t>(c.element * pick(1, 3));
    c.strides[d] = stride;
    stride *= static_cast<std::int64_t>(c.dest_shape[d]);
  }
  c.dest_bytes = static_cast<std::size_t>(stride) + 64;
  c.misalign = pick(0, 3) == 0 ? c.element * pick(1, 3) : 0;
  return c;
}

DestinationLayout layout_of(const Case& c, std::byte* data) {
  DestinationLayout layout;
  layout.data = data;
  layout.rank = c.box.rank;
  layout.element_size = c.element;
  for (std::size_t d = 0; d < c.box.rank; ++d) {
    layout.shape[d] = c.dest_shape[d];
    layout.byte_strides[d] = c.strides[d];
  }
  return layout;
}

std::size_t chunk_bytes(const Case& c) {
  std::size_t n = c.element;
  for (std::size_t d = 0; d < c.box.rank; ++d) n *= c.box.chunk_shape[d];
  return n;
}

// 256-byte aligned storage, like cudaMalloc's.
struct Aligned {
  explicit Aligned(std::size_t n) : storage(n + 512) {
    auto p = reinterpret_cast<std::uintptr_t>(storage.data());
    base = storage.data() + ((256 - p % 256) % 256);
  }
  std::vector<std::byte> storage;
  std::byte* base;
};

TEST(CopyPlan, CopiesMatchTheHostCopy) {
  std::mt19937 rng(20240611);
  std::set<unsigned> units;
  int widest_rank = 0;
  for (int iteration = 0; iteration < 3000; ++iteration) {
    Case c = random_case(rng);
    SCOPED_TRACE(testing::Message() << "iteration " << iteration << ", rank " << c.box.rank << ", element " << c.element);
    std::vector<std::byte> chunk(chunk_bytes(c));
    for (auto& b : chunk) b = static_cast<std::byte>(rng());

    Aligned expected_buffer(c.dest_bytes + c.misalign);
    Aligned got_buffer(c.dest_bytes + c.misalign);
    for (std::size_t i = 0; i < c.dest_bytes + c.misalign; ++i)
      expected_buffer.base[i] = got_buffer.base[i] = static_cast<std::byte>(i * 7 + 3);
    DestinationLayout expected = layout_of(c, expected_buffer.base + c.misalign);
    DestinationLayout got = layout_of(c, got_buffer.base + c.misalign);
    copy_box_to_host(chunk.data(), c.box, expected);

    // As the sink does it: upload the chunk's range to the start of an aligned scratch.
    ChunkRange range = chunk_range(c.box, c.element);
    ASSERT_LE(range.first_byte + range.nbytes, chunk.size());
    ASSERT_EQ(range.nbytes == 0, c.box.num_elements() == 0);
    Aligned scratch(range.nbytes);
    std::memcpy(scratch.base, chunk.data() + range.first_byte, range.nbytes);
    std::byte* dst = got.address_of(c.box.offset_in_dest);
    BoxPlan plan = plan_box_copy(c.box, got, reinterpret_cast<std::uintptr_t>(scratch.base),
                                 reinterpret_cast<std::uintptr_t>(dst));
    ASSERT_GE(plan.plan.rank, 1);
    ASSERT_LE(plan.plan.rank, kMaxPlanDims);
    ASSERT_EQ(plan.plan.count * plan.plan.unit, c.box.num_elements() * c.element);
    ASSERT_EQ(reinterpret_cast<std::uintptr_t>(dst) % plan.plan.unit, 0u);
    if (plan.contiguous) {
      ASSERT_EQ(range.nbytes, c.box.num_elements() * c.element);
      std::memcpy(dst, scratch.base, range.nbytes);
    } else {
      run_plan(plan.plan, scratch.base, dst);
      units.insert(plan.plan.unit);
      widest_rank = std::max(widest_rank, plan.plan.rank);
    }
    ASSERT_EQ(0, std::memcmp(expected_buffer.base, got_buffer.base, c.dest_bytes + c.misalign));
  }
  // The random cases reach every unit width and the any-rank instantiation.
  EXPECT_EQ(units.size(), 5u);
  EXPECT_GT(widest_rank, 4);
}

TEST(CopyPlan, FillsMatchTheHostFill) {
  std::mt19937 rng(7);
  for (int iteration = 0; iteration < 3000; ++iteration) {
    Case c = random_case(rng);
    SCOPED_TRACE(testing::Message() << "iteration " << iteration << ", rank " << c.box.rank << ", element " << c.element);
    std::vector<std::byte> fill(c.element);
    switch (rng() % 4) {
      case 0: break;  // zero
      case 1: std::fill(fill.begin(), fill.end(), std::byte{0x5a}); break;
      case 2:
        for (std::size_t j = 0; j < fill.size(); ++j) fill[j] = static_cast<std::byte>(j % 2 ? 0x7f : 0xc0);
        break;
      default:
        for (auto& b : fill) b = static_cast<std::byte>(rng());
    }
    Aligned expected_buffer(c.dest_bytes + c.misalign);
    Aligned got_buffer(c.dest_bytes + c.misalign);
    for (std::size_t i = 0; i < c.dest_bytes + c.misalign; ++i)
      expected_buffer.base[i] = got_buffer.base[i] = static_cast<std::byte>(i * 5 + 1);
    DestinationLayout expected = layout_of(c, expected_buffer.base + c.misalign);
    DestinationLayout got = layout_of(c, got_buffer.base + c.misalign);
    fill_box_on_host(fill.data(), c.box, expected);

    std::byte* dst = got.address_of(c.box.offset_in_dest);
    std::array<std::byte, 16> unit{};
    BoxPlan plan = plan_box_fill(c.box, got, fill, reinterpret_cast<std::uintptr_t>(dst), unit);
    ASSERT_EQ(plan.plan.count * plan.plan.unit, c.box.num_elements() * c.element);
    ASSERT_EQ(reinterpret_cast<std::uintptr_t>(dst) % plan.plan.unit, 0u);
    run_plan(plan.plan, nullptr, dst, unit.data());
    ASSERT_EQ(0, std::memcmp(expected_buffer.base, got_buffer.base, c.dest_bytes + c.misalign));
  }
}

TEST(CopyPlan, MergesAndWidensTheCommonCases) {
  // A whole 64x64 uint16 chunk into the middle of a 256x256 destination: rows of 128 bytes,
  // 16-byte units, two dims.
  ChunkBox box;
  box.rank = 2;
  box.chunk_shape = {64, 64};
  box.extent = {64, 64};
  box.offset_in_dest = {64, 64};
  std::vector<std::uint64_t> shape = {256, 256};
  DestinationLayout dest = DestinationLayout::contiguous(nullptr, shape, 2);
  BoxPlan plan = plan_box_copy(box, dest, 0, 256 * 64 * 2 + 64 * 2);
  EXPECT_FALSE(plan.contiguous);
  EXPECT_EQ(plan.plan.rank, 2);
  EXPECT_EQ(plan.plan.unit, 16u);
  EXPECT_EQ(plan.plan.dims.extent[0], 64u);
  EXPECT_EQ(plan.plan.dims.extent[1], 8u);
  EXPECT_EQ(plan.plan.dims.dst_stride[0], 256 * 2 / 16);
  EXPECT_EQ(plan.plan.dims.src_stride[0], 64 * 2 / 16);

  // Full rows of a chunk at the bottom edge of the array: one run in both.
  box.extent = {10, 64};
  std::vector<std::uint64_t> rows = {10, 64};
  DestinationLayout slab = DestinationLayout::contiguous(nullptr, rows, 2);
  box.offset_in_dest = {0, 0};
  plan = plan_box_copy(box, slab, 0, 0);
  EXPECT_TRUE(plan.contiguous);
  EXPECT_EQ(plan.plan.rank, 1);
  EXPECT_EQ(plan.plan.count * plan.plan.unit, 10u * 64 * 2);

  // A 0-d array: one element.
  ChunkBox scalar;
  DestinationLayout one = DestinationLayout::contiguous(nullptr, {}, 8);
  plan = plan_box_copy(scalar, one, 0, 0);
  EXPECT_TRUE(plan.contiguous);
  EXPECT_EQ(plan.plan.count * plan.plan.unit, 8u);
  EXPECT_EQ(chunk_range(scalar, 8).nbytes, 8u);
}

TEST(CopyPlan, FillPatternsKeepTheirPeriod) {
  // float64 NaN: its bytes repeat only every 8, so no unit narrower than 8 may carry it.
  ChunkBox box;
  box.rank = 1;
  box.chunk_shape = {10};
  box.extent = {10};
  std::vector<std::uint64_t> shape = {10};
  DestinationLayout dest = DestinationLayout::contiguous(nullptr, shape, 8);
  const std::array<unsigned char, 8> nan = {0, 0, 0, 0, 0, 0, 0xf8, 0x7f};
  std::vector<std::byte> fill(8);
  std::memcpy(fill.data(), nan.data(), 8);
  std::array<std::byte, 16> unit{};
  BoxPlan plan = plan_box_fill(box, dest, fill, 0, unit);
  EXPECT_EQ(plan.plan.unit, 16u);  // 80 bytes: five 16-byte units of two NaNs each
  EXPECT_EQ(0, std::memcmp(unit.data(), nan.data(), 8));
  EXPECT_EQ(0, std::memcmp(unit.data() + 8, nan.data(), 8));
  box.extent = {9};
  box.chunk_shape = {9};
  plan = plan_box_fill(box, dest, fill, 0, unit);
  EXPECT_EQ(plan.plan.unit, 8u);
}

}  // namespace
}  // namespace zarrdirect::cuda

// The gather plan of device write sources, checked on the host: random boxes of strided sources
// packed with the kernels' own index arithmetic (unit_offsets) must equal the host source's
// gather (gather_box_from_host). Runs without a GPU.
#include "cuda/device_source_plan.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "engine/chunk_source.hpp"

namespace zarrdirect::cuda {
namespace {

// Runs `plan` as the copy kernel does (the any-rank instantiation, 64-bit indices).
void run_plan(const CopyPlan& plan, const std::byte* src, std::byte* dst) {
  for (std::uint64_t i = 0; i < plan.count; ++i) {
    std::int64_t s = 0;
    std::int64_t d = 0;
    unit_offsets<kMaxPlanDims, std::uint64_t, true>(plan.dims, plan.rank, i, s, d);
    std::memcpy(dst + d * plan.unit, src + s * plan.unit, plan.unit);
  }
}

TEST(DeviceSourcePlan, GathersMatchTheHostGather) {
  std::mt19937 rng(99);
  auto pick = [&](std::uint64_t lo, std::uint64_t hi) { return std::uniform_int_distribution<std::uint64_t>(lo, hi)(rng); };
  int kernel_plans = 0;
  int contiguous_plans = 0;
  for (int iteration = 0; iteration < 2000; ++iteration) {
    static constexpr std::size_t kElements[] = {1, 2, 4, 8};
    const std::size_t element = kElements[pick(0, 3)];
    ChunkBox box;
    box.rank = pick(1, 4);
    DestinationLayout source;
    source.rank = box.rank;
    source.element_size = element;
    for (std::size_t d = 0; d < box.rank; ++d) {
      source.shape[d] = pick(1, 9);
      box.extent[d] = pick(1, source.shape[d]);
      if (pick(0, 1)) box.extent[d] = source.shape[d];
      box.offset_in_dest[d] = pick(0, source.shape[d] - box.extent[d]);
      box.chunk_shape[d] = box.extent[d];  // a whole chunk: what staging holds
    }
    // Packed strides, or gaps between elements and rows.
    std::int64_t stride = static_cast<std::int64_t>(element);
    for (std::size_t d = box.rank; d-- > 0;) {
      if (pick(0, 3) == 0) stride += static_cast<std::int64_t>(element * pick(1, 2));
      source.byte_strides[d] = stride;
      stride *= static_cast<std::int64_t>(source.shape[d]);
    }
    std::vector<std::byte> memory(static_cast<std::size_t>(stride) + 16);
    for (auto& b : memory) b = static_cast<std::byte>(rng());
    source.data = memory.data();
    SCOPED_TRACE(testing::Message() << "iteration " << iteration << ", rank " << box.rank << ", element " << element);

    const std::size_t nbytes = static_cast<std::size_t>(box.num_elements()) * element;
    std::vector<std::byte> expected(nbytes), got(nbytes + 16);
    gather_box_from_host(source, box, expected.data());
    const std::byte* origin = source.address_of(box.offset_in_dest);
    BoxPlan plan = plan_box_gather(box, source, reinterpret_cast<std::uintptr_t>(origin), 0);
    ASSERT_EQ(plan.plan.count * plan.plan.unit, nbytes);
    if (plan.contiguous) {
      ++contiguous_plans;
      std::memcpy(got.data(), origin, nbytes);
    } else {
      ++kernel_plans;
      run_plan(plan.plan, origin, got.data());
    }
    ASSERT_EQ(std::memcmp(expected.data(), got.data(), nbytes), 0);
  }
  EXPECT_GT(kernel_plans, 100);
  EXPECT_GT(contiguous_plans, 100);
}

}  // namespace
}  // namespace zarrdirect::cuda

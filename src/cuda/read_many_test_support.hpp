// Helpers of the read_many device-path tests (device_placer_test.cpp, device_chunk_decoder_test.cpp):
// patches that share chunks and cut the array's edges, host destinations shaped C, F or padded,
// the per-region host reads they are compared with, and the same read_many into CUDA memory.
#pragma once

#include <cuda_runtime_api.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "cuda/batch_test_arrays.hpp"
#include "engine/array_state.hpp"
#include "test_support.hpp"
#include "zarrdirect/system.hpp"

namespace zarrdirect::test::many {

inline constexpr std::byte kUntouched{0xab};

// Patches of a case: overlapping ones (sharing chunks), one repeated, ones at the array's far
// edge, a single element, and the whole array.
inline std::vector<Region> patches(const std::vector<std::uint64_t>& shape) {
  std::vector<Region> out;
  auto patch = [&](std::vector<std::uint64_t> start, std::uint64_t size) {
    Region region;
    for (std::size_t d = 0; d < shape.size(); ++d) {
      const std::uint64_t first = std::min(start[d], shape[d] - 1);
      region.push_back({first, std::min(first + size, shape[d])});
    }
    out.push_back(region);
  };
  patch({0, 0, 0}, 20);
  patch({5, 7, 9}, 20);
  patch({5, 7, 9}, 20);
  patch({30, 28, 25}, 17);
  patch({shape[0] - 11, shape[1] - 13, shape[2] - 7}, 24);
  patch({shape[0] / 2, 0, shape[2] / 3}, 1);
  out.push_back(full_region(shape));
  return out;
}

struct Buffers {
  std::vector<std::vector<std::byte>> bytes;
  std::vector<DestinationLayout> layouts;
};

// Host buffers for `regions` shaped as destination kind `kind` (C, F, padded), every byte
// kUntouched.
inline Buffers host_buffers(const std::vector<Region>& regions, std::size_t element, std::size_t kind) {
  Buffers out;
  for (const Region& region : regions) {
    const auto shape = batch_destinations(region, element)[kind];
    out.bytes.emplace_back(shape.nbytes, kUntouched);
  }
  for (std::size_t i = 0; i < regions.size(); ++i) {
    const auto shape = batch_destinations(regions[i], element)[kind];
    DestinationLayout layout;
    layout.data = out.bytes[i].data();
    layout.rank = regions[i].size();
    for (std::size_t d = 0; d < layout.rank; ++d) {
      layout.shape[d] = regions[i][d].size();
      layout.byte_strides[d] = shape.byte_strides[d];
    }
    layout.element_size = element;
    out.layouts.push_back(layout);
  }
  return out;
}

// Per-region host reads (the reference), shaped as `kind`.
inline std::vector<std::vector<std::byte>> expected_reads(const Array& array, const std::vector<Region>& regions,
                                                   std::size_t kind) {
  std::vector<std::vector<std::byte>> out;
  for (const Region& region : regions) {
    const auto shape = batch_destinations(region, array.metadata().dtype.size)[kind];
    out.emplace_back(shape.nbytes, kUntouched);
    Destination host;
    host.data = out.back().data();
    host.byte_strides = shape.byte_strides;
    array.read_into(region, host, Settings{});
  }
  return out;
}

inline std::size_t chunk_bytes_of(const Array::Impl& impl) {
  return static_cast<std::size_t>(impl.sharding ? impl.sharding->inner_chain().decoded_spec().nbytes()
                                                : impl.metadata.chunk_nbytes());
}

// ---- On the GPU --------------------------------------------------------------------------------

#define REQUIRE_GPU() \
  if (!cuda_available()) GTEST_SKIP() << describe_system()["io_path_reason"].get<std::string>()

inline void check(cudaError_t status, const char* call) { ASSERT_EQ(status, cudaSuccess) << call << ": " << cudaGetErrorString(status); }

// `regions` read with read_many_into into CUDA memory shaped as `kind`, copied back; with
// `background`, through read_many_into_async on `stream` (null: the library's streams).
inline std::vector<std::vector<std::byte>> gpu_read_many(const Array& array, const std::vector<Region>& regions,
                                                  std::size_t kind, const Settings& settings, ReadStats* stats,
                                                  bool background = false, cudaStream_t stream = nullptr) {
  std::vector<void*> memory;
  std::vector<Destination> destinations;
  std::vector<std::size_t> sizes;
  for (const Region& region : regions) {
    const auto shape = batch_destinations(region, array.metadata().dtype.size)[kind];
    void* device = nullptr;
    check(cudaMalloc(&device, shape.nbytes), "cudaMalloc");
    check(cudaMemset(device, std::to_integer<int>(kUntouched), shape.nbytes), "cudaMemset");
    memory.push_back(device);
    sizes.push_back(shape.nbytes);
    destinations.push_back({device, shape.byte_strides, Device::cuda, stream});
  }
  const ReadStats got = background ? array.read_many_into_async(regions, destinations, settings).stats()
                                   : array.read_many_into(regions, destinations, settings);
  if (stream) check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  if (stats) *stats = got;
  std::vector<std::vector<std::byte>> out;
  for (std::size_t i = 0; i < regions.size(); ++i) {
    out.emplace_back(sizes[i]);
    check(cudaMemcpy(out.back().data(), memory[i], sizes[i], cudaMemcpyDeviceToHost), "cudaMemcpy");
    check(cudaFree(memory[i]), "cudaFree");
  }
  return out;
}

}  // namespace zarrdirect::test::many

// The device side of the engine, implemented in src/cuda/ when CUDA is built and as clear
// errors otherwise.
#pragma once

#include <memory>

#include "engine/array_state.hpp"
#include "engine/layout.hpp"

namespace zarrdirect {

// cudaMalloc'ed memory freed with cudaFree.
std::shared_ptr<void> allocate_device_memory(std::size_t nbytes);

// Reads `region` into the device destination `layout` (device pointer, byte strides).
ReadStats read_to_device(const Array::Impl& array, const Region& region, const DestinationLayout& layout,
                         void* cuda_stream, const Settings& settings);

}  // namespace zarrdirect

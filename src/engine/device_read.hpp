// The device side of the engine, implemented in src/cuda/ when CUDA is built and as clear
// errors otherwise.
#pragma once

#include <memory>

#include "engine/array_state.hpp"
#include "engine/layout.hpp"

namespace zarrdirect {

// cudaMalloc'ed memory on device `ordinal` (DeviceSpec::kCurrent: the calling thread's current
// one, which `ordinal` is then set to), freed with cudaFree on that device. The device is checked
// by the caller (check_device).
std::shared_ptr<void> allocate_device_memory(std::size_t nbytes, int& ordinal);

// Reads `region` into the device destination `layout` (device pointer, byte strides), on the
// device holding it; `device_ordinal` as Destination::device_ordinal.
ReadStats read_to_device(const Array::Impl& array, const Region& region, const DestinationLayout& layout,
                         void* cuda_stream, const Settings& settings, int device_ordinal = DeviceSpec::kCurrent);

// Devices this process can use: 0 without CUDA (build, driver or device).
int usable_cuda_devices();

// Throws unless a CUDA device is usable: Error(unsupported) in a build without CUDA, else
// Error(cuda) saying why there is none.
void require_cuda_device();

}  // namespace zarrdirect

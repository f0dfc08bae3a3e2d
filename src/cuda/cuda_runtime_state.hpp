// Whether this process can use CUDA, asked once.
//
// cudaGetDeviceCount() is the probe: with the static runtime it fails quietly (no output, no
// abort) where there is no driver or no device, and the answer is cached because the library
// asks before every device read.
#pragma once

#include <string>

namespace zarrdirect::cuda {

// Devices visible to this process; 0 when the driver or the devices are missing.
int cuda_device_count();

// Why cuda_device_count() is 0: "cudaGetDeviceCount: <runtime message>" or "no CUDA device
// found"; empty when there are devices.
const std::string& cuda_unavailable_reason();

}  // namespace zarrdirect::cuda

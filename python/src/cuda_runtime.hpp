// The handful of CUDA runtime calls the module makes itself, around the library's reads: which
// device holds a pointer, which device is current on a thread, and waiting for a stream. In a
// build without CUDA they answer "no device" and never fail, so the module still imports and reads
// into host memory.
#pragma once

#include <cstdint>

namespace zarrdirect::python {

// The device ordinal that `pointer` lives on, or -1 when it is not device memory (or no CUDA).
int device_of_pointer(const void* pointer);

// The calling thread's current device, or -1 without CUDA. Threads start on device 0, so a read
// run on a helper thread must be given the caller's device explicitly.
int current_device();

// Makes `device` current on the calling thread (a no-op for -1).
void set_current_device(int device);

// The device a read into CUDA memory at `pointer` (an out= array) runs on: the device holding
// it, else `cuda_device` when >= 0, else the current one. Error(invalid_argument) when CUDA works
// but `pointer` is not device memory, or is memory of another device than `cuda_device`.
int device_for_out(const void* pointer, int cuda_device);

// Blocks until the work queued on `stream` (a cudaStream_t as an integer) has finished.
void synchronize_stream(std::uintptr_t stream);

}  // namespace zarrdirect::python

// Moving a gathered batch to the device (read_many into CUDA memory), implemented in
// src/cuda/batch_upload.cpp when CUDA is built and as clear errors otherwise.
//
// read_many decodes each chunk once on the host and copies it into every region that needs it;
// for device destinations those regions are laid out one after another in a pinned host buffer
// and each is then copied to its destination (neighbours in both places in one copy).
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "engine/layout.hpp"

namespace zarrdirect {

// Host memory of at least `nbytes` for a batch: pinned (from a process-wide pool that keeps
// buffers for the next batch: cudaHostAlloc costs milliseconds per MiB) when CUDA is built and a
// device is usable, page-aligned pageable memory otherwise. Freed or returned to the pool when the
// last reference goes.
std::shared_ptr<std::byte> acquire_batch_buffer(std::size_t nbytes);

// One region to copy: `host` holds its elements C-contiguously, `device` is where they go.
struct BatchUpload {
  const std::byte* host = nullptr;
  DestinationLayout device;
};

// Copies every upload to its device destination, ordered on `cuda_stream` (null: a library
// stream), and waits for the copies. Error(cuda) naming the call on failure; Error(unsupported)
// without CUDA, or for a destination with negative strides.
void upload_batch(const std::vector<BatchUpload>& uploads, void* cuda_stream);

// The calling thread's current CUDA device (-1 without CUDA or a device), and making one
// current (background reads allocate on the device that was current when they were asked for).
int current_cuda_device();
void set_cuda_device(int device);

}  // namespace zarrdirect

// ZD_HOST_DEVICE marks functions compiled for both the CPU and the GPU: the portable decoders
// (src/codec/portable/) are written once, tested on the host in CI against the reference
// libraries, and run on the device by the kernels in src/cuda/. Outside nvcc it expands to nothing,
// so those headers are plain C++ for g++ and clang (sanitizers, fuzzers).
#pragma once

#if defined(__CUDACC__)
#define ZD_HOST_DEVICE __host__ __device__
#else
#define ZD_HOST_DEVICE
#endif

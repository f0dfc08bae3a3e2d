// What the kernel-level benchmarks (lz4_kernel_bench.cpp, zstd_kernel_bench.cpp) share: a CUDA
// status check that ends the program, device copies of host vectors and back, and CUDA-event
// timing of a launch.
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

namespace kernel_timing {

inline void check(cudaError_t status, const char* what) {
  if (status == cudaSuccess) return;
  std::fprintf(stderr, "kernel bench: %s: %s\n", what, cudaGetErrorString(status));
  std::exit(1);
}

template <typename T>
T* device_copy(const std::vector<T>& host) {
  void* p = nullptr;
  check(cudaMalloc(&p, std::max<std::size_t>(host.size() * sizeof(T), 1)), "cudaMalloc");
  if (!host.empty()) check(cudaMemcpy(p, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice), "cudaMemcpy");
  return static_cast<T*>(p);
}

inline std::uint8_t* device_bytes(std::size_t n) {
  void* p = nullptr;
  check(cudaMalloc(&p, std::max<std::size_t>(n, 1)), "cudaMalloc");
  return static_cast<std::uint8_t*>(p);
}

template <typename T>
std::vector<T> host_copy(const T* device, std::size_t n) {
  std::vector<T> host(n);
  if (n > 0) check(cudaMemcpy(host.data(), device, n * sizeof(T), cudaMemcpyDeviceToHost), "cudaMemcpy back");
  return host;
}

// Median (and best) milliseconds of `repeat` timed runs of `launch`, after one untimed run.
struct Timing {
  double median_ms = 0;
  double best_ms = 0;
};
inline Timing time_runs(int repeat, const std::function<void()>& launch) {
  cudaEvent_t start = nullptr, stop = nullptr;
  check(cudaEventCreate(&start), "cudaEventCreate");
  check(cudaEventCreate(&stop), "cudaEventCreate");
  launch();
  check(cudaDeviceSynchronize(), "warm-up run");
  std::vector<double> ms;
  for (int r = 0; r < repeat; ++r) {
    check(cudaEventRecord(start, nullptr), "cudaEventRecord");
    launch();
    check(cudaEventRecord(stop, nullptr), "cudaEventRecord");
    check(cudaEventSynchronize(stop), "kernel run");
    float elapsed = 0;
    check(cudaEventElapsedTime(&elapsed, start, stop), "cudaEventElapsedTime");
    ms.push_back(elapsed);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  std::sort(ms.begin(), ms.end());
  return {ms[ms.size() / 2], ms.front()};
}

}  // namespace kernel_timing

// Test helpers for the GPU kernel tests (src/cuda/*_test.cpp): a device copy of a host vector,
// freed on scope exit, and the skip for machines without a usable CUDA device.
#pragma once

#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <cstddef>
#include <vector>

#include "zarrdirect/array.hpp"

#define REQUIRE_GPU() \
  if (!::zarrdirect::cuda_available()) GTEST_SKIP() << "no CUDA device"

namespace zarrdirect::test {

template <typename T>
class DeviceArray {
 public:
  explicit DeviceArray(const std::vector<T>& host) : size_(host.size()) {
    if (size_ == 0) return;
    EXPECT_EQ(cudaMalloc(&data_, size_ * sizeof(T)), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(data_, host.data(), size_ * sizeof(T), cudaMemcpyHostToDevice), cudaSuccess);
  }
  ~DeviceArray() { cudaFree(data_); }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  T* get() const { return static_cast<T*>(data_); }
  std::vector<T> to_host() const {
    std::vector<T> host(size_);
    if (size_ > 0) {
      EXPECT_EQ(cudaMemcpy(host.data(), data_, size_ * sizeof(T), cudaMemcpyDeviceToHost), cudaSuccess);
    }
    return host;
  }

 private:
  void* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace zarrdirect::test

// Where a read puts its result and a write takes its source: host memory or a CUDA device.
//
//   array.read(region, zarrdirect::Device::cuda);            // the calling thread's current GPU
//   array.read(region, zarrdirect::DeviceSpec::cuda(1));     // GPU 1, whatever is current
//   array.read(region, zarrdirect::parse_device("cuda:1"));  // the same, from text
//
// `Device` says which kind of memory; `DeviceSpec` adds which GPU. A Device converts to a
// DeviceSpec without an ordinal, so code written for one GPU (`Device::cuda`) keeps its meaning:
// the device current on the calling thread (cudaSetDevice), device 0 unless changed.
#pragma once

#include <string>
#include <string_view>

namespace zarrdirect {

enum class Device { cpu, cuda };
std::string_view to_string(Device device);

struct DeviceSpec {
  // The calling thread's current CUDA device, when kind is cuda.
  static constexpr int kCurrent = -1;

  Device kind = Device::cpu;
  int ordinal = kCurrent;  // cuda: 0, 1, ... (as CUDA_VISIBLE_DEVICES numbers them); cpu: kCurrent

  constexpr DeviceSpec() = default;
  constexpr DeviceSpec(Device device) : kind(device) {}  // NOLINT: implicit on purpose (see above)
  constexpr DeviceSpec(Device device, int index) : kind(device), ordinal(index) {}
  static constexpr DeviceSpec cuda(int index) { return {Device::cuda, index}; }

  friend constexpr bool operator==(const DeviceSpec&, const DeviceSpec&) = default;
};

// "cpu", "cuda", "cuda:N" (what describes the spec; "cuda" for the current device).
std::string to_string(const DeviceSpec& device);

// Parses "cpu", "cuda" (also "gpu", the older alias), "cuda:N" with N a decimal ordinal.
// Anything else ("cuda:-1", "cuda:x", "gpu:1", "cuda:", " cuda") is Error(invalid_argument)
// quoting the text. The ordinal is not checked against this machine here: reads do that (below).
// Safe from any thread.
DeviceSpec parse_device(std::string_view text);

// CUDA devices this process can use (0 in a build without CUDA, or without a driver or device).
// Asked once per process. Safe from any thread.
int cuda_device_count();

// Checks that `device` can be read to or written from on this machine, as every read and write
// does before it touches storage: nothing for cpu (an ordinal with cpu is Error(invalid_argument));
// for cuda, Error(unsupported) in a build without CUDA, Error(cuda) when no device is usable,
// Error(invalid_argument) for an ordinal that does not exist, naming it and the count
// ("cuda:3: this machine has 1 CUDA device"). Safe from any thread.
void check_device(const DeviceSpec& device);

}  // namespace zarrdirect

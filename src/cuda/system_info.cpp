// describe_system() for CUDA builds: what `zarrdirect info --system` prints and the Python
// module returns. Works without a GPU: it then reports 0 devices and the host path.
#include <cuda_runtime_api.h>

#include <fmt/format.h>

#include "cuda/cuda_runtime_state.hpp"
#include "cuda/cufile.hpp"
#include "engine/device_info.hpp"
#include "engine/uring_reads.hpp"
#include "engine/gpu_decode_route.hpp"

namespace zarrdirect {
namespace {

// 13000 -> "13.0"; 0 (no driver) -> "none".
std::string cuda_version(int version) {
  if (version <= 0) return "none";
  return fmt::format("{}.{}", version / 1000, (version % 1000) / 10);
}

// Every device this process sees, in ordinal order (what "cuda:N" names): index, name, memory
// and PCI bus id, so that a device can be told apart from its twins.
nlohmann::json list_devices(int count) {
  nlohmann::json list = nlohmann::json::array();
  for (int index = 0; index < count; ++index) {
    nlohmann::json entry = {{"index", index}};
    cudaDeviceProp properties{};
    if (cudaGetDeviceProperties(&properties, index) == cudaSuccess) {
      entry["name"] = properties.name;
      entry["memory"] = static_cast<std::uint64_t>(properties.totalGlobalMem);
      entry["compute"] = fmt::format("{}.{}", properties.major, properties.minor);
    }
    char bus_id[32] = {};
    if (cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, index) == cudaSuccess) entry["pci_bus_id"] = bus_id;
    (void)cudaGetLastError();
    list.push_back(std::move(entry));
  }
  return list;
}

}  // namespace

nlohmann::json describe_system() {
  nlohmann::json doc;
  doc["cuda_built"] = true;
  const int devices = cuda::cuda_device_count();
  doc["cuda_devices"] = devices;

  int runtime = 0;
  if (cudaRuntimeGetVersion(&runtime) != cudaSuccess) runtime = 0;
  int driver = 0;
  if (cudaDriverGetVersion(&driver) != cudaSuccess) driver = 0;
  (void)cudaGetLastError();
  doc["cuda_runtime"] = cuda_version(runtime);
  doc["cuda_driver"] = cuda_version(driver);

  if (devices > 0) {
    int current = 0;
    cudaDeviceProp properties{};
    if (cudaGetDevice(&current) == cudaSuccess && cudaGetDeviceProperties(&properties, current) == cudaSuccess) {
      doc["device"] = properties.name;
      doc["device_index"] = current;
      doc["compute"] = fmt::format("{}.{}", properties.major, properties.minor);
      doc["device_memory"] = static_cast<std::uint64_t>(properties.totalGlobalMem);
    }
    (void)cudaGetLastError();
  }
  doc["devices"] = list_devices(devices);

  // cuFile: loading the library costs little. Its driver is opened only where the automatic
  // path would use it (a GPU, and nvidia-fs loaded): opening it starts cuFile's threads and
  // buffers, and on the GPU machine (no nvidia-fs) a fresh Python process that opened it aborted
  // inside libcufile (free(): invalid pointer). A forced gds read still opens it.
  auto& cufile = cuda::CuFile::instance();
  cuda::CuFileState state = cufile.state();
  if (devices > 0 && state.loaded && state.native && cudaFree(nullptr) == cudaSuccess) state = cufile.open_driver();
  (void)cudaGetLastError();
  if (state.loaded && !state.native && !state.driver_tried)
    state.detail = fmt::format("{} loaded, but the nvidia-fs kernel module is not: GPUDirect Storage could run only "
                               "in cuFile's compatibility mode",
                               state.library);
  doc["cufile"] = {{"loaded", state.loaded},
                   {"driver_open", state.driver_open},
                   {"native", state.native},
                   {"library", state.library},
                   {"detail", state.detail}};

  if (devices == 0) {
    doc["io_path"] = "host";
    doc["io_path_reason"] = fmt::format("no CUDA device: reads go to host memory ({})", cuda::cuda_unavailable_reason());
  } else if (state.driver_open && state.native) {
    doc["io_path"] = "gds";
    doc["io_path_reason"] =
        "cuFile is open and nvidia-fs is loaded: uncompressed, unsharded chunks go from storage to GPU memory "
        "with GPUDirect Storage";
  } else {
    doc["io_path"] = "staged";
    doc["io_path_reason"] = fmt::format(
        "GPUDirect Storage does not run natively ({}): chunks are read into pinned host memory and copied to the GPU",
        state.detail);
  }
  describe_io_engine(doc);
  describe_decode_policy(doc, devices > 0);
  return doc;
}

}  // namespace zarrdirect

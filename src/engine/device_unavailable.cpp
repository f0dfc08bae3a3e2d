// Built when CUDA is not: device reads fail with one clear message.
#include "engine/device_read.hpp"

namespace zarrdirect {
namespace {
[[noreturn]] void no_cuda() {
  throw Error(ErrorKind::unsupported, "GPU reads are not available: this build of zarrdirect has no CUDA support");
}
}  // namespace

std::shared_ptr<void> allocate_device_memory(std::size_t, int&) { no_cuda(); }

ReadStats read_to_device(const Array::Impl&, const Region&, const DestinationLayout&, void*, const Settings&, int) {
  no_cuda();
}

int usable_cuda_devices() { return 0; }

void require_cuda_device() { no_cuda(); }

bool cuda_available() { return false; }

}  // namespace zarrdirect

#include "engine/device_info.hpp"
#include "engine/uring_reads.hpp"
#include "engine/gpu_decode_route.hpp"
#include "engine/result_buffer_pool.hpp"

namespace zarrdirect {

PinnedPoolStats pinned_pool_stats() { return {}; }

void trim_pinned_pool() { trim_result_buffers(); }

nlohmann::json describe_system() {
  nlohmann::json doc = {{"cuda_built", false},
                        {"cuda_devices", 0},
                        {"devices", nlohmann::json::array()},
                        {"io_path", "host"},
                        {"io_path_reason", "this build has no CUDA support: reads go to host memory"}};
  describe_io_engine(doc);
  describe_decode_policy(doc, false);
  return doc;
}

}  // namespace zarrdirect

#include <cstring>

#include "engine/device_copy.hpp"

namespace zarrdirect {

std::vector<std::byte> copy_to_host(const NDArray& array) {
  if (array.device() == Device::cuda) no_cuda();
  std::vector<std::byte> bytes(array.nbytes());
  if (!bytes.empty()) std::memcpy(bytes.data(), array.data(), bytes.size());
  return bytes;
}

}  // namespace zarrdirect

// Built when CUDA is not: batches stay on the host; uploads fail with one clear message.
#include <cstdlib>

#include <fmt/format.h>

#include "engine/batch_upload.hpp"
#include "zarrdirect/error.hpp"

namespace zarrdirect {

std::shared_ptr<std::byte> acquire_batch_buffer(std::size_t nbytes) {
  constexpr std::size_t kPage = 4096;
  const std::size_t rounded = (std::max<std::size_t>(nbytes, 1) + kPage - 1) / kPage * kPage;
  void* data = std::aligned_alloc(kPage, rounded);
  if (!data) throw Error(ErrorKind::io, fmt::format("cannot allocate {} bytes of host memory", nbytes));
  return std::shared_ptr<std::byte>(static_cast<std::byte*>(data), [](std::byte* p) { std::free(p); });
}

void upload_batch(const std::vector<BatchUpload>&, void*) {
  throw Error(ErrorKind::unsupported, "GPU reads are not available: this build of zarrdirect has no CUDA support");
}

int current_cuda_device() { return -1; }
void set_cuda_device(int) {}

}  // namespace zarrdirect

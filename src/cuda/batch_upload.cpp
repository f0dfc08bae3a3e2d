// The CUDA side of engine/batch_upload.hpp: a pool of pinned batch buffers and the copies.
#include "engine/batch_upload.hpp"

#include <cuda_runtime_api.h>

#include <cstdlib>
#include <mutex>

#include <fmt/format.h>

#include "cuda/cuda_check.hpp"
#include "cuda/cuda_runtime_state.hpp"
#include "cuda/device_pool.hpp"

namespace zarrdirect {
namespace {

// Pinned buffers kept between batches (a training loop asks for the same size every step).
// Never destroyed, as DevicePool: freeing pinned memory from static destructors would race the
// runtime's teardown.
class PinnedBatchPool {
 public:
  static PinnedBatchPool& instance() {
    static auto* pool = new PinnedBatchPool();
    return *pool;
  }

  std::shared_ptr<std::byte> acquire(std::size_t nbytes) {
    {
      std::lock_guard lock(mutex_);
      auto best = idle_.end();
      for (auto it = idle_.begin(); it != idle_.end(); ++it)
        if (it->capacity >= nbytes && (best == idle_.end() || it->capacity < best->capacity)) best = it;
      if (best != idle_.end()) {
        Block block = *best;
        idle_.erase(best);
        idle_bytes_ -= block.capacity;
        return wrap(block);
      }
    }
    // Rounded up to a power of two (at least 2 MiB) so that batches of varying size reuse buffers.
    std::size_t capacity = std::size_t{2} << 20;
    while (capacity < nbytes) capacity *= 2;
    void* data = nullptr;
    if (cudaHostAlloc(&data, capacity, cudaHostAllocDefault) != cudaSuccess) {
      cudaGetLastError();  // clear the failure: pageable memory still works, only slower
      return pageable(nbytes);
    }
    return wrap(Block{static_cast<std::byte*>(data), capacity});
  }

 private:
  struct Block {
    std::byte* data;
    std::size_t capacity;
  };
  static constexpr std::size_t kIdleLimit = std::size_t{2} << 30;

  std::shared_ptr<std::byte> wrap(Block block) {
    return std::shared_ptr<std::byte>(block.data, [this, block](std::byte*) { release(block); });
  }

  void release(Block block) {
    std::lock_guard lock(mutex_);
    idle_.push_back(block);
    idle_bytes_ += block.capacity;
    while (idle_bytes_ > kIdleLimit && idle_.size() > 1) {
      cudaFreeHost(idle_.front().data);
      idle_bytes_ -= idle_.front().capacity;
      idle_.erase(idle_.begin());
    }
  }

  static std::shared_ptr<std::byte> pageable(std::size_t nbytes) {
    constexpr std::size_t kPage = 4096;
    const std::size_t rounded = (std::max<std::size_t>(nbytes, 1) + kPage - 1) / kPage * kPage;
    void* data = std::aligned_alloc(kPage, rounded);
    if (!data) throw Error(ErrorKind::io, fmt::format("cannot allocate {} bytes of host memory", nbytes));
    return std::shared_ptr<std::byte>(static_cast<std::byte*>(data), [](std::byte* p) { std::free(p); });
  }

  std::mutex mutex_;
  std::vector<Block> idle_;
  std::size_t idle_bytes_ = 0;
};

bool is_c_contiguous(const DestinationLayout& layout) {
  std::int64_t expected = static_cast<std::int64_t>(layout.element_size);
  for (std::size_t d = layout.rank; d-- > 0;) {
    if (layout.shape[d] != 1 && layout.byte_strides[d] != expected) return false;
    expected *= static_cast<std::int64_t>(layout.shape[d]);
  }
  return true;
}

std::uint64_t byte_count(const DestinationLayout& layout) {
  std::uint64_t bytes = layout.element_size;
  for (std::size_t d = 0; d < layout.rank; ++d) bytes *= layout.shape[d];
  return bytes;
}

// A strided destination: one 2-D copy per row of the last dimension.
void upload_strided(const BatchUpload& upload, cudaStream_t stream) {
  const DestinationLayout& dest = upload.device;
  for (std::size_t d = 0; d < dest.rank; ++d)
    if (dest.byte_strides[d] < 0)
      throw Error(ErrorKind::unsupported, "read_many: device destinations with negative strides are not supported");
  const std::size_t last = dest.rank - 1;
  const std::size_t row_elements = static_cast<std::size_t>(dest.shape[last]);
  std::uint64_t rows = 1;
  for (std::size_t d = 0; d < last; ++d) rows *= dest.shape[d];
  const std::byte* source = upload.host;
  for (std::uint64_t row = 0; row < rows; ++row) {
    std::uint64_t rest = row;
    std::int64_t offset = 0;
    for (std::size_t d = last; d-- > 0;) {
      offset += static_cast<std::int64_t>(rest % dest.shape[d]) * dest.byte_strides[d];
      rest /= dest.shape[d];
    }
    cuda::check_cuda(cudaMemcpy2DAsync(dest.data + offset, static_cast<std::size_t>(dest.byte_strides[last]), source,
                                       dest.element_size, dest.element_size, row_elements, cudaMemcpyHostToDevice,
                                       stream),
                     "cudaMemcpy2DAsync (batch to a strided destination)");
    source += row_elements * dest.element_size;
  }
}

}  // namespace

std::shared_ptr<std::byte> acquire_batch_buffer(std::size_t nbytes) {
  return PinnedBatchPool::instance().acquire(nbytes);
}

int current_cuda_device() {
  if (cuda::cuda_device_count() == 0) return -1;
  int device = -1;
  if (cudaGetDevice(&device) != cudaSuccess) return -1;
  return device;
}

void set_cuda_device(int device) {
  if (device >= 0) cuda::use_device(device);
}

void upload_batch(const std::vector<BatchUpload>& uploads, void* cuda_stream) {
  if (uploads.empty()) return;
  if (cuda::cuda_device_count() == 0)
    throw Error(ErrorKind::cuda, fmt::format("read_many: no usable CUDA device ({})", cuda::cuda_unavailable_reason()));
  cudaPointerAttributes attributes{};
  cuda::check_cuda(cudaPointerGetAttributes(&attributes, uploads.front().device.data),
                   "cudaPointerGetAttributes (read_many destination)");
  if (attributes.type != cudaMemoryTypeDevice && attributes.type != cudaMemoryTypeManaged &&
      attributes.type != cudaMemoryTypeHost)
    throw Error(ErrorKind::invalid_argument, "read_many: a destination is ordinary host memory, not CUDA memory");
  cuda::DeviceRestorer restore;
  cuda::use_device(attributes.device);
  cudaStream_t stream = static_cast<cudaStream_t>(cuda_stream);
  std::vector<cudaStream_t> owned;
  if (!stream) {
    owned = cuda::DevicePool::instance().acquire_streams(attributes.device, 1);
    stream = owned.front();
  }
  try {
    // One copy per region. Neighbours adjacent on both sides are not merged: two destinations
    // may be separate allocations that happen to touch, and a copy that crosses from one CUDA
    // allocation into the next is refused (cudaErrorInvalidValue; seen on the H200).
    for (const auto& upload : uploads) {
      const std::size_t bytes = static_cast<std::size_t>(byte_count(upload.device));
      if (bytes == 0) continue;
      if (!is_c_contiguous(upload.device)) {
        upload_strided(upload, stream);
        continue;
      }
      cuda::check_cuda(cudaMemcpyAsync(upload.device.data, upload.host, bytes, cudaMemcpyHostToDevice, stream),
                       "cudaMemcpyAsync (batch to the device)");
    }
    // The pinned buffer goes back to the pool when the caller returns: wait for the copies.
    cuda::check_cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize (batch to the device)");
  } catch (...) {
    if (!owned.empty()) {
      cudaStreamSynchronize(stream);
      cuda::DevicePool::instance().release_streams(attributes.device, owned);
    }
    throw;
  }
  if (!owned.empty()) cuda::DevicePool::instance().release_streams(attributes.device, owned);
}

}  // namespace zarrdirect

// The CUDA build's side of make_device_source (engine/chunk_source.hpp): a write from device
// memory. Each worker copies its chunk's box from the (strided) device source into its own
// pinned host buffer on its own stream, with cudaMemcpy2DAsync over the box's rows, then places
// it into the chunk on the host; encoding and storing are the host path's.
//
// Ordering: start() waits for the caller's stream (null: the legacy default stream), so work the
// caller queued before the write (the kernel that produced the data) is done before any copy.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "cuda/cuda_check.hpp"
#include "engine/chunk_source.hpp"

namespace zarrdirect {
namespace {

class DeviceSource final : public ChunkSource {
 public:
  DeviceSource(const DestinationLayout& layout, void* cuda_stream)
      : layout_(layout), caller_stream_(static_cast<cudaStream_t>(cuda_stream)) {
    cudaPointerAttributes attributes{};
    cuda::check_cuda(cudaPointerGetAttributes(&attributes, layout.data), "cudaPointerGetAttributes (write source)");
    if (attributes.type != cudaMemoryTypeDevice && attributes.type != cudaMemoryTypeManaged &&
        attributes.type != cudaMemoryTypeHost)
      throw Error(ErrorKind::invalid_argument,
                  "write: the source is ordinary host memory, not CUDA memory; use Device::cpu for it");
    device_ = attributes.device;
    for (std::size_t d = 0; d < layout.rank; ++d)
      if (layout.shape[d] > 1 && layout.byte_strides[d] < static_cast<std::int64_t>(layout.element_size))
        throw Error(ErrorKind::invalid_argument,
                    fmt::format("write: stride {} in dimension {} of a device source is not supported (negative, zero "
                                "or overlapping); make the source contiguous first",
                                layout.byte_strides[d], d));
  }
  ~DeviceSource() override { release(); }

  std::string_view name() const override { return "device"; }

  void start(unsigned workers, std::size_t) override {
    cuda::check_cuda(cudaSetDevice(device_), "cudaSetDevice (write source)");
    cuda::check_cuda(cudaStreamSynchronize(caller_stream_), "cudaStreamSynchronize (caller's stream before a write)");
    workers_.resize(workers);
  }

  void gather(unsigned worker_id, const ChunkBox& box, std::span<std::byte> chunk) override {
    cuda::check_cuda(cudaSetDevice(device_), "cudaSetDevice (write source)");
    Worker& worker = workers_[worker_id];
    if (!worker.stream)
      cuda::check_cuda(cudaStreamCreateWithFlags(&worker.stream, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
    const std::size_t size = layout_.element_size;
    const std::size_t nbytes = static_cast<std::size_t>(box.num_elements()) * size;
    if (worker.capacity < nbytes) {
      if (worker.host) cudaFreeHost(worker.host);
      worker.host = nullptr;
      worker.capacity = 0;
      void* host = nullptr;
      cuda::check_cuda(cudaHostAlloc(&host, nbytes, cudaHostAllocPortable), "cudaHostAlloc (write staging)");
      worker.host = static_cast<std::byte*>(host);
      worker.capacity = nbytes;
    }
    copy_box_to_staging(worker, box);
    cuda::check_cuda(cudaStreamSynchronize(worker.stream), "cudaStreamSynchronize (write staging)");
    // The staging buffer holds the box packed in C order: place it into the chunk.
    DestinationLayout staged = DestinationLayout::contiguous(
        worker.host, std::span<const std::uint64_t>(box.extent.data(), box.rank), size);
    ChunkBox from_staging = box;
    from_staging.offset_in_dest = Extents{};
    gather_box_from_host(staged, from_staging, chunk.data());
  }

  void finish() override {}

 private:
  struct Worker {
    cudaStream_t stream = nullptr;
    std::byte* host = nullptr;
    std::size_t capacity = 0;
  };

  // Queues the copies of the box's rows (planes of rows where the rows are packed) into the
  // worker's staging, packed in C order.
  void copy_box_to_staging(Worker& worker, const ChunkBox& box) {
    const std::size_t rank = box.rank;
    const std::size_t size = layout_.element_size;
    const std::byte* origin = layout_.address_of(box.offset_in_dest);
    if (rank == 0) {
      cuda::check_cuda(cudaMemcpyAsync(worker.host, origin, size, cudaMemcpyDeviceToHost, worker.stream),
                       "cudaMemcpyAsync (write source)");
      return;
    }
    const std::uint64_t row = box.extent[rank - 1];
    const bool packed_rows = layout_.byte_strides[rank - 1] == static_cast<std::int64_t>(size);
    // One cudaMemcpy2D covers: packed rows -> the last two dimensions (rows of `row` elements);
    // strided rows -> one row (elements of `size` bytes at the row's stride).
    // Planes need rows that do not overlap (a zero stride repeats one row): else row by row.
    const bool planes = packed_rows && rank >= 2 &&
                        layout_.byte_strides[rank - 2] >= static_cast<std::int64_t>(row * size);
    std::size_t outer_dims = planes ? rank - 2 : rank - 1;
    std::size_t width, height, spitch;
    if (packed_rows) {
      width = static_cast<std::size_t>(row) * size;
      height = planes ? static_cast<std::size_t>(box.extent[rank - 2]) : 1;
      spitch = planes ? static_cast<std::size_t>(layout_.byte_strides[rank - 2]) : width;
    } else {
      width = size;
      height = static_cast<std::size_t>(row);
      spitch = static_cast<std::size_t>(layout_.byte_strides[rank - 1]);
    }
    const std::size_t block = width * height;
    std::uint64_t blocks = 1;
    for (std::size_t d = 0; d < outer_dims; ++d) blocks *= box.extent[d];
    Extents index{};
    for (std::uint64_t b = 0; b < blocks; ++b) {
      std::int64_t offset = 0;
      for (std::size_t d = 0; d < outer_dims; ++d) offset += static_cast<std::int64_t>(index[d]) * layout_.byte_strides[d];
      cuda::check_cuda(cudaMemcpy2DAsync(worker.host + b * block, width, origin + offset, spitch, width,
                                         height, cudaMemcpyDeviceToHost, worker.stream),
                       "cudaMemcpy2DAsync (write source)");
      for (std::size_t d = outer_dims; d-- > 0;) {
        if (++index[d] < box.extent[d]) break;
        index[d] = 0;
      }
    }
  }

  void release() {
    for (auto& worker : workers_) {
      if (worker.stream) {
        cudaStreamSynchronize(worker.stream);
        cudaStreamDestroy(worker.stream);
      }
      if (worker.host) cudaFreeHost(worker.host);
    }
    workers_.clear();
  }

  DestinationLayout layout_;
  cudaStream_t caller_stream_;
  int device_ = 0;
  std::vector<Worker> workers_;
};

}  // namespace

std::unique_ptr<ChunkSource> make_device_source(const DestinationLayout& layout, void* cuda_stream) {
  return std::make_unique<DeviceSource>(layout, cuda_stream);
}

}  // namespace zarrdirect

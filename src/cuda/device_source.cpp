// The CUDA build's side of make_device_source (engine/chunk_source.hpp): a write from device
// memory.
//
// Each worker stages a chunk's box into its own pinned host buffer, packed in C order, on its own
// stream, with one large device-to-host copy per box: straight from the source when the box is
// one run of bytes there, else after a gather kernel (the reader's box-copy kernel, run with
// source and destination swapped) has packed it into the worker's device scratch. A box that is
// its whole chunk is then encoded from the staging itself (whole_chunk); a partial one is placed
// into the writer's chunk on the host. Workers run at once, so one worker's copy overlaps the
// others' encoding and writing.
//
// Ordering: start() waits for the caller's stream (null: the legacy default stream), so work the
// caller queued before the write (the kernel that produced the data) is done before any copy.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "cuda/copy_plan.hpp"
#include "cuda/cuda_check.hpp"
#include "cuda/kernels.cuh"
#include "engine/chunk_source.hpp"

namespace zarrdirect {
namespace {

std::uintptr_t address(const void* pointer) { return reinterpret_cast<std::uintptr_t>(pointer); }

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
    if (box.num_elements() == 0) return;
    const std::byte* staged = stage(worker_id, box);
    // The staging holds the box packed in C order: place it into the chunk.
    DestinationLayout packed = DestinationLayout::contiguous(
        const_cast<std::byte*>(staged), std::span<const std::uint64_t>(box.extent.data(), box.rank),
        layout_.element_size);
    ChunkBox from_staging = box;
    from_staging.offset_in_dest = Extents{};
    gather_box_from_host(packed, from_staging, chunk.data());
  }

  std::span<const std::byte> whole_chunk(unsigned worker_id, const ChunkBox& box) override {
    if (!box.covers_chunk() || box.num_elements() == 0) return {};
    return {stage(worker_id, box), static_cast<std::size_t>(box.num_elements()) * layout_.element_size};
  }

  void finish() override {}

 private:
  struct Worker {
    cudaStream_t stream = nullptr;
    std::byte* host = nullptr;  // pinned staging
    std::size_t host_capacity = 0;
    std::byte* scratch = nullptr;  // device memory for the gather kernel
    std::size_t scratch_capacity = 0;
  };

  // Copies the box, packed in C order, into the worker's pinned staging; returns it once the copy
  // is done.
  const std::byte* stage(unsigned worker_id, const ChunkBox& box) {
    cuda::check_cuda(cudaSetDevice(device_), "cudaSetDevice (write source)");
    Worker& worker = workers_.at(worker_id);
    if (!worker.stream)
      cuda::check_cuda(cudaStreamCreateWithFlags(&worker.stream, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
    const std::size_t nbytes = static_cast<std::size_t>(box.num_elements()) * layout_.element_size;
    if (worker.host_capacity < nbytes) {
      if (worker.host) cudaFreeHost(std::exchange(worker.host, nullptr));
      worker.host_capacity = 0;
      void* host = nullptr;
      cuda::check_cuda(cudaHostAlloc(&host, nbytes, cudaHostAllocPortable), "cudaHostAlloc (write staging)");
      worker.host = static_cast<std::byte*>(host);
      worker.host_capacity = nbytes;
    }
    const std::byte* origin = layout_.address_of(box.offset_in_dest);
    // Planned as the reader plans a copy from a packed chunk into a strided destination, then run
    // the other way: strided source -> packed box. The device scratch is cudaMalloc'd (256-byte
    // aligned), so 0 stands for its address.
    ChunkBox packed = box;
    packed.chunk_shape = box.extent;
    packed.offset_in_chunk = Extents{};
    cuda::BoxPlan plan = cuda::plan_box_copy(packed, layout_, 0, address(origin));
    if (plan.contiguous) {
      cuda::check_cuda(cudaMemcpyAsync(worker.host, origin, nbytes, cudaMemcpyDeviceToHost, worker.stream),
                       "cudaMemcpyAsync (write source to staging)");
    } else {
      if (worker.scratch_capacity < nbytes) {
        if (worker.scratch) cudaFree(std::exchange(worker.scratch, nullptr));
        worker.scratch_capacity = 0;
        void* scratch = nullptr;
        cuda::check_cuda(cudaMalloc(&scratch, nbytes), "cudaMalloc (write gather scratch)");
        worker.scratch = static_cast<std::byte*>(scratch);
        worker.scratch_capacity = nbytes;
      }
      for (int k = 0; k < plan.plan.rank; ++k) std::swap(plan.plan.dims.src_stride[k], plan.plan.dims.dst_stride[k]);
      cuda::check_cuda(cuda::launch_copy(plan.plan, origin, worker.scratch, worker.stream), "gather kernel launch");
      cuda::check_cuda(cudaMemcpyAsync(worker.host, worker.scratch, nbytes, cudaMemcpyDeviceToHost, worker.stream),
                       "cudaMemcpyAsync (gathered box to staging)");
    }
    cuda::check_cuda(cudaStreamSynchronize(worker.stream), "cudaStreamSynchronize (write staging)");
    return worker.host;
  }

  void release() {
    for (auto& worker : workers_) {
      if (worker.stream) {
        cudaStreamSynchronize(worker.stream);
        cudaStreamDestroy(worker.stream);
      }
      if (worker.host) cudaFreeHost(worker.host);
      if (worker.scratch) cudaFree(worker.scratch);
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

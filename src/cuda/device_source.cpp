// The CUDA build's side of make_device_source (engine/chunk_source.hpp): a write from device
// memory.
//
// Each worker stages a chunk's box into its own pinned host buffer, packed in C order, on its own
// stream, with one large device-to-host copy per box: straight from the source when the box is
// one run of bytes there, else after a gather kernel (the reader's box-copy kernel, run with
// source and destination swapped: device_source_plan.hpp) has packed it into the worker's device
// scratch. Staging, scratch and streams come from the process's DevicePool, as for reads
// (cudaHostAlloc costs milliseconds per MiB: paid once per process, not per write), pinned up to
// the default staging budget and ordinary memory beyond it. A box that is
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

#include "cuda/cuda_check.hpp"
#include "cuda/device_pool.hpp"
#include "cuda/device_source_plan.hpp"
#include "cuda/kernels.cuh"
#include "engine/chunk_source.hpp"
#include "zarrdirect/settings.hpp"

namespace zarrdirect {
namespace {

std::uintptr_t address(const void* pointer) { return reinterpret_cast<std::uintptr_t>(pointer); }

std::size_t budget_from_environment() {
  try {
    return Settings::from_environment().effective_pinned_pool();
  } catch (const Error&) {
    return Settings{}.effective_pinned_pool();  // a bad variable fails the reads that parse it, not this
  }
}

constexpr std::size_t kPage = 4096;
std::size_t round_to_page(std::size_t n) { return (std::max<std::size_t>(n, 1) + kPage - 1) / kPage * kPage; }

class DeviceSource final : public ChunkSource {
 public:
  DeviceSource(const DestinationLayout& layout, void* cuda_stream, int wanted_device)
      : layout_(layout), caller_stream_(static_cast<cudaStream_t>(cuda_stream)) {
    cudaPointerAttributes attributes{};
    cuda::check_cuda(cudaPointerGetAttributes(&attributes, layout.data), "cudaPointerGetAttributes (write source)");
    if (attributes.type != cudaMemoryTypeDevice && attributes.type != cudaMemoryTypeManaged &&
        attributes.type != cudaMemoryTypeHost)
      throw Error(ErrorKind::invalid_argument,
                  "write: the source is ordinary host memory, not CUDA memory; use Device::cpu for it");
    // Device memory is written from its own device; managed and pinned memory, which every
    // device reaches, from the one asked for.
    if (attributes.type == cudaMemoryTypeDevice && wanted_device != DeviceSpec::kCurrent &&
        wanted_device != attributes.device)
      throw Error(ErrorKind::invalid_argument,
                  fmt::format("write: the source is memory of cuda:{}, but cuda:{} was asked for", attributes.device,
                              wanted_device));
    device_ = attributes.type == cudaMemoryTypeDevice || wanted_device == DeviceSpec::kCurrent ? attributes.device
                                                                                              : wanted_device;
    for (std::size_t d = 0; d < layout.rank; ++d)
      if (layout.shape[d] > 1 && layout.byte_strides[d] < static_cast<std::int64_t>(layout.element_size))
        throw Error(ErrorKind::invalid_argument,
                    fmt::format("write: stride {} in dimension {} of a device source is not supported (negative, zero "
                                "or overlapping); make the source contiguous first",
                                layout.byte_strides[d], d));
  }
  ~DeviceSource() override { release(); }

  std::string_view name() const override { return "device"; }

  void start(unsigned workers, std::size_t max_box_bytes) override {
    // start() and finish() run on the caller's thread: its current device is put back after.
    if (cudaGetDevice(&caller_device_) != cudaSuccess) caller_device_ = -1;
    cuda::use_device(device_);
    cuda::check_cuda(cudaStreamSynchronize(caller_stream_), "cudaStreamSynchronize (caller's stream before a write)");
    const std::size_t count = std::max(workers, 1u);
    capacity_ = round_to_page(max_box_bytes);
    auto& pool = cuda::DevicePool::instance();
    streams_ = pool.acquire_streams(device_, count);
    // Pinned within one read's default staging and as far as the process's pool grants it.
    const std::size_t pinned = std::min(count, Settings{}.staging_bytes / capacity_);
    slots_ = pool.acquire_slots(device_, capacity_, pinned, budget_, pinned);
    while (slots_.size() < count) slots_.push_back(std::make_unique<cuda::StagingSlot>(device_, capacity_, false));
  }

  void gather(unsigned worker, const ChunkBox& box, std::span<std::byte> chunk) override {
    if (box.num_elements() == 0) return;
    const std::byte* staged = stage(worker, box);
    // The staging holds the box packed in C order: place it into the chunk.
    DestinationLayout packed = DestinationLayout::contiguous(
        const_cast<std::byte*>(staged), std::span<const std::uint64_t>(box.extent.data(), box.rank),
        layout_.element_size);
    ChunkBox from_staging = box;
    from_staging.offset_in_dest = Extents{};
    gather_box_from_host(packed, from_staging, chunk.data());
  }

  std::span<const std::byte> whole_chunk(unsigned worker, const ChunkBox& box) override {
    if (!box.covers_chunk() || box.num_elements() == 0) return {};
    return {stage(worker, box), static_cast<std::size_t>(box.num_elements()) * layout_.element_size};
  }

  void finish() override { release(); }

 private:
  // Copies the box, packed in C order, into the worker's staging; returns it once the copy is
  // done.
  const std::byte* stage(unsigned worker, const ChunkBox& box) {
    cuda::use_device(device_);
    cuda::StagingSlot& slot = *slots_.at(worker);
    cudaStream_t stream = streams_.at(worker);
    const std::size_t nbytes = static_cast<std::size_t>(box.num_elements()) * layout_.element_size;
    if (nbytes > slot.capacity)
      throw Error(ErrorKind::invalid_argument,
                  fmt::format("device source: a box of {} bytes, staging of {}", nbytes, slot.capacity));
    const std::byte* origin = layout_.address_of(box.offset_in_dest);
    // The device scratch is cudaMalloc'd (aligned for any unit): 0 stands for its address.
    const cuda::BoxPlan plan = cuda::plan_box_gather(box, layout_, address(origin), 0);
    if (plan.contiguous) {
      cuda::check_cuda(cudaMemcpyAsync(slot.host, origin, nbytes, cudaMemcpyDeviceToHost, stream),
                       "cudaMemcpyAsync (write source to staging)");
    } else {
      std::byte* scratch = slot.scratch();
      cuda::check_cuda(cuda::launch_copy(plan.plan, origin, scratch, stream), "gather kernel launch");
      cuda::check_cuda(cudaMemcpyAsync(slot.host, scratch, nbytes, cudaMemcpyDeviceToHost, stream),
                       "cudaMemcpyAsync (gathered box to staging)");
    }
    cuda::check_cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize (write staging)");
    return slot.host;
  }

  // Gives staging and streams back to the pool once nothing is queued on them; after a GPU
  // failure they are leaked instead (their work may still be running), as reads do.
  void release() {
    if (slots_.empty() && streams_.empty()) {
      restore_caller_device();
      return;
    }
    bool broken = false;
    for (cudaStream_t stream : streams_)
      if (cudaStreamSynchronize(stream) != cudaSuccess) broken = true;
    auto& pool = cuda::DevicePool::instance();
    if (broken) {
      pool.forget_slots(std::move(slots_));
      (void)cudaGetLastError();
    } else {
      pool.release_slots(std::move(slots_), budget_);
      pool.release_streams(device_, std::move(streams_));
    }
    slots_.clear();
    streams_.clear();
    restore_caller_device();
  }

  void restore_caller_device() {
    if (caller_device_ >= 0 && caller_device_ != device_) (void)cudaSetDevice(caller_device_);
    caller_device_ = -1;
  }

  DestinationLayout layout_;
  cudaStream_t caller_stream_;
  // The process's pinned budget (Settings::pinned_pool_bytes, from the environment when it parses).
  std::size_t budget_ = budget_from_environment();
  int device_ = 0;
  int caller_device_ = -1;  // the caller's current device when start() ran
  std::size_t capacity_ = 0;
  std::vector<cuda::SlotPtr> slots_;        // one per worker
  std::vector<cudaStream_t> streams_;       // one per worker
};

}  // namespace

std::unique_ptr<ChunkSource> make_device_source(const DestinationLayout& layout, void* cuda_stream,
                                                int device_ordinal) {
  return std::make_unique<DeviceSource>(layout, cuda_stream, device_ordinal);
}

}  // namespace zarrdirect

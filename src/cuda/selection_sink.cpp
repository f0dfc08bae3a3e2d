// The CUDA build's read_selection_to_device (engine/selection_read.hpp): the staged path of
// device_read.cpp with a sink that places a chunk's selected elements with one kernel
// (selection_kernels.cu) reading the selection's per-axis tables, uploaded once per read.
// Selections never take the GDS path: cuFile writes whole runs, and a selection scatters.
#include <algorithm>

#include <fmt/format.h>

#include "cuda/cuda_check.hpp"
#include "cuda/cuda_runtime_state.hpp"
#include "cuda/device_sink.hpp"
#include "cuda/selection_kernels.cuh"
#include "engine/device_read.hpp"
#include "engine/selection_read.hpp"

namespace zarrdirect {
namespace {

// The selection's sorted tables in device memory, freed with the read.
class DeviceTables {
 public:
  explicit DeviceTables(const SelectionGeometry& geometry) {
    for (const auto& axis : geometry.axes) {
      index_.push_back(upload(axis.sorted_index));
      out_.push_back(upload(axis.sorted_out));
    }
  }
  ~DeviceTables() {
    for (auto* p : allocations_) cudaFree(p);
  }
  DeviceTables(const DeviceTables&) = delete;
  DeviceTables& operator=(const DeviceTables&) = delete;
  const std::uint64_t* index(std::size_t d) const { return index_[d]; }
  const std::uint64_t* out(std::size_t d) const { return out_[d]; }

 private:
  const std::uint64_t* upload(const std::vector<std::uint64_t>& values) {
    void* p = nullptr;
    const std::size_t nbytes = std::max<std::size_t>(values.size(), 1) * sizeof(std::uint64_t);
    cuda::check_cuda(cudaMalloc(&p, nbytes), fmt::format("cudaMalloc ({} bytes of selection tables)", nbytes));
    allocations_.push_back(p);
    if (!values.empty())
      cuda::check_cuda(cudaMemcpy(p, values.data(), values.size() * sizeof(std::uint64_t), cudaMemcpyHostToDevice),
                       "cudaMemcpy (selection tables)");
    return static_cast<const std::uint64_t*>(p);
  }
  std::vector<void*> allocations_;
  std::vector<const std::uint64_t*> index_;
  std::vector<const std::uint64_t*> out_;
};

class SelectionDeviceSink final : public ChunkSink {
 public:
  SelectionDeviceSink(const SelectionGeometry& geometry, const DeviceTables& tables, const DestinationLayout& destination,
                      std::span<const std::byte> fill_value, const cuda::DeviceSinkOptions& options)
      : geometry_(geometry), tables_(tables), destination_(destination),
        fill_value_(fill_value.begin(), fill_value.end()), inner_(destination, fill_value, options) {}
  std::string_view name() const override { return "staged"; }
  void start(unsigned workers, std::size_t max_chunk_bytes) override { inner_.start(workers, max_chunk_bytes); }
  std::span<std::byte> staging(unsigned worker, std::size_t nbytes) override { return inner_.staging(worker, nbytes); }

  void place(unsigned worker, std::span<const std::byte> chunk, const ChunkBox& box) override {
    const SelectedPart selected = selected_part(geometry_, box);
    cuda::SelectionPart part = plan(selected, box);
    // Upload from the box's first element to its last: every selected element lies in the box.
    const Extents strides = c_order_strides(box.chunk_shape, box.rank);
    std::uint64_t first = 0;
    std::uint64_t last = 0;
    for (std::size_t d = 0; d < box.rank; ++d) {
      first += box.offset_in_chunk[d] * strides[d];
      last += (box.offset_in_chunk[d] + (box.extent[d] ? box.extent[d] - 1 : 0)) * strides[d];
    }
    const std::size_t size = destination_.element_size;
    const std::size_t first_byte = static_cast<std::size_t>(first) * size;
    const std::size_t nbytes = static_cast<std::size_t>(last - first + 1) * size;
    // Nothing to place (the reader visits only cells with a selected element, but be safe): the
    // slot is simply handed out again by the next staging().
    if (selected.empty() || box.num_elements() == 0) return;
    if (first_byte + nbytes > chunk.size())
      throw Error(ErrorKind::invalid_argument, "selection sink: the box lies outside the decoded chunk");
    part.src_shift = static_cast<std::int64_t>(first_byte);
    std::byte* dst = destination_.data;
    inner_.launch_on_worker(worker, chunk.subspan(first_byte, nbytes), [&](const std::byte* scratch, cudaStream_t stream) {
      return cuda::launch_selection_copy(part, scratch, dst, stream);
    });
  }

  void fill(unsigned worker, const ChunkBox& box) override {
    const SelectedPart selected = selected_part(geometry_, box);
    if (selected.empty()) return;
    cuda::SelectionPart part = plan(selected, box);
    std::copy(fill_value_.begin(), fill_value_.end(), reinterpret_cast<std::byte*>(part.fill));
    std::byte* dst = destination_.data;
    inner_.launch_on_worker(worker, {}, [&](const std::byte*, cudaStream_t stream) {
      return cuda::launch_selection_fill(part, dst, stream);
    });
  }

  void finish() override { inner_.finish(); }

 private:
  cuda::SelectionPart plan(const SelectedPart& selected, const ChunkBox& box) const {
    cuda::SelectionPart part;
    const std::size_t size = destination_.element_size;
    part.rank = static_cast<int>(geometry_.rank);
    part.element_size = static_cast<unsigned>(size);
    part.count = selected.num_elements();
    const Extents strides = c_order_strides(box.chunk_shape, box.rank);
    bool aligned = (size == 1 || size == 2 || size == 4 || size == 8 || size == 16) &&
                   reinterpret_cast<std::uintptr_t>(destination_.data) % size == 0;
    for (std::size_t d = 0; d < geometry_.rank; ++d) {
      part.first[d] = selected.first[d];
      part.extent[d] = selected.count[d];
      part.origin[d] = selected.cell_origin[d];
      part.src_stride[d] = static_cast<std::int64_t>(strides[d] * size);
      part.dst_stride[d] = destination_.byte_strides[d];
      part.index[d] = tables_.index(d);
      part.out[d] = tables_.out(d);
      if (destination_.byte_strides[d] % static_cast<std::int64_t>(size) != 0) aligned = false;
    }
    part.aligned = aligned;  // the scratch is 256-byte aligned and shifts are whole elements
    return part;
  }

 public:
  CudaCallStats cuda_calls() const { return inner_.cuda_calls(); }  // ReadStats::cuda_calls
  std::size_t pinned_allocations() const { return inner_.pinned_allocations(); }

 private:
  const SelectionGeometry& geometry_;
  const DeviceTables& tables_;
  DestinationLayout destination_;
  std::vector<std::byte> fill_value_;
  cuda::DeviceSink inner_;
};

int owning_device(const void* data) {
  cudaPointerAttributes attributes{};
  cuda::check_cuda(cudaPointerGetAttributes(&attributes, data), "cudaPointerGetAttributes (destination)");
  switch (attributes.type) {
    case cudaMemoryTypeDevice:
    case cudaMemoryTypeManaged:
    case cudaMemoryTypeHost:
      return attributes.device;
    default:
      throw Error(ErrorKind::invalid_argument,
                  "read_selection_into: the destination is ordinary host memory, not CUDA memory; use Device::cpu");
  }
}

}  // namespace

ReadStats read_selection_to_device(const Array::Impl& array, const SelectionGeometry& geometry,
                                   const DestinationLayout& layout, void* cuda_stream, const Settings& settings) {
  if (!cuda_available())
    throw Error(ErrorKind::cuda, fmt::format("GPU read: no usable CUDA device ({}); read into host memory instead",
                                             cuda::cuda_unavailable_reason()));
  if (geometry.empty()) return ReadStats{.io_path = "staged"};
  if (settings.io_path == IoPath::gds)
    throw Error(ErrorKind::unsupported, "I/O path gds: selections beyond boxes are read through the staged path");
  const int device = owning_device(layout.data);
  cuda::DeviceRestorer restore;
  cuda::use_device(device);

  cuda::DeviceSinkOptions options;
  options.device = device;
  options.slot_bytes = static_cast<std::size_t>(array.sharding ? array.sharding->inner_chain().decoded_spec().nbytes()
                                                               : array.metadata.chunk_nbytes());
  options.staging_bytes = settings.staging_bytes;
  options.pinned_pool_bytes = settings.effective_pinned_pool();
  options.slots_per_thread = settings.slots_per_thread;
  options.caller_stream = static_cast<cudaStream_t>(cuda_stream);
  const ReadPicks picks = selection_picks(array, geometry);
  DeviceTables tables(geometry);
  SelectionDeviceSink sink(geometry, tables, layout, array.metadata.fill_value, options);
  ReadStats stats = run_read(array, geometry.bounds, sink, settings, &picks);
  stats.cuda_calls = sink.cuda_calls();
  stats.pinned_allocations = sink.pinned_allocations();
  return stats;
}

}  // namespace zarrdirect

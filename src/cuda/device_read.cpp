// The CUDA build's side of engine/device_read.hpp, device_copy.hpp and cuda_available():
// picking the I/O path for a device read and running the reader into the matching sink.
//
// Path choice (Settings::io_path):
//   gds       cuFile for every uncompressed chunk; an Error when cuFile cannot be opened.
//   staged    pread into pinned staging, upload, scatter (DeviceSink).
//   automatic cuFile only when it runs natively (nvidia-fs loaded) and the array is
//             uncompressed and unsharded: in compatibility mode cuFile itself bounces through
//             host memory, and the staged path does the same with more parallelism.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>

#include <fmt/format.h>

#include "cuda/cuda_check.hpp"
#include "cuda/cuda_runtime_state.hpp"
#include "cuda/cufile.hpp"
#include "cuda/device_pool.hpp"
#include "cuda/device_sink.hpp"
#include "cuda/gds_sink.hpp"
#include "cuda/gpu_decode_sink.hpp"
#include "engine/device_copy.hpp"
#include "engine/device_read.hpp"
#include "engine/gpu_decode_route.hpp"
#include "engine/reader.hpp"
#include "util/checked_math.hpp"
#include "util/geometry.hpp"

namespace zarrdirect {
namespace {

[[noreturn]] void no_device(std::string_view what) {
  throw Error(ErrorKind::cuda, fmt::format("{}: no usable CUDA device ({}); read into host memory instead", what,
                                           cuda::cuda_unavailable_reason()));
}

// The device that owns the destination, refusing memory no kernel can write. `wanted` (an
// ordinal, or DeviceSpec::kCurrent) must be the device of device memory; for managed and pinned
// host memory, which every device reaches, it picks the device that does the work.
int destination_device(const void* data, int wanted) {
  cudaPointerAttributes attributes{};
  cuda::check_cuda(cudaPointerGetAttributes(&attributes, data), "cudaPointerGetAttributes (destination)");
  switch (attributes.type) {
    case cudaMemoryTypeDevice:
      if (wanted != DeviceSpec::kCurrent && wanted != attributes.device)
        throw Error(ErrorKind::invalid_argument,
                    fmt::format("read_into: the destination is memory of cuda:{}, but cuda:{} was asked for",
                                attributes.device, wanted));
      return attributes.device;
    case cudaMemoryTypeManaged:
    case cudaMemoryTypeHost:  // pinned and mapped: kernels reach it through unified addressing
      return wanted != DeviceSpec::kCurrent ? wanted : attributes.device;
    default:
      throw Error(ErrorKind::invalid_argument,
                  "read_into: the destination is ordinary host memory, not CUDA memory; use Device::cpu for it");
  }
}


}  // namespace

bool cuda_available() { return cuda::cuda_device_count() > 0; }

int usable_cuda_devices() { return cuda::cuda_device_count(); }

void require_cuda_device() {
  if (!cuda_available()) no_device("GPU read or write");
}

std::shared_ptr<void> allocate_device_memory(std::size_t nbytes, int& ordinal) {
  if (!cuda_available()) no_device("cannot allocate device memory");
  cuda::DeviceRestorer restore;
  if (ordinal == DeviceSpec::kCurrent) cuda::check_cuda(cudaGetDevice(&ordinal), "cudaGetDevice");
  else cuda::use_device(ordinal);
  void* data = nullptr;
  // At least one byte, as for host buffers: an empty result still has a valid, distinct pointer.
  cuda::check_cuda(cudaMalloc(&data, std::max<std::size_t>(nbytes, 1)),
                   fmt::format("cudaMalloc ({} bytes for the result on cuda:{})", nbytes, ordinal));
  // Freed on its own device, from whichever thread drops the last reference.
  const int owner = ordinal;
  return std::shared_ptr<void>(data, [owner](void* p) {
    cuda::DeviceRestorer back;
    if (cudaSetDevice(owner) == cudaSuccess) cudaFree(p);  // a failure leaks at worst
  });
}

namespace {
// Device reads running in the process now, for `auto`'s choice of decode side.
std::atomic<unsigned> running_device_reads{0};
struct RunningDeviceRead {
  unsigned now = running_device_reads.fetch_add(1) + 1;  // this one included
  ~RunningDeviceRead() { running_device_reads.fetch_sub(1); }
};
}  // namespace

ReadStats read_to_device(const Array::Impl& array, const Region& region, const DestinationLayout& layout,
                         void* cuda_stream, const Settings& settings, int device_ordinal) {
  if (!cuda_available()) no_device("GPU read");
  for (const auto& range : region) {
    if (range.size() == 0) {
      ReadStats stats;  // nothing to read, nothing to place
      stats.io_path = "staged";
      return stats;
    }
  }
  const RunningDeviceRead running;
  const int device = destination_device(layout.data, device_ordinal);
  cuda::DeviceRestorer restore;
  cuda::use_device(device);

  const auto& metadata = array.metadata;
  const bool eligible = array.chain.is_identity() && array.sharding == nullptr;
  bool use_gds = false;
  cuda::CuFile* cufile = nullptr;
  // A remote store has no file for cuFile: its responses land in pinned staging.
  if (!array.store->remote() &&
      (settings.io_path == IoPath::gds || (settings.io_path == IoPath::automatic && eligible))) {
    cufile = &cuda::CuFile::instance();
    cuda::CuFileState state = cufile->state();
    if (settings.io_path == IoPath::gds || (state.loaded && state.native)) {
      cuda::check_cuda(cudaFree(nullptr), "cudaFree (CUDA context for cuFile)");
      state = cufile->open_driver();
    }
    if (settings.io_path == IoPath::gds) {
      if (!state.driver_open)
        throw Error(ErrorKind::unsupported, fmt::format("I/O path gds: GPUDirect Storage is unusable: {}", state.detail));
      use_gds = true;
    } else {
      use_gds = state.driver_open && state.native;
    }
  }

  cuda::DeviceSinkOptions options;
  options.device = device;
  options.slot_bytes = static_cast<std::size_t>(array.sharding ? array.sharding->inner_chain().decoded_spec().nbytes()
                                                               : metadata.chunk_nbytes());
  options.staging_bytes = settings.staging_bytes;
  options.pinned_pool_bytes = settings.effective_pinned_pool();
  options.slots_per_thread = settings.slots_per_thread;
  options.caller_stream = static_cast<cudaStream_t>(cuda_stream);
  if (use_gds) {
    cuda::GdsSink sink(layout, metadata.fill_value, options, *cufile, cufile->state().native,
                       settings.io_path == IoPath::automatic);
    ReadStats stats = run_read(array, region, sink, settings);
    stats.cuda_calls = sink.cuda_calls();
    stats.pinned_allocations = sink.pinned_allocations();
    return stats;
  }
  options.batch = settings.device_batch;  // only here: the GDS and selection sinks place chunk by chunk
  cuda::DeviceSink sink(layout, metadata.fill_value, options);
  // Compressed chunks the GPU decoders take go to the device still compressed (Settings::decode).
  const GpuDecodeRoute route =
      gpu_decode_route_of_array(metadata.codecs, array.chain, array.sharding ? &array.sharding->inner_chain() : nullptr);
  ReadStats stats;
  // The region's decoded bytes (saturating: only compared with a threshold) for `auto`'s choice.
  std::uint64_t read_bytes = metadata.dtype.size;
  for (const auto& range : region)
    read_bytes = range.size() > 0 && read_bytes > UINT64_MAX / range.size() ? UINT64_MAX : read_bytes * range.size();
  const DecodeSide side = gpu_decode_side(settings.decode, route.codec, true, read_bytes, running.now);
  if (side != DecodeSide::cpu) {
    // A batch holds up to the staging budget in stored bytes, and no more than a quarter of the
    // decoded bytes of the chunks the read decodes, so that even a small read fills the ring's
    // four batches one after another and reading the next overlaps decoding the last (the
    // sharded array's 256^3 region, H100, session 20: one batch 3.51 ms, four of 8 MiB 3.03 ms,
    // 4 MiB 4.18; a 256 MiB region 18.0 -> 14.9 ms). Counted over the chunks, not the region: a
    // 256^3 region half a chunk off the grid cuts 27 chunks of 4 MiB, 108 MiB to decode, which
    // batches of a quarter of its 32 MiB would send through the ring of four in ten turns.
    // Whole reads keep the budget's batches. Reads among many at once (Dask's blocks) overlap
    // each other instead: their batches stay as large as the read (measured so: 16 reads of
    // 128 MiB at 80% of one direct read, session 19), 2 GiB of pinned batches, not 4.
    const auto& grid_shape = array.sharding ? array.sharding->inner_chunk_shape() : metadata.chunk_shape;
    const std::uint64_t decoded_bytes =
        checked_mul(cells_touched(region, grid_shape), options.slot_bytes).value_or(UINT64_MAX);
    const std::uint64_t batch_cap =
        running.now >= kAutoGpuConcurrentReads ? decoded_bytes : std::max<std::uint64_t>(decoded_bytes / 4, 1);
    cuda::DeviceSinkOptions decode_options = options;
    decode_options.staging_bytes = static_cast<std::size_t>(std::min<std::uint64_t>(options.staging_bytes, batch_cap));
    cuda::GpuDecodeSink decoding(sink, route, options.slot_bytes, decode_options, side == DecodeSide::share);
    stats = run_read(array, region, decoding, settings);
  } else {
    stats = run_read(array, region, sink, settings);
  }
  stats.cuda_calls = sink.cuda_calls();  // the placement's calls (the GPU decoders' batches are not counted)
  stats.pinned_allocations = sink.pinned_allocations();  // the placement's (likewise)
  return stats;
}

std::vector<std::byte> copy_to_host(const NDArray& array) {
  std::vector<std::byte> bytes(array.nbytes());
  if (bytes.empty()) return bytes;
  if (array.device() == Device::cuda) {
    if (!cuda_available()) no_device("copy to host");
    cuda::check_cuda(cudaMemcpy(bytes.data(), array.data(), bytes.size(), cudaMemcpyDefault),
                     "cudaMemcpy (device result to host)");
  } else {
    std::memcpy(bytes.data(), array.data(), bytes.size());
  }
  return bytes;
}

}  // namespace zarrdirect

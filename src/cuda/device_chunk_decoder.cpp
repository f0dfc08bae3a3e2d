// The CUDA side of engine/device_chunk_decoder.hpp.
//
// The wave's chunks are stacked along the first axis of one device buffer (from the DevicePool,
// so a batch of patches after the first allocates nothing): slot k is the box of a whole chunk at
// k * chunk_shape[0] in a destination of shape [slots * chunk_shape[0], chunk_shape[1], ...].
// That makes the wave an ordinary device read target, so the GPU decode sink and the device sink
// under it (the CPU-decoded chunks) do all the work, with their checks and fallbacks, unchanged.
// Each slot's DecodedChunk shares ownership of the buffer, which goes back to the pool when the
// last of them (the placer keeps those its batches read) is released.
#include <cuda_runtime_api.h>

#include <fmt/format.h>

#include "cuda/cuda_check.hpp"
#include "cuda/cuda_runtime_state.hpp"
#include "cuda/device_pool.hpp"
#include "cuda/device_sink.hpp"
#include "cuda/gpu_decode_sink.hpp"
#include "engine/device_chunk_decoder.hpp"
#include "util/checked_math.hpp"

namespace zarrdirect {
namespace {

// The wave's device buffer and the chunk views into it (which do not own their bytes).
struct Wave {
  Wave() = default;
  Wave(const Wave&) = delete;
  Wave& operator=(const Wave&) = delete;
  ~Wave() {
    if (!block) return;
    cuda::DeviceRestorer restore;
    if (cudaSetDevice(block->device) == cudaSuccess) {
      std::vector<cuda::DeviceBlockPtr> blocks;
      blocks.push_back(std::move(block));
      cuda::DevicePool::instance().release_device_blocks(std::move(blocks));
    }
  }
  cuda::DeviceBlockPtr block;
  std::vector<DecodedChunk> chunks;
};

void owned_by_wave(std::byte*, int) {}  // the wave's block is returned by ~Wave

class CudaChunkDecoder final : public DeviceChunkDecoder {
 public:
  CudaChunkDecoder(const GpuDecodeRoute& route, std::span<const std::uint64_t> chunk_shape, std::size_t element_size,
                   std::size_t slots, unsigned workers, const Settings& settings, int device, bool share)
      : device_(device), slots_(slots), wave_(std::make_shared<Wave>()) {
    if (chunk_shape.empty() || chunk_shape.size() > kMaxRank || slots == 0)
      throw Error(ErrorKind::invalid_argument,
                  fmt::format("GPU chunk decoding: {} slots of a {}-d chunk", slots, chunk_shape.size()));
    std::uint64_t elements = 1;
    for (std::uint64_t extent : chunk_shape) elements = checked_mul(elements, extent).value_or(0);
    chunk_bytes_ = static_cast<std::size_t>(checked_mul(elements, element_size).value_or(0));
    const std::uint64_t total = checked_mul(std::uint64_t{chunk_bytes_}, std::uint64_t{slots}).value_or(0);
    const std::uint64_t stacked_rows = checked_mul(chunk_shape[0], std::uint64_t{slots}).value_or(0);
    if (chunk_bytes_ == 0 || total == 0 || stacked_rows == 0)
      throw Error(ErrorKind::invalid_argument, "GPU chunk decoding: an empty or overflowing wave");
    box_.rank = chunk_shape.size();
    for (std::size_t d = 0; d < box_.rank; ++d) box_.chunk_shape[d] = box_.extent[d] = chunk_shape[d];
    cuda::DeviceRestorer restore;
    cuda::use_device(device_);
    wave_->block = cuda::DevicePool::instance().acquire_device_block(device_, static_cast<std::size_t>(total));
    Extents stacked = box_.chunk_shape;
    stacked[0] = stacked_rows;
    const DestinationLayout layout = DestinationLayout::contiguous(
        wave_->block->data, std::span<const std::uint64_t>(stacked.data(), box_.rank), element_size);
    cuda::DeviceSinkOptions options;
    options.device = device_;
    options.slot_bytes = chunk_bytes_;
    options.staging_bytes = settings.staging_bytes;
    options.pinned_pool_bytes = settings.effective_pinned_pool();
    options.slots_per_thread = settings.slots_per_thread;
    // Every slot is given a chunk (or left alone): no fill value is ever written.
    const std::vector<std::byte> no_fill(element_size);
    placed_ = std::make_unique<cuda::DeviceSink>(layout, no_fill, options);
    decoding_ = std::make_unique<cuda::GpuDecodeSink>(*placed_, route, chunk_bytes_, options, share);
    decoding_->start(workers, chunk_bytes_);
  }

  // Unfinished (a failure): the sinks' destructors wait for what they sent before the buffers
  // go back to the pool, and the wave's block is returned after them (member order).

  bool decode(unsigned worker, std::span<const std::byte> stored, std::size_t slot, std::string_view where) override {
    return decoding_->place_stored(worker, stored, box_at(slot), where);
  }
  std::span<std::byte> staging(unsigned worker, std::size_t nbytes) override { return decoding_->staging(worker, nbytes); }
  void place_decoded(unsigned worker, std::span<const std::byte> chunk, std::size_t slot) override {
    decoding_->place(worker, chunk, box_at(slot));
  }

  std::vector<DecodedChunkPtr> finish() override {
    cuda::DeviceRestorer restore;
    cuda::use_device(device_);
    decoding_->finish();
    gpu_chunks_ = decoding_->sink_decoded().chunks;
    wave_->chunks.reserve(slots_);
    for (std::size_t k = 0; k < slots_; ++k)
      wave_->chunks.emplace_back(wave_->block->data + k * chunk_bytes_, chunk_bytes_, device_, owned_by_wave);
    std::vector<DecodedChunkPtr> chunks;
    chunks.reserve(slots_);
    for (std::size_t k = 0; k < slots_; ++k) chunks.emplace_back(wave_, &wave_->chunks[k]);
    return chunks;
  }

  std::uint64_t gpu_chunks() const override { return gpu_chunks_; }

 private:
  ChunkBox box_at(std::size_t slot) const {
    if (slot >= slots_)
      throw Error(ErrorKind::invalid_argument, fmt::format("GPU chunk decoding: slot {} of {}", slot, slots_));
    ChunkBox box = box_;
    box.offset_in_dest[0] = static_cast<std::uint64_t>(slot) * box_.chunk_shape[0];
    return box;
  }

  int device_;
  std::size_t slots_;
  std::size_t chunk_bytes_ = 0;
  ChunkBox box_;
  std::shared_ptr<Wave> wave_;
  std::unique_ptr<cuda::DeviceSink> placed_;
  std::unique_ptr<cuda::GpuDecodeSink> decoding_;
  std::uint64_t gpu_chunks_ = 0;
};

}  // namespace

std::unique_ptr<DeviceChunkDecoder> make_device_chunk_decoder(const GpuDecodeRoute& route,
                                                              std::span<const std::uint64_t> chunk_shape,
                                                              std::size_t element_size, std::size_t slots,
                                                              unsigned workers, const Settings& settings, int device,
                                                              bool share) {
  cuda::DeviceRestorer restore;
  return std::make_unique<CudaChunkDecoder>(route, chunk_shape, element_size, slots, workers, settings, device, share);
}

}  // namespace zarrdirect

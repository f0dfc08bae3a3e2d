// GPU decoding for read_many into device memory (issue 16, Settings::decode): implemented in
// src/cuda/device_chunk_decoder.cpp when CUDA is built, and as a clear error otherwise
// (device_chunk_decoder_device_unavailable.cpp).
//
// read_many decodes each chunk a batch of regions needs once, then places it into every region
// that needs it. On the CPU path that decode is the whole cost of a batch of random patches from
// compressed chunks (16 cores decode zstd-1 at about 12 GB/s). With a decoder, the batch reader
// hands the stored bytes of a wave of chunks to the GPU decoders (cuda/gpu_decode_sink.hpp: the
// same batches, kernels, checks and CPU fallback as a device read of one region), which write
// each chunk whole into its slot of one device buffer; the placer then places the boxes from
// there as it places device-cache entries (DevicePlacer::place_resident), device to device.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "engine/chunk_cache.hpp"
#include "engine/gpu_decode_route.hpp"
#include "zarrdirect/settings.hpp"

namespace zarrdirect {

// A wave of `slots` chunks of one shape decoded into device memory. Calls from several workers at
// once are safe; each slot is given at most one chunk.
class DeviceChunkDecoder {
 public:
  virtual ~DeviceChunkDecoder() = default;

  // Takes the stored (still encoded) bytes of a whole chunk, copied before it returns, to decode
  // on the GPU into `slot`; `where` names the chunk in errors ("<path> (chunk <key>)"). False,
  // having taken nothing, when the GPU decoders leave this chunk to the CPU (a frame they do not
  // plan, or no room in the GPU's batches when decoding is shared): the caller decodes it and
  // hands it to place_decoded(). A bad chunk given earlier may fail here as EarlierChunkError.
  virtual bool decode(unsigned worker, std::span<const std::byte> stored, std::size_t slot, std::string_view where) = 0;
  // Host memory for a chunk the caller decodes itself (valid until the worker's next call), then
  // copied into `slot` by place_decoded().
  virtual std::span<std::byte> staging(unsigned worker, std::size_t nbytes) = 0;
  virtual void place_decoded(unsigned worker, std::span<const std::byte> chunk, std::size_t slot) = 0;

  // Waits for every chunk given, then returns the slots' chunks (device memory, slot order; a
  // slot given nothing holds undefined bytes). They stay valid while any of them is referenced.
  // Error(corrupt_data) naming the chunk when one failed to decode.
  virtual std::vector<DecodedChunkPtr> finish() = 0;
  // Chunks decoded on the GPU, and on the host by the decoder itself (finish() first).
  virtual std::uint64_t gpu_chunks() const = 0;
};

// Decoded bytes one wave of a read_many holds at most (a batch of patches of 4 MiB chunks needs
// several waves of 256 chunks; each is placed before the next is decoded).
inline constexpr std::uint64_t kDeviceDecodeWaveBytes = std::uint64_t{1} << 30;

// A decoder of `slots` chunks of `chunk_shape` (elements of `element_size` bytes, decoded C order)
// stored as `route` says, on CUDA device `device`, for `workers` workers; `share`: leave a chunk
// to the CPU rather than wait for room in the GPU's batches. Error(unsupported) without CUDA.
std::unique_ptr<DeviceChunkDecoder> make_device_chunk_decoder(const GpuDecodeRoute& route,
                                                              std::span<const std::uint64_t> chunk_shape,
                                                              std::size_t element_size, std::size_t slots,
                                                              unsigned workers, const Settings& settings, int device,
                                                              bool share);

}  // namespace zarrdirect

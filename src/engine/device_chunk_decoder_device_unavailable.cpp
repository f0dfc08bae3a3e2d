// Built when CUDA is not: GPU chunk decoding for read_many fails with one clear message (read_many
// asks for a decoder only when its destinations are device memory, which such a build refuses).
#include "engine/device_chunk_decoder.hpp"
#include "zarrdirect/error.hpp"

namespace zarrdirect {

std::unique_ptr<DeviceChunkDecoder> make_device_chunk_decoder(const GpuDecodeRoute&, std::span<const std::uint64_t>,
                                                              std::size_t, std::size_t, unsigned, const Settings&, int,
                                                              bool) {
  throw Error(ErrorKind::unsupported, "GPU decoding is not available: this build of zarrdirect has no CUDA support");
}

}  // namespace zarrdirect

// The batch reader behind Array::read_many and cached reads: many regions planned as one.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "engine/array_state.hpp"
#include "engine/device_chunk_decoder.hpp"
#include "engine/device_placer.hpp"
#include "engine/layout.hpp"

namespace zarrdirect {

// Reads each of `regions` (resolved against the shape, none empty) into the host destination of
// the same index. Every chunk (inner chunk, for a sharded array) any region needs is fetched and
// decoded once (or taken from the handle's cache when it is on) and placed into each region
// that needs it. Stats: chunks_total and chunks_missing count distinct chunks, bytes_out is 0.
// The plan holds 24 + 8 * rank bytes per (chunk, region) pair.
//
// With `placer`, the destinations are in device memory (device_placer.hpp) and every chunk goes
// through it: the part of it the batch needs is staged once and placed on the device into every
// region, chunks of the handle's device cache are placed from GPU memory, and the placer is
// finished before this returns. `destinations` then describe the device memory itself. Chunks
// whose codec a GPU decoder takes (when Settings::decode puts them on the GPU, and neither cache
// is on) are decoded by decoders from `make_decoder` (default make_device_chunk_decoder; tests
// pass a host one), a wave at a time (wave_slots()), and placed from there.
using DeviceChunkDecoderFactory = std::function<std::unique_ptr<DeviceChunkDecoder>(
    const GpuDecodeRoute& route, std::span<const std::uint64_t> chunk_shape, std::size_t element_size,
    std::size_t slots, unsigned workers, const Settings& settings, int device, bool share)>;
ReadStats run_read_many(const Array::Impl& array, const std::vector<Region>& regions,
                        const std::vector<DestinationLayout>& destinations, const Settings& settings,
                        DevicePlacer* placer = nullptr, const DeviceChunkDecoderFactory& make_decoder = {});

// The GPU decoders' route for read_many of `array` into device memory under `settings`, with a
// cache (host or device) on or not, for a batch of `decoded_bytes` of distinct chunks: codec none
// when its chunks decode on the host (a cache on, a 0-d array, chunks larger than a wave, no wired
// decoder for the codec, or read_many_decode_side() says cpu).
GpuDecodeRoute read_many_gpu_route(const Array::Impl& array, const Settings& settings, bool cache_on,
                                   std::uint64_t decoded_bytes = UINT64_MAX);

// The decoded bytes of the distinct chunks (inner chunks of a sharded array) that `regions` touch,
// stored or not (saturating).
std::uint64_t distinct_chunk_bytes(const Array::Impl& array, const std::vector<Region>& regions);

// Where a batch whose chunks go `route`'s way decodes `decodable_bytes` (decoded) of chunks under
// `side`: gpu_decode_side()'s table, the batch standing for one read of that many bytes. Under
// `auto`, a batch of random patches from zstd chunks (hundreds of chunks, gigabytes) is shared with
// the CPU, as a large read is; a smaller batch decodes on the GPU alone, as a smaller read does.
DecodeSide read_many_decode_side(const GpuDecodeRoute& route, DecodeSide side, std::uint64_t decodable_bytes);

// Chunks of `chunk_bytes` one GPU decoding wave of read_many holds: kDeviceDecodeWaveBytes, at
// most four times the read's staging budget (Settings::staging_bytes), at least one chunk.
std::size_t wave_slots(std::uint64_t chunk_bytes, const Settings& settings);

}  // namespace zarrdirect

namespace zarrdirect {

// Drops, when it goes out of scope, the cached chunks that a write of `region` (resolved) touches
// (the whole cache if naming them fails). Put one before a write through the handle: chunks done
// before a failure are new as well.
class CacheInvalidation {
 public:
  CacheInvalidation(const Array::Impl& array, const Region& region) : array_(array), region_(region) {}
  ~CacheInvalidation();
  CacheInvalidation(const CacheInvalidation&) = delete;
  CacheInvalidation& operator=(const CacheInvalidation&) = delete;

 private:
  const Array::Impl& array_;
  const Region& region_;
};

}  // namespace zarrdirect

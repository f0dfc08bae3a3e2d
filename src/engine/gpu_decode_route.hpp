// Which chunks a device read decodes on the GPU: the eligibility of a codec chain, and the one
// table of where each GPU-decodable codec is decoded under Settings::decode.
//
// A chain is eligible when its bytes->bytes part is exactly one compressor the GPU decoders know
// (numcodecs lz4; blosc 1, whose lz4/lz4hc/memcpyed frames the GPU decodes and whose other
// frames fall back to the CPU chunk by chunk), behind `bytes` (either endianness) and at most one
// `transpose`; no other filter, no checksum. What the GPU leaves undone (the byte swap, the
// transpose) the placement kernels do while copying the decoded chunk into the destination, so
// the route carries the stored layout: the shape as stored and the swap unit.
//
// Host-only logic (no CUDA): unit-tested on machines without a GPU.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "codec/codec.hpp"
#include "codec/portable/blosc_frame.hpp"
#include "zarrdirect/settings.hpp"

namespace zarrdirect {

// The compressors with a GPU decoder.
enum class GpuCodec : std::uint8_t { none, lz4, blosc, zstd };
std::string_view to_string(GpuCodec codec);

struct GpuDecodeRoute {
  GpuCodec codec = GpuCodec::none;  // none: not eligible, `why` says why
  std::string why;
  std::string compressor;  // the codec's name in the metadata ("blosc", "numcodecs.lz4", ...), for errors
  std::size_t element_size = 1;
  // 0: stored in native byte order; else the stored bytes are reversed in units of this many
  // (the element, or each half of a complex number).
  std::size_t swap_unit = 0;
  // The chunk as stored: its shape (the decoded shape, permuted by a transpose) and, for each
  // decoded axis k, the stride (in elements) of that axis in the stored C-order bytes.
  std::vector<std::uint64_t> stored_shape;
  std::vector<std::int64_t> stored_strides;
};

// The route of chunks stored with `codecs` (a v3-style codec list, v2 metadata converted) and
// prepared as `chain`. Never throws for an ineligible chain: it returns GpuCodec::none.
GpuDecodeRoute gpu_decode_route(const nlohmann::json& codecs, const codec::CodecChain& chain);

// The route of the chunks a read of an array stages: `codecs` are the array's; for sharded arrays
// (the chain is exactly sharding_indexed, `inner` its inner chain) the inner chunks' codecs.
GpuDecodeRoute gpu_decode_route_of_array(const nlohmann::json& codecs, const codec::CodecChain& chain,
                                         const codec::CodecChain* inner);

// Per chunk, the host-side plan: whether the GPU decoders take a chunk stored as `stored` that
// must decode to `chunk_bytes` bytes. Refused (decoded on the CPU instead, which also reports
// what is wrong with a bad one): blosc frames blosc_plan does not accept (blosclz, zstd, ...
// inside, a header it cannot plan) or that decode to another size; numcodecs lz4 whose size
// header is not the chunk's; zstd frames whose header names another size, a dictionary, or no
// content size; codecs without a wired decoder.
struct GpuChunkPlan {
  bool accepted = false;
  codec::portable::BloscFrame frame;  // blosc: the checked header, for the block jobs
};
GpuChunkPlan plan_gpu_chunk(GpuCodec codec, std::span<const std::byte> stored, std::uint64_t chunk_bytes);

// The one table: where a device read of `read_bytes` (decoded) with `device_present` decodes
// chunks of `codec` under `side`: DecodeSide::cpu, gpu or share, never automatic. `gpu` and
// `share` take every codec with a wired decoder; `auto` gives each codec the side it measured
// fastest on; blosc-lz4 reads under kAutoBloscGpuMinBytes stay on the CPU unless at least
// kAutoGpuConcurrentReads device reads run. For a codec `auto` shares: while at least
// kAutoGpuConcurrentReads device reads run in the process (`concurrent_reads`, this one
// included), reads of less than
// kAutoConcurrentShareMinBytes go to the GPU alone; otherwise reads of at least
// kAutoShareMinBytes are shared and smaller ones go to the GPU alone.
DecodeSide gpu_decode_side(DecodeSide side, GpuCodec codec, bool device_present,
                           std::uint64_t read_bytes = UINT64_MAX, unsigned concurrent_reads = 1);
// With a Huffman stream split over 32 lanes and a block of threads per frame (session 20, H100,
// zstd-1; docs/BENCHMARKS.md), the GPU alone beat 16 cores at every read size measured: one 4 MiB
// chunk 2.0-2.2 ms against 5.0-6.3 on the CPU path, 16 MiB regions 2.6-2.7 against 5.5-9.3, the
// sharded array's 256^3 region (64 inner chunks of 512 KiB) 2.2-2.7 against 4.4-4.9, 128 MiB 5.9
// against 18.6; a single inner chunk of 512 KiB 0.47 against 0.55, 8 of them 1.15-1.18 against
// 1.13-1.36 (even). From 128 MiB the ring is full and the cores add their rate (share): whole
// 4 GiB reads shared 41.6 GB/s, the GPU alone 42.2, as before. Many reads at once (Dask's blocks:
// 16 reads of one thread each) go to the GPU alone below 1 GiB: Dask's 128 MiB blocks shared,
// each read's threads decoding beside 15 other reads, ran at 38% of one direct read, on the GPU
// alone at 80% (session 19).
inline constexpr std::uint64_t kAutoShareMinBytes = std::uint64_t{128} << 20;
// blosc-lz4 under `auto`: lone reads of fewer decoded bytes stay on the CPU (gpu_decode_route.cpp's
// table says why).
inline constexpr std::uint64_t kAutoBloscGpuMinBytes = std::uint64_t{256} << 20;
inline constexpr std::uint64_t kAutoConcurrentShareMinBytes = std::uint64_t{1} << 30;
inline constexpr unsigned kAutoGpuConcurrentReads = 4;
// gpu_decode_side() is gpu or share: the read goes through the GPU decode sink.
bool decode_on_gpu(DecodeSide side, GpuCodec codec, bool device_present);

// The GPU-decoded codecs under `side` with a device present, for `info --system`.
std::vector<std::string> gpu_decoded_codecs(DecodeSide side);

// describe_system()'s "decode" and "decode_reason": the policy of ZARRDIRECT_DECODE (the default
// when it is unset, the error when it is invalid) on this machine.
void describe_decode_policy(nlohmann::json& doc, bool device_present);

}  // namespace zarrdirect

#include "engine/gpu_decode_route.hpp"

#include <algorithm>
#include <numeric>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "codec/portable/zstd_frame.hpp"
#include "zarrdirect/dtype.hpp"

namespace zarrdirect {
namespace {

// One row per compressor with a GPU decoder. `wired`: the decoder is connected to the read
// path. `automatic`: where `auto` decodes it (gpu, share or cpu), as measured fastest; adjust
// after measuring. `cpu_below`: a lone read of fewer decoded bytes than this stays on the CPU
// under `auto` (0: none), where the cores measured faster than one batch's trip to the GPU.
struct GpuCodecRow {
  GpuCodec codec;
  const char* label;
  bool wired;
  DecodeSide automatic;
  std::uint64_t cpu_below = 0;
};
constexpr GpuCodecRow kGpuCodecTable[] = {
    // numcodecs lz4 is one LZ4 block per chunk, so a read gives a warp per chunk (tens at once):
    // 6.2-15.4 GB/s on the H100 against 24.6 on 16 cores (bench/decode_bench.sh, session 11).
    {GpuCodec::lz4, "lz4", true, DecodeSide::cpu},
    // blosc frames give a warp per stream (thousands per batch): 39.9 GB/s against 24.8 on 16
    // cores for 128^3 chunks, 38.0 against 19.7 for shards of 64^3 (H100, session 11); whole
    // 4 GiB reads 33.6-47.9 against 16.8 (session 21). LZ4 decodes fast on 16 cores, and a small
    // read's batches are too small to fill the GPU: by read size, ms on the GPU against the CPU
    // path (H100, session 22): 16 MiB 5.62 / 3.44, 32 MiB 6.44 / 3.52, 128 MiB 8.59 / 8.77,
    // 256 MiB 11.61 / 13.10, 512 MiB 18.70 / 27.19, 1 GiB 32.57 / 49.69, 4 GiB 90.8 / 185.3.
    // So `auto` keeps lone reads under kAutoBloscGpuMinBytes (256 MiB) on the CPU.
    {GpuCodec::blosc, "blosc-lz4", true, DecodeSide::gpu, kAutoBloscGpuMinBytes},
    // zstd frames are listed as block jobs (zstd_gpu_jobs.hpp): 32 lanes per Huffman stream, a
    // thread per block's sequences, then a warp or a block of threads per frame
    // (zstd_decode_kernels.cu). With the Huffman loop's early returns gone (session 17) and
    // batches of the whole staging budget (session 19), 4 GiB reads of 4 MiB frames gave
    // 44.1-44.7 GB/s through the GPU alone and 44.4-44.8 shared, against 13.7-13.8 on 16 cores;
    // 256^3 shards of 64^3 (512 KiB frames) 43.8 against 14.4 (H100, session 19). Listing a
    // chunk costs the host a small part of decoding it, so sharing adds the cores' rate to the
    // GPU's where the ring is full.
    {GpuCodec::zstd, "zstd", true, DecodeSide::share},
};

const GpuCodecRow* row_of(GpuCodec codec) {
  for (const auto& row : kGpuCodecTable)
    if (row.codec == codec) return &row;
  return nullptr;
}

GpuDecodeRoute refuse(std::string why) {
  GpuDecodeRoute route;
  route.why = std::move(why);
  return route;
}

std::string name_of(const nlohmann::json& codec) {
  if (!codec.is_object()) return {};
  auto it = codec.find("name");
  return it != codec.end() && it->is_string() ? it->get<std::string>() : std::string();
}

const nlohmann::json* configuration_of(const nlohmann::json& codec) {
  auto it = codec.find("configuration");
  return it != codec.end() && it->is_object() ? &*it : nullptr;
}

// Blosc's configured compressor, when the configuration names one: frames are self-describing
// (each chunk is planned on its own), but an array configured for another compressor would send
// every chunk back to the CPU after planning, so it is not routed at all.
bool blosc_configured_for_lz4(const nlohmann::json& codec) {
  const nlohmann::json* config = configuration_of(codec);
  if (!config) return true;
  auto it = config->find("cname");
  if (it == config->end() || !it->is_string()) return true;
  const std::string cname = it->get<std::string>();
  return cname == "lz4" || cname == "lz4hc";
}

// The transpose's order: decoded axis order[i] is stored axis i.
bool transpose_order(const nlohmann::json& codec, std::size_t rank, std::vector<std::size_t>& order) {
  order.resize(rank);
  std::iota(order.begin(), order.end(), std::size_t{0});
  const nlohmann::json* config = configuration_of(codec);
  if (!config) return false;
  auto it = config->find("order");
  if (it == config->end()) return false;
  if (it->is_string()) {
    const std::string text = it->get<std::string>();
    if (text == "C") return true;
    if (text == "F") {
      std::reverse(order.begin(), order.end());
      return true;
    }
    return false;
  }
  if (!it->is_array() || it->size() != rank) return false;
  std::vector<bool> seen(rank, false);
  for (std::size_t i = 0; i < rank; ++i) {
    const auto& axis = (*it)[i];
    if (!axis.is_number_integer()) return false;
    const auto value = axis.get<std::int64_t>();
    if (value < 0 || static_cast<std::uint64_t>(value) >= rank || seen[static_cast<std::size_t>(value)]) return false;
    seen[static_cast<std::size_t>(value)] = true;
    order[i] = static_cast<std::size_t>(value);
  }
  return true;
}

}  // namespace

std::string_view to_string(GpuCodec codec) {
  switch (codec) {
    case GpuCodec::none: return "none";
    case GpuCodec::lz4: return "lz4";
    case GpuCodec::blosc: return "blosc";
    case GpuCodec::zstd: return "zstd";
  }
  return "none";
}

GpuDecodeRoute gpu_decode_route(const nlohmann::json& codecs, const codec::CodecChain& chain) {
  if (!codecs.is_array() || codecs.empty()) return refuse("no codecs");
  const auto& a2a = chain.array_to_array();
  const auto& b2b = chain.bytes_to_bytes();
  if (chain.array_to_bytes().name() != "bytes") return refuse(fmt::format("{} is not bytes", chain.array_to_bytes().name()));
  if (b2b.size() != 1) return refuse(fmt::format("{} bytes-to-bytes codecs, the GPU takes exactly one", b2b.size()));
  if (a2a.size() > 1 || (a2a.size() == 1 && a2a.front()->name() != "transpose"))
    return refuse("a filter other than one transpose");
  if (codecs.size() != a2a.size() + 2) return refuse("codec list and chain differ");
  const std::string compressor = name_of(codecs.back());
  GpuDecodeRoute route;
  route.compressor = compressor;
  if (compressor == "numcodecs.lz4") {
    route.codec = GpuCodec::lz4;
  } else if (compressor == "blosc" || compressor == "numcodecs.blosc") {
    if (!blosc_configured_for_lz4(codecs.back())) return refuse("blosc configured for a compressor other than lz4");
    route.codec = GpuCodec::blosc;
  } else if (compressor == "zstd" || compressor == "numcodecs.zstd") {
    route.codec = GpuCodec::zstd;
  } else {
    return refuse(fmt::format("compressor {} has no GPU decoder", compressor));
  }

  const codec::ArraySpec& decoded = chain.decoded_spec();
  const std::size_t rank = decoded.shape.size();
  // The placement plan holds the array's dims plus up to two for the element's bytes.
  if (rank + 2 > 33) return refuse(fmt::format("{} dims, more than the placement kernels take", rank));
  route.element_size = decoded.dtype.size;
  if (route.element_size == 0) return refuse("elements of no bytes");
  if (!chain.array_to_bytes().is_identity()) route.swap_unit = decoded.dtype.swap_unit();
  if (route.swap_unit == 1) route.swap_unit = 0;

  std::vector<std::size_t> order(rank);
  std::iota(order.begin(), order.end(), std::size_t{0});
  if (!a2a.empty() && !transpose_order(codecs.front(), rank, order)) return refuse("a transpose order it cannot read");
  route.stored_shape.resize(rank);
  for (std::size_t i = 0; i < rank; ++i) route.stored_shape[i] = decoded.shape[order[i]];
  if (!a2a.empty() && a2a.front()->encoded_spec().shape != route.stored_shape) return refuse("transpose shape differs");
  // C-order strides of the stored shape, then each one given to the decoded axis it holds.
  std::vector<std::int64_t> stored_c(rank, 1);
  for (std::size_t i = rank; i-- > 1;)
    stored_c[i - 1] = stored_c[i] * static_cast<std::int64_t>(route.stored_shape[i]);
  route.stored_strides.assign(rank, 0);
  for (std::size_t i = 0; i < rank; ++i) route.stored_strides[order[i]] = stored_c[i];
  return route;
}

GpuDecodeRoute gpu_decode_route_of_array(const nlohmann::json& codecs, const codec::CodecChain& chain,
                                         const codec::CodecChain* inner) {
  if (!inner) return gpu_decode_route(codecs, chain);
  if (!codecs.is_array() || codecs.size() != 1) return refuse("sharded chain of several codecs");
  const nlohmann::json* config = configuration_of(codecs.front());
  if (!config) return refuse("sharding without a configuration");
  auto it = config->find("codecs");
  if (it == config->end()) return refuse("sharding without inner codecs");
  return gpu_decode_route(*it, *inner);
}

GpuChunkPlan plan_gpu_chunk(GpuCodec codec, std::span<const std::byte> stored, std::uint64_t chunk_bytes) {
  GpuChunkPlan plan;
  const auto* bytes = reinterpret_cast<const std::uint8_t*>(stored.data());
  switch (codec) {
    case GpuCodec::blosc:
      plan.accepted = codec::portable::blosc_plan(bytes, stored.size(), chunk_bytes, plan.frame) ==
                          codec::portable::DecodeStatus::ok &&
                      plan.frame.nbytes == chunk_bytes;
      break;
    case GpuCodec::lz4:
      // numcodecs: a little-endian uint32 of the decoded size, then one LZ4 block.
      plan.accepted = stored.size() >= 4 && codec::portable::blosc_detail::read_le32(bytes) == chunk_bytes;
      break;
    case GpuCodec::zstd: {
      // The header alone (a few bytes): a frame of exactly the chunk's size, without a dictionary.
      // What only decoding reveals (further frames after this one, Huffman tables past the
      // format's 11 bits) comes back from the GPU as `unsupported`, and the sink decodes that
      // chunk with libzstd.
      const codec::portable::ZstdFramePlan frame = codec::portable::zstd_frame_plan(bytes, stored.size(), chunk_bytes);
      plan.accepted = frame.status == codec::portable::DecodeStatus::ok && frame.content_size == chunk_bytes;
      break;
    }
    case GpuCodec::none:
      break;
  }
  return plan;
}

DecodeSide gpu_decode_side(DecodeSide side, GpuCodec codec, bool device_present, std::uint64_t read_bytes,
                           unsigned concurrent_reads) {
  const GpuCodecRow* row = row_of(codec);
  if (!device_present || !row || !row->wired) return DecodeSide::cpu;
  if (side != DecodeSide::automatic) return side;
  if (read_bytes < row->cpu_below && concurrent_reads < kAutoGpuConcurrentReads) return DecodeSide::cpu;
  if (row->automatic != DecodeSide::share) return row->automatic;
  if (concurrent_reads >= kAutoGpuConcurrentReads && read_bytes < kAutoConcurrentShareMinBytes) return DecodeSide::gpu;
  return read_bytes >= kAutoShareMinBytes ? DecodeSide::share : DecodeSide::gpu;
}

bool decode_on_gpu(DecodeSide side, GpuCodec codec, bool device_present) {
  return gpu_decode_side(side, codec, device_present) != DecodeSide::cpu;
}

std::vector<std::string> gpu_decoded_codecs(DecodeSide side) {
  std::vector<std::string> names;
  for (const auto& row : kGpuCodecTable) {
    const DecodeSide where = gpu_decode_side(side, row.codec, true);
    if (where == DecodeSide::gpu && side == DecodeSide::automatic && row.cpu_below > 0)
      names.emplace_back(fmt::format("{} (reads of {} MiB or more, or while {} or more device reads run; smaller "
                                     "ones on the CPU)",
                                     row.label, row.cpu_below >> 20, kAutoGpuConcurrentReads));
    else if (where == DecodeSide::gpu)
      names.emplace_back(row.label);
    if (where == DecodeSide::share && side == DecodeSide::automatic)
      names.emplace_back(fmt::format("{} (shared with the CPU in reads of {} MiB or more; smaller reads on the GPU "
                                     "alone, as are reads under 1 GiB while {} or more device reads run)",
                                     row.label, kAutoShareMinBytes >> 20, kAutoGpuConcurrentReads));
    else if (where == DecodeSide::share)
      names.emplace_back(fmt::format("{} (shared with the CPU)", row.label));
  }
  return names;
}

void describe_decode_policy(nlohmann::json& doc, bool device_present) {
  DecodeSide side = DecodeSide::automatic;
  try {
    side = Settings::from_environment().decode;
  } catch (const Error& e) {
    doc["decode"] = "invalid";
    doc["decode_reason"] = e.what();
    return;
  }
  doc["decode"] = std::string(to_string(side));
  const std::vector<std::string> gpu = gpu_decoded_codecs(side);
  if (!device_present) {
    doc["decode_reason"] = "no CUDA device: every chunk is decoded on the CPU";
  } else if (gpu.empty()) {
    doc["decode_reason"] = "device reads decode every chunk on the CPU and upload it decoded";
  } else {
    doc["decode_reason"] = fmt::format(
        "device reads decode {} chunks on the GPU (frames its decoders cannot plan, and every other codec, on the "
        "CPU); host reads on the CPU",
        fmt::join(gpu, ", "));
  }
}

}  // namespace zarrdirect

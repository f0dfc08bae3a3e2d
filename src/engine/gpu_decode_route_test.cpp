// The GPU decode dispatch, on the host: which codec chains are routed to the GPU decoders (and
// with what stored layout), the per-chunk plan that sends refused frames back to the CPU, and the
// policy table under each Settings::decode.
#include "engine/gpu_decode_route.hpp"

#include <blosc.h>
#include <gtest/gtest.h>
#include <zstd.h>

#include <cstring>
#include <vector>

#include "codec/codec_test_support.hpp"
#include "codec/sharding.hpp"

namespace zarrdirect {
namespace {

using nlohmann::json;

json bytes_codec(const char* endian = "little") { return {{"name", "bytes"}, {"configuration", {{"endian", endian}}}}; }
json blosc_v3(const char* cname = "lz4") {
  return {{"name", "blosc"},
          {"configuration", {{"cname", cname}, {"clevel", 5}, {"shuffle", "shuffle"}, {"typesize", 2}, {"blocksize", 0}}}};
}
json blosc_v2(const char* cname = "lz4") {
  return {{"name", "numcodecs.blosc"}, {"configuration", {{"cname", cname}, {"clevel", 5}, {"shuffle", 1}, {"blocksize", 0}}}};
}
json lz4_codec() { return {{"name", "numcodecs.lz4"}, {"configuration", {{"acceleration", 1}}}}; }
json transpose_codec(json order) { return {{"name", "transpose"}, {"configuration", {{"order", order}}}}; }


GpuDecodeRoute route_of(const json& codecs, std::vector<std::uint64_t> shape = {4, 6, 8},
                        const char* dtype = "uint16") {
  const codec::CodecChain chain =
      codec::CodecChain::create(codecs, codec::test::make_spec(shape, parse_v3_data_type(dtype)), "test/zarr.json");
  return gpu_decode_route(codecs, chain);
}

TEST(GpuDecodeRoute, EligibleChainsAreRouted) {
  EXPECT_EQ(route_of(json::array({bytes_codec(), blosc_v3()})).codec, GpuCodec::blosc);
  EXPECT_EQ(route_of(json::array({bytes_codec(), blosc_v3("lz4hc")})).codec, GpuCodec::blosc);
  EXPECT_EQ(route_of(json::array({bytes_codec(), blosc_v2()})).codec, GpuCodec::blosc);
  EXPECT_EQ(route_of(json::array({bytes_codec(), lz4_codec()})).codec, GpuCodec::lz4);
  EXPECT_EQ(route_of(json::array({bytes_codec("big"), lz4_codec()})).codec, GpuCodec::lz4);
  EXPECT_EQ(route_of(json::array({transpose_codec({2, 0, 1}), bytes_codec(), blosc_v3()})).codec, GpuCodec::blosc);
  const GpuDecodeRoute zstd = route_of(json::array({bytes_codec(), {{"name", "zstd"}, {"configuration", {{"level", 1}}}}}));
  EXPECT_EQ(zstd.codec, GpuCodec::zstd);  // routed, but not wired: the table keeps it on the CPU
  EXPECT_EQ(route_of(json::array({bytes_codec(), lz4_codec()})).compressor, "numcodecs.lz4");
}

TEST(GpuDecodeRoute, IneligibleChainsStayOnTheCpu) {
  const json gzip = {{"name", "gzip"}, {"configuration", {{"level", 1}}}};
  const json crc = {{"name", "crc32c"}};
  const json delta = {{"name", "numcodecs.delta"}, {"configuration", {{"dtype", "<u2"}}}};
  for (const json& codecs : {json::array({bytes_codec()}),                        // uncompressed
                             json::array({bytes_codec(), gzip}),                  // no GPU decoder
                             json::array({bytes_codec(), blosc_v3(), crc}),       // a checksum after it
                             json::array({bytes_codec(), lz4_codec(), blosc_v3()}),  // two compressors
                             json::array({delta, bytes_codec(), lz4_codec()}),    // a filter
                             json::array({bytes_codec(), blosc_v3("zstd")}),      // blosc configured for zstd
                             json::array({bytes_codec(), blosc_v2("blosclz")})}) {
    const GpuDecodeRoute route = route_of(codecs);
    EXPECT_EQ(route.codec, GpuCodec::none) << codecs.dump();
    EXPECT_FALSE(route.why.empty()) << codecs.dump();
  }
}

TEST(GpuDecodeRoute, StoredLayoutOfSwapAndTranspose) {
  GpuDecodeRoute plain = route_of(json::array({bytes_codec(), blosc_v3()}));
  EXPECT_EQ(plain.swap_unit, native_byte_order() == ByteOrder::little ? 0u : 2u);
  EXPECT_EQ(plain.element_size, 2u);
  EXPECT_EQ(plain.stored_shape, (std::vector<std::uint64_t>{4, 6, 8}));
  EXPECT_EQ(plain.stored_strides, (std::vector<std::int64_t>{48, 8, 1}));

  GpuDecodeRoute big = route_of(json::array({bytes_codec("big"), lz4_codec()}), {4, 6, 8}, "float64");
  EXPECT_EQ(big.swap_unit, native_byte_order() == ByteOrder::little ? 8u : 0u);
  GpuDecodeRoute complex = route_of(json::array({bytes_codec("big"), lz4_codec()}), {4, 6, 8}, "complex128");
  EXPECT_EQ(complex.swap_unit, native_byte_order() == ByteOrder::little ? 8u : 0u);  // each half on its own
  GpuDecodeRoute bytes = route_of(json::array({bytes_codec("big"), lz4_codec()}), {4, 6, 8}, "uint8");
  EXPECT_EQ(bytes.swap_unit, 0u);

  // Stored axis i is decoded axis order[i]: stored shape [8, 4, 6], C strides [24, 6, 1].
  GpuDecodeRoute transposed = route_of(json::array({transpose_codec({2, 0, 1}), bytes_codec(), blosc_v3()}));
  EXPECT_EQ(transposed.stored_shape, (std::vector<std::uint64_t>{8, 4, 6}));
  EXPECT_EQ(transposed.stored_strides, (std::vector<std::int64_t>{6, 1, 24}));
  // Zarr v2's order "F" (the axes reversed).
  GpuDecodeRoute fortran = route_of(json::array({transpose_codec({2, 1, 0}), bytes_codec(), lz4_codec()}));
  EXPECT_EQ(fortran.stored_strides, (std::vector<std::int64_t>{1, 4, 24}));
}

TEST(GpuDecodeRoute, ShardedArraysRouteTheirInnerChain) {
  const json inner = json::array({bytes_codec(), blosc_v3()});
  const json sharding = {{"name", "sharding_indexed"},
                         {"configuration",
                          {{"chunk_shape", {2, 3, 4}}, {"codecs", inner}, {"index_codecs", json::array({bytes_codec()})}}}};
  const json codecs = json::array({sharding});
  const codec::CodecChain chain =
      codec::CodecChain::create(codecs, codec::test::make_spec({4, 6, 8}, parse_v3_data_type("uint16")), "test/zarr.json");
  const codec::ShardingCodec* sharded = chain.sole_sharding_codec();
  ASSERT_NE(sharded, nullptr);
  // The outer chain alone (sharding is not `bytes`) is not eligible; its inner chunks are.
  EXPECT_EQ(gpu_decode_route(codecs, chain).codec, GpuCodec::none);
  const GpuDecodeRoute route = gpu_decode_route_of_array(codecs, chain, &sharded->inner_chain());
  EXPECT_EQ(route.codec, GpuCodec::blosc);
  EXPECT_EQ(route.stored_shape, (std::vector<std::uint64_t>{2, 3, 4}));
}

TEST(GpuDecodeRoute, PolicyTable) {
  for (GpuCodec codec : {GpuCodec::lz4, GpuCodec::blosc, GpuCodec::zstd}) {
    EXPECT_EQ(gpu_decode_side(DecodeSide::gpu, codec, true), DecodeSide::gpu) << to_string(codec);
    EXPECT_EQ(gpu_decode_side(DecodeSide::share, codec, true), DecodeSide::share) << to_string(codec);
    EXPECT_EQ(gpu_decode_side(DecodeSide::cpu, codec, true), DecodeSide::cpu) << to_string(codec);
    EXPECT_TRUE(decode_on_gpu(DecodeSide::gpu, codec, true)) << to_string(codec);
    EXPECT_TRUE(decode_on_gpu(DecodeSide::share, codec, true)) << to_string(codec);
    EXPECT_FALSE(decode_on_gpu(DecodeSide::cpu, codec, true)) << to_string(codec);
    for (DecodeSide side : {DecodeSide::automatic, DecodeSide::gpu, DecodeSide::cpu, DecodeSide::share}) {
      EXPECT_EQ(gpu_decode_side(side, codec, false), DecodeSide::cpu) << "no device";
      EXPECT_FALSE(decode_on_gpu(side, codec, false)) << "no device";
    }
  }
  // auto takes the side each decoder measured fastest on (the table's `automatic`): blosc on
  // the GPU (whole reads), zstd shared, numcodecs lz4 on the CPU; never `automatic` itself.
  EXPECT_EQ(gpu_decode_side(DecodeSide::automatic, GpuCodec::blosc, true), DecodeSide::gpu);
  EXPECT_EQ(gpu_decode_side(DecodeSide::automatic, GpuCodec::zstd, true), DecodeSide::share);
  // ... for reads long enough to fill the ring; smaller ones go to the GPU alone, unless the
  // setting asks for sharing (or the CPU) itself.
  EXPECT_EQ(gpu_decode_side(DecodeSide::automatic, GpuCodec::zstd, true, kAutoShareMinBytes), DecodeSide::share);
  EXPECT_EQ(gpu_decode_side(DecodeSide::automatic, GpuCodec::zstd, true, kAutoShareMinBytes - 1), DecodeSide::gpu);
  EXPECT_EQ(gpu_decode_side(DecodeSide::automatic, GpuCodec::zstd, true, 1), DecodeSide::gpu);
  EXPECT_EQ(gpu_decode_side(DecodeSide::cpu, GpuCodec::zstd, true, 1), DecodeSide::cpu);
  // ... and small reads among many at once (Dask's blocks) go to the GPU too.
  EXPECT_EQ(gpu_decode_side(DecodeSide::automatic, GpuCodec::zstd, true, 1, kAutoGpuConcurrentReads), DecodeSide::gpu);
  EXPECT_EQ(gpu_decode_side(DecodeSide::automatic, GpuCodec::zstd, true, 1, kAutoGpuConcurrentReads - 1),
            DecodeSide::gpu);
  // ... and so do reads past the sharing threshold among them, up to a gigabyte; larger ones are
  // shared (their own threads are many enough to help the GPU).
  EXPECT_EQ(gpu_decode_side(DecodeSide::automatic, GpuCodec::zstd, true, kAutoShareMinBytes, 16), DecodeSide::gpu);
  EXPECT_EQ(gpu_decode_side(DecodeSide::automatic, GpuCodec::zstd, true, kAutoConcurrentShareMinBytes - 1, 16),
            DecodeSide::gpu);
  EXPECT_EQ(gpu_decode_side(DecodeSide::automatic, GpuCodec::zstd, true, kAutoConcurrentShareMinBytes, 16),
            DecodeSide::share);
  EXPECT_EQ(gpu_decode_side(DecodeSide::automatic, GpuCodec::zstd, true, kAutoConcurrentShareMinBytes, 1),
            DecodeSide::share);
  EXPECT_EQ(gpu_decode_side(DecodeSide::cpu, GpuCodec::zstd, true, 1, 16), DecodeSide::cpu);
  EXPECT_EQ(gpu_decode_side(DecodeSide::share, GpuCodec::zstd, true, 1), DecodeSide::share);
  EXPECT_EQ(gpu_decode_side(DecodeSide::gpu, GpuCodec::zstd, true, 1), DecodeSide::gpu);
  // blosc-lz4: lone reads under kAutoBloscGpuMinBytes stay on the CPU (faster there), from it
  // and among many reads at once on the GPU; the settings other than auto are taken as asked.
  EXPECT_EQ(gpu_decode_side(DecodeSide::automatic, GpuCodec::blosc, true, 1), DecodeSide::cpu);
  EXPECT_EQ(gpu_decode_side(DecodeSide::automatic, GpuCodec::blosc, true, kAutoBloscGpuMinBytes - 1), DecodeSide::cpu);
  EXPECT_EQ(gpu_decode_side(DecodeSide::automatic, GpuCodec::blosc, true, kAutoBloscGpuMinBytes), DecodeSide::gpu);
  EXPECT_EQ(gpu_decode_side(DecodeSide::automatic, GpuCodec::blosc, true, 1, kAutoGpuConcurrentReads), DecodeSide::gpu);
  EXPECT_EQ(gpu_decode_side(DecodeSide::automatic, GpuCodec::blosc, true, 1, kAutoGpuConcurrentReads - 1),
            DecodeSide::cpu);
  EXPECT_EQ(gpu_decode_side(DecodeSide::gpu, GpuCodec::blosc, true, 1), DecodeSide::gpu);
  EXPECT_EQ(gpu_decode_side(DecodeSide::share, GpuCodec::blosc, true, 1), DecodeSide::share);
  EXPECT_EQ(gpu_decode_side(DecodeSide::automatic, GpuCodec::lz4, true), DecodeSide::cpu);
  for (DecodeSide side : {DecodeSide::automatic, DecodeSide::gpu, DecodeSide::cpu, DecodeSide::share}) {
    EXPECT_EQ(gpu_decode_side(side, GpuCodec::none, true), DecodeSide::cpu);
    EXPECT_FALSE(decode_on_gpu(side, GpuCodec::none, true));
  }
  EXPECT_EQ(gpu_decoded_codecs(DecodeSide::cpu), std::vector<std::string>{});
  EXPECT_EQ(gpu_decoded_codecs(DecodeSide::automatic),
            (std::vector<std::string>{"blosc-lz4 (reads of 256 MiB or more, or while 4 or more device reads run; "
                                      "smaller ones on the CPU)",
                                      "zstd (shared with the CPU in reads of 128 MiB or more; smaller reads "
                                                   "on the GPU alone, as are reads under 1 GiB while 4 or more device "
                                                   "reads run)"}));
  EXPECT_EQ(gpu_decoded_codecs(DecodeSide::share)[2], "zstd (shared with the CPU)");
  EXPECT_EQ(gpu_decoded_codecs(DecodeSide::gpu), (std::vector<std::string>{"lz4", "blosc-lz4", "zstd"}));
  EXPECT_EQ(gpu_decoded_codecs(DecodeSide::share).size(), 3u);
}

TEST(GpuDecodeRoute, DescribesThePolicy) {
  json doc;
  describe_decode_policy(doc, true);
  EXPECT_TRUE(doc["decode"].is_string());
  EXPECT_FALSE(doc["decode_reason"].get<std::string>().empty());
  json none;
  describe_decode_policy(none, false);
  EXPECT_NE(none["decode_reason"].get<std::string>().find("CPU"), std::string::npos);
}

std::vector<std::byte> blosc_frame(const std::vector<std::uint16_t>& data, const char* cname, int shuffle) {
  std::vector<std::byte> out(data.size() * 2 + BLOSC_MAX_OVERHEAD);
  const int n = blosc_compress_ctx(5, shuffle, 2, data.size() * 2, data.data(), out.data(), out.size(), cname, 0, 1);
  EXPECT_GT(n, 0) << cname;
  out.resize(static_cast<std::size_t>(std::max(n, 0)));
  return out;
}

// Per chunk: lz4 frames go to the GPU, blosclz and zstd frames of the same array to the CPU.
TEST(GpuDecodeRoute, ChunkPlanFallsBackPerFrame) {
  std::vector<std::uint16_t> data(4096);
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<std::uint16_t>(1000 + (i / 7) % 90);
  const std::uint64_t nbytes = data.size() * 2;
  for (int shuffle : {BLOSC_NOSHUFFLE, BLOSC_SHUFFLE, BLOSC_BITSHUFFLE}) {
    for (const char* cname : {"lz4", "lz4hc"}) {
      const GpuChunkPlan plan = plan_gpu_chunk(GpuCodec::blosc, blosc_frame(data, cname, shuffle), nbytes);
      EXPECT_TRUE(plan.accepted) << cname << " shuffle " << shuffle;
      EXPECT_EQ(plan.frame.nbytes, nbytes);
    }
    for (const char* cname : {"blosclz", "zstd"})
      EXPECT_FALSE(plan_gpu_chunk(GpuCodec::blosc, blosc_frame(data, cname, shuffle), nbytes).accepted) << cname;
  }
  const auto lz4 = blosc_frame(data, "lz4", BLOSC_SHUFFLE);
  EXPECT_FALSE(plan_gpu_chunk(GpuCodec::blosc, lz4, nbytes + 2).accepted) << "a frame of another size";
  EXPECT_FALSE(plan_gpu_chunk(GpuCodec::blosc, std::span(lz4).first(10), nbytes).accepted) << "truncated header";
  auto bad = lz4;
  bad[0] = std::byte{7};  // a format version blosc 1 does not write
  EXPECT_FALSE(plan_gpu_chunk(GpuCodec::blosc, bad, nbytes).accepted);

  // numcodecs lz4: the 4-byte size header must be the chunk's.
  std::vector<std::byte> header{std::byte{0x00}, std::byte{0x20}, std::byte{0}, std::byte{0}, std::byte{0x10}};
  EXPECT_TRUE(plan_gpu_chunk(GpuCodec::lz4, header, 0x2000).accepted);
  EXPECT_FALSE(plan_gpu_chunk(GpuCodec::lz4, header, 0x2001).accepted);
  EXPECT_FALSE(plan_gpu_chunk(GpuCodec::lz4, std::span(header).first(3), 0x2000).accepted);
  EXPECT_FALSE(plan_gpu_chunk(GpuCodec::zstd, header, 0x2000).accepted) << "lz4 bytes are no zstd frame";
  EXPECT_FALSE(plan_gpu_chunk(GpuCodec::none, header, 0x2000).accepted);
}

std::vector<std::byte> zstd_frame(const std::vector<std::uint16_t>& data, bool content_size) {
  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, 1);
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_contentSizeFlag, content_size ? 1 : 0);
  std::vector<std::byte> out(ZSTD_compressBound(data.size() * 2));
  const std::size_t n = ZSTD_compress2(cctx, out.data(), out.size(), data.data(), data.size() * 2);
  ZSTD_freeCCtx(cctx);
  EXPECT_FALSE(ZSTD_isError(n));
  out.resize(ZSTD_isError(n) ? 0 : n);
  return out;
}

// zstd: the frame header must name the chunk's size; frames without one stay on the CPU.
TEST(GpuDecodeRoute, ZstdChunkPlanReadsTheFrameHeader) {
  std::vector<std::uint16_t> data(4096);
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<std::uint16_t>(1000 + (i / 7) % 90);
  const std::uint64_t nbytes = data.size() * 2;
  const auto frame = zstd_frame(data, true);
  EXPECT_TRUE(plan_gpu_chunk(GpuCodec::zstd, frame, nbytes).accepted);
  EXPECT_FALSE(plan_gpu_chunk(GpuCodec::zstd, frame, nbytes + 2).accepted) << "a frame of another size";
  EXPECT_FALSE(plan_gpu_chunk(GpuCodec::zstd, frame, nbytes - 2).accepted) << "a frame larger than the chunk";
  EXPECT_FALSE(plan_gpu_chunk(GpuCodec::zstd, zstd_frame(data, false), nbytes).accepted) << "no content size";
  EXPECT_FALSE(plan_gpu_chunk(GpuCodec::zstd, std::span(frame).first(3), nbytes).accepted) << "truncated";
  auto dictionary = frame;
  dictionary[4] = std::byte{static_cast<std::uint8_t>(std::to_integer<unsigned>(dictionary[4]) | 1u)};
  EXPECT_FALSE(plan_gpu_chunk(GpuCodec::zstd, dictionary, nbytes).accepted) << "a dictionary id flag";
}

}  // namespace
}  // namespace zarrdirect

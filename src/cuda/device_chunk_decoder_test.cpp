// read_many into device memory with the chunks decoded on the GPU (device_chunk_decoder.hpp).
//
// Without a GPU: the batch reader's waves run through the host placer (placer_reference.hpp) and
// a host decoder standing for the GPU's (it decodes with the array's own chain, and leaves every
// third chunk to the reader as the GPU's planner leaves frames it does not take): for zstd arrays,
// plain and sharded, with missing chunks and shards, in one wave and in waves of one chunk, every
// region must equal a per-region host read, each present chunk be decoded once, and nothing be
// staged but what the decoder left to the host. With a GPU (skipped without one): read_many_into
// CUDA memory with Settings::decode gpu and share against the same host reads, and a corrupt
// chunk failing the read with an error that names it.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>

#include "cuda/placer_reference.hpp"
#include "cuda/read_many_test_support.hpp"
#include "engine/device_chunk_decoder.hpp"
#include "engine/read_many.hpp"
#include "metadata/metadata_file.hpp"

namespace zarrdirect {
namespace {

using namespace test::many;

// What the host decoders of one read did.
struct DecoderLog {
  std::atomic<std::size_t> waves{0};
  std::atomic<std::size_t> slots{0};
  std::atomic<std::size_t> taken{0};   // chunks decode() took
  std::atomic<std::size_t> placed{0};  // chunks handed back decoded (place_decoded)
  std::atomic<std::size_t> offered{0};
};

// A DeviceChunkDecoder on the host: the wave's slots in host memory (marked device 0, as the host
// placer's device cache is), chunks decoded with the array's chain; every `refuse_every`-th chunk
// (0: none) is refused, as the GPU's planner refuses frames it does not take.
class HostChunkDecoder final : public DeviceChunkDecoder {
 public:
  HostChunkDecoder(const codec::CodecChain& chain, std::size_t slots, std::size_t refuse_every, DecoderLog& log)
      : chain_(chain), chunk_bytes_(static_cast<std::size_t>(chain.decoded_spec().nbytes())), slots_(slots),
        refuse_every_(refuse_every), log_(log), wave_(std::make_shared<std::vector<std::byte>>(slots * chunk_bytes_)),
        given_(slots, false) {}

  bool decode(unsigned, std::span<const std::byte> stored, std::size_t slot, std::string_view) override {
    if (refuse_every_ != 0 && ++log_.offered % refuse_every_ == 0) return false;
    codec::Scratch scratch;
    chain_.decode(stored, slot_bytes(slot), scratch);
    ++log_.taken;
    ++taken_;
    return true;
  }
  std::span<std::byte> staging(unsigned worker, std::size_t nbytes) override {
    std::lock_guard lock(mutex_);
    std::vector<std::byte>& buffer = staging_[worker];
    buffer.resize(nbytes);
    return buffer;
  }
  void place_decoded(unsigned, std::span<const std::byte> chunk, std::size_t slot) override {
    EXPECT_EQ(chunk.size(), chunk_bytes_);
    std::memcpy(slot_bytes(slot).data(), chunk.data(), chunk_bytes_);
    ++log_.placed;
  }
  std::vector<DecodedChunkPtr> finish() override {
    std::vector<DecodedChunkPtr> chunks;
    for (std::size_t k = 0; k < slots_; ++k) {
      // Views into the wave, which the last of them frees.
      auto view = std::make_shared<DecodedChunk>(wave_->data() + k * chunk_bytes_, chunk_bytes_, 0,
                                                 [](std::byte*, int) {});
      chunks.push_back(DecodedChunkPtr(view.get(), [view, wave = wave_](const DecodedChunk*) {}));
    }
    return chunks;
  }
  std::uint64_t gpu_chunks() const override { return taken_; }

 private:
  std::span<std::byte> slot_bytes(std::size_t slot) {
    EXPECT_LT(slot, slots_);
    std::lock_guard lock(mutex_);
    EXPECT_FALSE(given_[slot]) << "slot " << slot << " given twice";
    given_[slot] = true;
    return {wave_->data() + slot * chunk_bytes_, chunk_bytes_};
  }

  const codec::CodecChain& chain_;
  std::size_t chunk_bytes_;
  std::size_t slots_;
  std::size_t refuse_every_;
  DecoderLog& log_;
  std::shared_ptr<std::vector<std::byte>> wave_;
  std::atomic<std::size_t> taken_{0};
  std::mutex mutex_;
  std::vector<bool> given_;
  std::map<unsigned, std::vector<std::byte>> staging_;
};

DeviceChunkDecoderFactory host_decoders(const Array::Impl& impl, std::size_t refuse_every, DecoderLog& log) {
  const codec::CodecChain& chain = impl.sharding ? impl.sharding->inner_chain() : impl.chain;
  return [&chain, refuse_every, &log](const GpuDecodeRoute& route, std::span<const std::uint64_t> shape,
                                      std::size_t element_size, std::size_t slots, unsigned, const Settings&, int,
                                      bool) -> std::unique_ptr<DeviceChunkDecoder> {
    EXPECT_EQ(route.codec, GpuCodec::zstd);
    EXPECT_EQ(element_size, chain.decoded_spec().dtype.size);
    EXPECT_TRUE(std::equal(shape.begin(), shape.end(), chain.decoded_spec().shape.begin(), chain.decoded_spec().shape.end()));
    ++log.waves;
    log.slots += slots;
    return std::make_unique<HostChunkDecoder>(chain, slots, refuse_every, log);
  };
}

// The file's bytes changed in place by `change`.
template <typename Change>
void rewrite_file(const std::filesystem::path& path, Change change) {
  std::string bytes;
  {
    std::ifstream in(path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  change(bytes);
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

nlohmann::json zstd_codec() { return {{"name", "zstd"}, {"configuration", {{"level", 1}, {"checksum", false}}}}; }

// zstd arrays: 32^3 chunks with the first chunk left out (fill) and another removed; shards of
// 64^3 holding 32^3 zstd inner chunks, an inner chunk left out and a whole shard removed.
std::vector<test::BatchCase> zstd_cases(const std::filesystem::path& dir) {
  namespace fs = std::filesystem;
  using nlohmann::json;
  std::vector<test::BatchCase> cases;
  const json plain = json::array({test::batch_bytes_codec(), zstd_codec()});
  cases.push_back({"zstd32", dir / "zstd32",
                   test::write_batch_array<std::uint16_t>(
                       dir / "zstd32", test::batch_doc({96, 80, 72}, {32, 32, 32}, "uint16", 263, plain), 32, 263)});
  fs::remove(dir / "zstd32" / "c" / "1" / "2" / "1");
  const json sharding = {{"name", "sharding_indexed"},
                         {"configuration",
                          {{"chunk_shape", {32, 32, 32}},
                           {"codecs", plain},
                           {"index_codecs", json::array({test::batch_bytes_codec(), {{"name", "crc32c"}}})}}}};
  cases.push_back({"sharded_zstd", dir / "sharded_zstd",
                   test::write_batch_array<std::uint16_t>(
                       dir / "sharded_zstd",
                       test::batch_doc({128, 96, 72}, {64, 64, 64}, "uint16", 263, json::array({sharding})), 32, 263)});
  fs::remove(dir / "sharded_zstd" / "c" / "1" / "0" / "1");
  return cases;
}

TEST(DeviceChunkDecoderReference, WavesOfDecodedChunksMatchPerRegionReads) {
  test::TempDir dir;
  for (const auto& c : zstd_cases(dir.path())) {
    auto impl = Array::Impl::create(c.path, read_array_metadata(c.path));
    const auto regions = patches(c.array.metadata().shape);
    const auto expected = expected_reads(c.array, regions, 0);
    for (std::size_t refuse_every : {0, 3}) {
      for (bool one_chunk_waves : {false, true}) {
        SCOPED_TRACE(c.name + (one_chunk_waves ? ", waves of one chunk" : ", one wave") + ", refusing every " +
                     std::to_string(refuse_every));
        Buffers got = host_buffers(regions, c.array.metadata().dtype.size, 0);
        test::HostPlacer placer(got.layouts, std::size_t{1} << 22);
        Settings settings;
        settings.threads = 3;
        settings.decode = DecodeSide::gpu;
        if (one_chunk_waves) settings.staging_bytes = 1;
        DecoderLog log;
        const ReadStats stats = run_read_many(*impl, regions, got.layouts, settings, &placer,
                                              host_decoders(*impl, refuse_every, log));
        for (std::size_t i = 0; i < regions.size(); ++i) EXPECT_TRUE(got.bytes[i] == expected[i]) << "region " << i;
        const std::size_t present = stats.chunks_total - stats.chunks_missing;
        EXPECT_GT(stats.chunks_missing, 0u);
        EXPECT_GT(placer.fills, 0u);
        // Each present chunk decoded once: by the decoder, or by the reader when refused.
        EXPECT_EQ(log.taken + log.placed, present);
        EXPECT_EQ(stats.chunks_decoded, present);
        EXPECT_EQ(stats.chunks_decoded_gpu, log.taken.load());
        EXPECT_EQ(stats.bytes_decoded_gpu, log.taken * chunk_bytes_of(*impl));
        if (refuse_every == 0) {
          EXPECT_EQ(log.placed, 0u);
        } else {
          EXPECT_GT(log.placed, 0u);
        }
        // Nothing staged from the host: every chunk placed from its wave.
        EXPECT_EQ(placer.stages, 0u);
        EXPECT_GE(placer.resident_places, present);
        if (one_chunk_waves) {
          EXPECT_EQ(log.slots, log.waves);  // one slot each
          EXPECT_GE(log.waves, present);    // a missing chunk of the unsharded array is found in its wave
        } else {
          EXPECT_EQ(log.waves, 1u);
        }
      }
    }
  }
}

// decode cpu, a host cache, the device cache, and `auto` with a batch far below kAutoShareMinBytes of
// zstd chunks (DecodeSideOfABatch) each keep the chunks on the host.
TEST(DeviceChunkDecoderReference, CpuDecodingOrACacheKeepsChunksOnTheHost) {
  test::TempDir dir;
  const auto cases = zstd_cases(dir.path());
  const auto& c = cases.front();
  auto impl = Array::Impl::create(c.path, read_array_metadata(c.path));
  const auto regions = patches(c.array.metadata().shape);
  const auto expected = expected_reads(c.array, regions, 0);
  for (int variant = 0; variant < 4; ++variant) {
    SCOPED_TRACE("variant " + std::to_string(variant));
    Buffers got = host_buffers(regions, c.array.metadata().dtype.size, 0);
    test::HostPlacer placer(got.layouts, std::size_t{1} << 22);
    Settings settings;
    settings.decode = variant == 0 ? DecodeSide::cpu : variant == 3 ? DecodeSide::automatic : DecodeSide::gpu;
    if (variant == 1) settings.cache_bytes = std::size_t{64} << 20;
    if (variant == 2) impl->device_cache->set_capacity(std::size_t{64} << 20);
    DecoderLog log;
    const ReadStats stats = run_read_many(*impl, regions, got.layouts, settings, &placer, host_decoders(*impl, 0, log));
    for (std::size_t i = 0; i < regions.size(); ++i) EXPECT_TRUE(got.bytes[i] == expected[i]) << "region " << i;
    EXPECT_EQ(log.waves, 0u);
    EXPECT_EQ(stats.chunks_decoded_gpu, 0u);
    EXPECT_GT(placer.stages, 0u);
    impl->device_cache->set_capacity(0);
  }
}

// Chunks larger than a wave (1 GiB) are decoded on the host: no wave is made for them. (The
// array's only chunk is missing, so nothing is decoded at all.)
TEST(DeviceChunkDecoderReference, ChunksLargerThanAWaveStayOnTheHost) {
  test::TempDir dir;
  const std::vector<std::uint64_t> shape{36000, 36000};  // 1.3 GB of uint8 in one chunk
  Array::create(dir.path() / "big", test::batch_doc(shape, shape, "uint8", 0,
                                                    nlohmann::json::array({test::batch_bytes_codec(), zstd_codec()})));
  auto impl = Array::Impl::create(dir.path() / "big", read_array_metadata(dir.path() / "big"));
  const std::vector<Region> regions{{{0, 4}, {0, 4}}, {{100, 104}, {7, 11}}};
  Buffers got = host_buffers(regions, 1, 0);
  test::HostPlacer placer(got.layouts, std::size_t{1} << 20);
  Settings settings;
  settings.decode = DecodeSide::gpu;
  DecoderLog log;
  const ReadStats stats = run_read_many(*impl, regions, got.layouts, settings, &placer, host_decoders(*impl, 0, log));
  EXPECT_EQ(log.waves, 0u);
  EXPECT_EQ(stats.chunks_missing, 1u);
  for (const auto& bytes : got.bytes) EXPECT_EQ(bytes, std::vector<std::byte>(bytes.size(), std::byte{0}));
}

// A chunk the decoder cannot decode fails the read with an error naming the chunk, whether the
// decoder or the reader (after a refusal) decodes it.
TEST(DeviceChunkDecoderReference, ACorruptChunkFailsTheReadNamingIt) {
  test::TempDir dir;
  const auto cases = zstd_cases(dir.path());
  const auto& c = cases.front();
  rewrite_file(c.path / "c" / "1" / "1" / "1", [](std::string& bytes) {
    bytes.resize(bytes.size() / 2);  // cut short: no decoder can finish it
  });
  auto impl = Array::Impl::create(c.path, read_array_metadata(c.path));
  const auto regions = patches(c.array.metadata().shape);
  for (std::size_t refuse_every : {0, 1}) {
    SCOPED_TRACE("refusing every " + std::to_string(refuse_every));
    Buffers got = host_buffers(regions, c.array.metadata().dtype.size, 0);
    test::HostPlacer placer(got.layouts, std::size_t{1} << 22);
    Settings settings;
    settings.decode = DecodeSide::gpu;
    DecoderLog log;
    try {
      run_read_many(*impl, regions, got.layouts, settings, &placer, host_decoders(*impl, refuse_every, log));
      ADD_FAILURE() << "a corrupt chunk was read";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("(chunk c/1/1/1)"), std::string::npos) << e.what();
    }
  }
}

TEST(DeviceChunkDecoderReference, WaveSlots) {
  Settings settings;
  settings.staging_bytes = std::size_t{256} << 20;
  EXPECT_EQ(wave_slots(std::uint64_t{4} << 20, settings), 256u);  // kDeviceDecodeWaveBytes
  settings.staging_bytes = std::size_t{16} << 20;
  EXPECT_EQ(wave_slots(std::uint64_t{4} << 20, settings), 16u);  // four staging budgets
  settings.staging_bytes = 1;
  EXPECT_EQ(wave_slots(std::uint64_t{4} << 20, settings), 1u);
  settings.staging_bytes = SIZE_MAX;
  EXPECT_EQ(wave_slots(std::uint64_t{1} << 40, settings), 1u);  // a chunk larger than a wave
  EXPECT_EQ(wave_slots(0, settings), kDeviceDecodeWaveBytes);
}

// `auto` takes gpu_decode_side()'s table with the batch standing for one read: zstd is shared from
// kAutoShareMinBytes of chunks on and decoded on the GPU alone below; blosc goes to the GPU from
// kAutoBloscGpuMinBytes of chunks on and stays on the host below; lz4 stays on the host. gpu and share are taken as asked, cpu and a route of none never reach the GPU.
TEST(DeviceChunkDecoderReference, DecodeSideOfABatch) {
  GpuDecodeRoute zstd, blosc, lz4, none;
  zstd.codec = GpuCodec::zstd;
  blosc.codec = GpuCodec::blosc;
  lz4.codec = GpuCodec::lz4;
  const std::uint64_t small = std::uint64_t{16} << 20, large = std::uint64_t{3} << 30;
  EXPECT_EQ(read_many_decode_side(zstd, DecodeSide::automatic, large), DecodeSide::share);
  EXPECT_EQ(read_many_decode_side(zstd, DecodeSide::automatic, kAutoShareMinBytes), DecodeSide::share);
  EXPECT_EQ(read_many_decode_side(zstd, DecodeSide::automatic, kAutoShareMinBytes - 1), DecodeSide::gpu);
  EXPECT_EQ(read_many_decode_side(zstd, DecodeSide::automatic, small), DecodeSide::gpu);
  EXPECT_EQ(read_many_decode_side(blosc, DecodeSide::automatic, small), DecodeSide::cpu);
  EXPECT_EQ(read_many_decode_side(blosc, DecodeSide::automatic, large), DecodeSide::gpu);
  EXPECT_EQ(read_many_decode_side(blosc, DecodeSide::gpu, small), DecodeSide::gpu);
  EXPECT_EQ(read_many_decode_side(lz4, DecodeSide::automatic, large), DecodeSide::cpu);
  EXPECT_EQ(read_many_decode_side(zstd, DecodeSide::gpu, small), DecodeSide::gpu);
  EXPECT_EQ(read_many_decode_side(lz4, DecodeSide::share, small), DecodeSide::share);
  EXPECT_EQ(read_many_decode_side(zstd, DecodeSide::cpu, large), DecodeSide::cpu);
  EXPECT_EQ(read_many_decode_side(none, DecodeSide::gpu, large), DecodeSide::cpu);
}

// The distinct chunks of a batch, each counted once however many regions touch it; inner chunks
// for a sharded array.
TEST(DeviceChunkDecoderReference, DistinctChunkBytes) {
  test::TempDir dir;
  const auto cases = zstd_cases(dir.path());
  const std::uint64_t chunk = 32 * 32 * 32 * 2;
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    auto impl = Array::Impl::create(c.path, read_array_metadata(c.path));
    EXPECT_EQ(distinct_chunk_bytes(*impl, {}), 0u);
    EXPECT_EQ(distinct_chunk_bytes(*impl, {{{0, 1}, {0, 1}, {0, 1}}}), chunk);
    // Two regions inside one chunk, one across 2 x 2 x 2 chunks (one of them the same chunk).
    EXPECT_EQ(distinct_chunk_bytes(*impl, {{{0, 4}, {0, 4}, {0, 4}}, {{5, 9}, {1, 2}, {30, 31}}}), chunk);
    EXPECT_EQ(distinct_chunk_bytes(*impl, {{{0, 4}, {0, 4}, {0, 4}}, {{31, 33}, {31, 33}, {31, 33}}}), 8 * chunk);
    EXPECT_EQ(distinct_chunk_bytes(*impl, {{{0, 96}, {0, 80}, {0, 72}}}), 3 * 3 * 3 * chunk);
  }
}

// With `auto`, a batch of kAutoShareMinBytes of distinct zstd chunks or more goes through the waves
// with the decoders told to share, and a smaller one through the waves on the GPU alone. The
// array's chunks are 1 MiB and all but three missing, so the 1,056 MiB batch reads little.
TEST(DeviceChunkDecoderReference, AutoSharesABatchPastTheThresholdAndSendsASmallerOneToTheGpu) {
  test::TempDir dir;
  const std::vector<std::uint64_t> shape{33 * 64, 32 * 64, 256}, chunks{64, 64, 256};
  Array array = Array::create(dir.path() / "a", test::batch_doc(shape, chunks, "uint8", 7,
                                                                 nlohmann::json::array({test::batch_bytes_codec(), zstd_codec()})));
  std::vector<std::byte> values(64 * 64 * 256);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<std::byte>(i * 31 % 251);
  for (std::uint64_t k : {0u, 5u, 32u}) {
    Source source;
    source.data = values.data();
    source.shape = chunks;
    source.dtype = array.metadata().dtype;
    array.write({{k * 64, k * 64 + 64}, {0, 64}, {0, 256}}, source);
  }
  auto impl = Array::Impl::create(dir.path() / "a", read_array_metadata(dir.path() / "a"));
  std::vector<Region> every_chunk;  // one element of each chunk
  for (std::uint64_t z = 0; z < 33; ++z)
    for (std::uint64_t y = 0; y < 32; ++y) every_chunk.push_back({{z * 64 + 3, z * 64 + 4}, {y * 64 + 1, y * 64 + 2}, {9, 10}});
  std::vector<Region> few(every_chunk.begin(), every_chunk.begin() + 20);  // 20 MiB: one chunk stored
  for (const auto* regions : {&every_chunk, &few}) {
    const bool large = regions == &every_chunk;
    SCOPED_TRACE(large ? "1,056 chunks" : "20 chunks");
    EXPECT_EQ(read_many_gpu_route(*impl, Settings{}, false, distinct_chunk_bytes(*impl, *regions)).codec,
              GpuCodec::zstd);
    const auto expected = expected_reads(array, *regions, 0);
    Buffers got = host_buffers(*regions, 1, 0);
    test::HostPlacer placer(got.layouts, std::size_t{1} << 22);
    Settings settings;  // decode auto
    settings.staging_bytes = std::size_t{16} << 20;  // waves of 64 chunks
    DecoderLog log;
    bool shared = false;
    auto factory = host_decoders(*impl, 0, log);
    auto watching = [&](const GpuDecodeRoute& route, std::span<const std::uint64_t> shape_, std::size_t element,
                        std::size_t slots, unsigned workers, const Settings& s, int device, bool share) {
      shared = shared || share;
      return factory(route, shape_, element, slots, workers, s, device, share);
    };
    const ReadStats stats = run_read_many(*impl, *regions, got.layouts, settings, &placer, watching);
    for (std::size_t i = 0; i < regions->size(); ++i) EXPECT_TRUE(got.bytes[i] == expected[i]) << "region " << i;
    if (large) {
      EXPECT_EQ(log.waves, 17u);  // 1,056 chunks in waves of 64
      EXPECT_TRUE(shared);
      EXPECT_EQ(stats.chunks_decoded_gpu, 3u);
    } else {
      EXPECT_EQ(log.waves, 1u);  // 20 chunks in one wave
      EXPECT_FALSE(shared);
      EXPECT_EQ(stats.chunks_decoded_gpu, 1u);
    }
  }
}

// ---- On the GPU --------------------------------------------------------------------------------

TEST(DeviceChunkDecoder, ReadManyDecodedOnTheGpuMatchesPerRegionReads) {
  REQUIRE_GPU();
  test::TempDir dir;
  for (const auto& c : zstd_cases(dir.path())) {
    const auto regions = patches(c.array.metadata().shape);
    for (std::size_t kind = 0; kind < 3; ++kind) {
      const auto expected = expected_reads(c.array, regions, kind);
      for (DecodeSide side : {DecodeSide::gpu, DecodeSide::share}) {
        for (bool one_chunk_waves : {false, true}) {
          SCOPED_TRACE(c.name + " destination kind " + std::to_string(kind) + " decode " +
                       std::string(to_string(side)) + (one_chunk_waves ? ", waves of one chunk" : ""));
          Settings settings;
          settings.threads = 4;
          settings.decode = side;
          if (one_chunk_waves) settings.staging_bytes = 1;
          ReadStats stats;
          const auto got = gpu_read_many(c.array, regions, kind, settings, &stats);
          for (std::size_t i = 0; i < regions.size(); ++i) EXPECT_TRUE(got[i] == expected[i]) << "region " << i;
          EXPECT_EQ(stats.chunks_decoded, stats.chunks_total - stats.chunks_missing);
          if (side == DecodeSide::gpu) {
            EXPECT_EQ(stats.chunks_decoded_gpu, stats.chunks_decoded);
          }
        }
      }
    }
  }
}

TEST(DeviceChunkDecoder, ACorruptChunkFailsTheReadNamingIt) {
  REQUIRE_GPU();
  test::TempDir dir;
  const auto cases = zstd_cases(dir.path());
  const auto& c = cases.front();
  // Chunk 1/1/1: its frame header stays valid (so the GPU takes it), its blocks become noise.
  rewrite_file(c.path / "c" / "1" / "1" / "1", [](std::string& bytes) {
    ASSERT_GT(bytes.size(), 64u);
    for (std::size_t i = 12; i < bytes.size(); ++i) bytes[i] = static_cast<char>((i * 151 + 7) & 0xff);
  });
  const Array array = Array::open(c.path);
  Settings settings;
  settings.decode = DecodeSide::gpu;
  try {
    gpu_read_many(array, patches(array.metadata().shape), 0, settings, nullptr);
    ADD_FAILURE() << "a corrupt chunk was read";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("c/1/1/1"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace zarrdirect

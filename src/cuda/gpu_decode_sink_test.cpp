// Device reads that decode compressed chunks on the GPU (GpuDecodeSink, Settings::decode = gpu):
// blosc with lz4/lz4hc blocks (each shuffle, memcpyed frames), numcodecs lz4, v2 and v3, big- and
// little-endian, transposed (v3 transpose, v2 order F), sharded inner chunks, missing chunks,
// regions cutting edge chunks, C-order, F-order and padded destinations: exactly the bytes of the
// CPU decode, padding untouched, and ReadStats says the GPU decoded them. Frames the host planner
// refuses (blosclz) fall back to the CPU within the same read. Corrupt chunks fail the read with
// Error(corrupt_data) naming the chunk, writing nothing outside the destination region. Skips
// (GTEST_SKIP) where no CUDA device is usable.
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <fstream>
#include <functional>
#include <iterator>

#include <zstd.h>

#include "codec/portable/blosc_frame.hpp"
#include "cuda/batch_test_arrays.hpp"
#include "test_support.hpp"
#include "zarrdirect/system.hpp"

namespace zarrdirect {
namespace {

using nlohmann::json;

#define REQUIRE_GPU() \
  if (!cuda_available()) GTEST_SKIP() << describe_system()["io_path_reason"].get<std::string>()

void check(cudaError_t status, const char* call) { ASSERT_EQ(status, cudaSuccess) << call << ": " << cudaGetErrorString(status); }

constexpr std::byte kUntouched{0xab};
constexpr std::size_t kGuard = 4096;

json bytes_codec(const char* endian = "little") { return {{"name", "bytes"}, {"configuration", {{"endian", endian}}}}; }
json blosc(const char* cname, const char* shuffle, int typesize, int clevel = 5) {
  return {{"name", "blosc"},
          {"configuration",
           {{"cname", cname}, {"clevel", clevel}, {"shuffle", shuffle}, {"typesize", typesize}, {"blocksize", 0}}}};
}
json lz4() { return {{"name", "numcodecs.lz4"}, {"configuration", {{"acceleration", 1}}}}; }
json zstd(int level, bool checksum) {
  return {{"name", "zstd"}, {"configuration", {{"level", level}, {"checksum", checksum}}}};
}

// A chunk file rewritten as two zstd frames (its first half, then the rest): valid for libzstd
// and the CPU path; the host planner sees a first frame smaller than the chunk and leaves it to
// the CPU.
void split_into_two_frames(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::vector<char> stored(std::istreambuf_iterator<char>(in), {});
  in.close();
  std::vector<char> decoded(ZSTD_getFrameContentSize(stored.data(), stored.size()));
  ASSERT_EQ(ZSTD_decompress(decoded.data(), decoded.size(), stored.data(), stored.size()), decoded.size());
  std::vector<char> out;
  for (auto [from, to] : {std::pair{std::size_t{0}, decoded.size() / 2}, std::pair{decoded.size() / 2, decoded.size()}}) {
    std::vector<char> frame(ZSTD_compressBound(to - from));
    const std::size_t n = ZSTD_compress(frame.data(), frame.size(), decoded.data() + from, to - from, 1);
    ASSERT_FALSE(ZSTD_isError(n));
    out.insert(out.end(), frame.begin(), frame.begin() + static_cast<std::ptrdiff_t>(n));
  }
  std::ofstream(file, std::ios::binary | std::ios::trunc).write(out.data(), static_cast<std::streamsize>(out.size()));
}

// A skippable frame (RFC 8878, 3.1.2) after a chunk's frame: libzstd skips it; the GPU's listing
// of the frame's blocks finds bytes after the frame and leaves the chunk to the CPU.
void append_skippable_frame(const std::filesystem::path& file) {
  const char skippable[] = {0x50, 0x2a, 0x4d, 0x18, 3, 0, 0, 0, 'z', 'd', '!'};
  std::ofstream(file, std::ios::binary | std::ios::app).write(skippable, sizeof(skippable));
}
json v2_doc(const char* dtype, json compressor, const char* order = "C") {
  return {{"zarr_format", 2}, {"shape", {45, 40, 38}}, {"chunks", {16, 16, 16}}, {"dtype", dtype},
          {"fill_value", 0},  {"order", order},        {"compressor", compressor}, {"filters", nullptr}};
}
json sharded_doc(const char* dtype, json inner) {
  return test::batch_doc({64, 48, 40}, {32, 32, 32}, dtype, 0,
                         json::array({{{"name", "sharding_indexed"},
                                       {"configuration",
                                        {{"chunk_shape", {16, 16, 16}},
                                         {"codecs", inner},
                                         {"index_codecs", json::array({bytes_codec()})}}}}}));
}

struct GpuCase {
  std::string name;
  Array array;
  bool mixed = false;  // some chunks are frames the GPU planner refuses
};

std::vector<GpuCase> gpu_cases(const std::filesystem::path& dir) {
  using test::batch_doc;
  using test::write_batch_array;
  const std::vector<std::uint64_t> shape{45, 40, 38};
  const std::vector<std::uint64_t> chunks{16, 16, 16};
  std::vector<GpuCase> cases;
  auto add = [&](std::string name, Array array) { cases.push_back({std::move(name), std::move(array)}); };
  for (const char* shuffle : {"noshuffle", "shuffle", "bitshuffle"}) {
    const std::string name = std::string("v3_blosc_lz4_") + shuffle;
    // Missing chunks too (the block [0, 16) of fill values is left out by the writer).
    add(name, write_batch_array<std::uint16_t>(
                  dir / name, batch_doc(shape, chunks, "uint16", 0, json::array({bytes_codec(), blosc("lz4", shuffle, 2)})),
                  16, 0));
  }
  add("v3_blosc_lz4hc_big_f64",
      write_batch_array<double>(dir / "v3_blosc_lz4hc_big_f64",
                                batch_doc(shape, chunks, "float64", 0, json::array({bytes_codec("big"), blosc("lz4hc", "shuffle", 8)})),
                                0, 0.0));
  add("v3_blosc_memcpyed",
      write_batch_array<std::uint16_t>(
          dir / "v3_blosc_memcpyed",
          batch_doc(shape, chunks, "uint16", 0, json::array({bytes_codec(), blosc("lz4", "shuffle", 2, 0)})), 0, 0));
  add("v3_lz4", write_batch_array<std::uint16_t>(
                    dir / "v3_lz4", batch_doc(shape, chunks, "uint16", 0, json::array({bytes_codec(), lz4()})), 0, 0));
  add("v3_lz4_transposed_i32",
      write_batch_array<std::int32_t>(
          dir / "v3_lz4_transposed_i32",
          batch_doc(shape, chunks, "int32", 0,
                    json::array({{{"name", "transpose"}, {"configuration", {{"order", {2, 0, 1}}}}}, bytes_codec(), lz4()})),
          0, 0));
  add("v3_blosc_transposed_big_u16",
      write_batch_array<std::uint16_t>(
          dir / "v3_blosc_transposed_big_u16",
          batch_doc(shape, chunks, "uint16", 0,
                    json::array({{{"name", "transpose"}, {"configuration", {{"order", {1, 2, 0}}}}}, bytes_codec("big"),
                                 blosc("lz4", "bitshuffle", 2)})),
          0, 0));
  add("v2_blosc_lz4",
      write_batch_array<std::uint16_t>(
          dir / "v2_blosc_lz4",
          v2_doc("<u2", {{"id", "blosc"}, {"cname", "lz4"}, {"clevel", 5}, {"shuffle", 1}, {"blocksize", 0}}), 0, 0));
  add("v2_blosc_bitshuffle_big_i32",
      write_batch_array<std::int32_t>(
          dir / "v2_blosc_bitshuffle_big_i32",
          v2_doc(">i4", {{"id", "blosc"}, {"cname", "lz4"}, {"clevel", 5}, {"shuffle", 2}, {"blocksize", 0}}), 0, 0));
  add("v2_lz4_F_big_f64",
      write_batch_array<double>(dir / "v2_lz4_F_big_f64", v2_doc(">f8", {{"id", "lz4"}, {"acceleration", 1}}, "F"), 0, 0.0));
  add("sharded_blosc_lz4",
      write_batch_array<std::uint16_t>(
          dir / "sharded_blosc_lz4", sharded_doc("uint16", json::array({bytes_codec(), blosc("lz4", "shuffle", 2)})), 16, 0));
  add("sharded_lz4_big",
      write_batch_array<std::uint16_t>(dir / "sharded_lz4_big",
                                       sharded_doc("uint16", json::array({bytes_codec("big"), lz4()})), 0, 0));
  add("v3_zstd_checksum", write_batch_array<std::uint16_t>(
                              dir / "v3_zstd_checksum",
                              batch_doc(shape, chunks, "uint16", 0, json::array({bytes_codec(), zstd(1, true)})), 16, 0));
  add("v3_zstd_transposed_big_f64",
      write_batch_array<double>(
          dir / "v3_zstd_transposed_big_f64",
          batch_doc(shape, chunks, "float64", 0,
                    json::array({{{"name", "transpose"}, {"configuration", {{"order", {2, 1, 0}}}}}, bytes_codec("big"),
                                 zstd(19, false)})),
          0, 0.0));
  add("v2_zstd_i32", write_batch_array<std::int32_t>(dir / "v2_zstd_i32", v2_doc("<i4", {{"id", "zstd"}, {"level", 3}}), 0, 0));
  add("sharded_zstd", write_batch_array<std::uint16_t>(
                          dir / "sharded_zstd", sharded_doc("uint16", json::array({bytes_codec(), zstd(1, false)})), 16, 0));
  // Mixed: chunks of two frames, or a frame and a skippable frame, which go to libzstd.
  add("v3_zstd_two_frames",
      write_batch_array<std::uint16_t>(dir / "v3_zstd_two_frames",
                                       batch_doc(shape, chunks, "uint16", 0, json::array({bytes_codec(), zstd(1, false)})), 0, 0));
  for (const char* key : {"c/0/0/0", "c/1/1/1"}) split_into_two_frames(dir / "v3_zstd_two_frames" / key);
  for (const char* key : {"c/2/0/1", "c/0/2/2"}) append_skippable_frame(dir / "v3_zstd_two_frames" / key);
  cases.back().mixed = true;
  // Mixed: the same data written with blosclz, some of whose chunk files then replace lz4 ones.
  add("v3_blosc_mixed",
      write_batch_array<std::uint16_t>(
          dir / "v3_blosc_mixed",
          batch_doc(shape, chunks, "uint16", 0, json::array({bytes_codec(), blosc("lz4", "shuffle", 2)})), 0, 0));
  write_batch_array<std::uint16_t>(
      dir / "blosclz", batch_doc(shape, chunks, "uint16", 0, json::array({bytes_codec(), blosc("blosclz", "shuffle", 2)})), 0, 0);
  for (const char* key : {"c/0/0/0", "c/1/1/1", "c/2/0/1", "c/0/2/2"})
    std::filesystem::copy_file(dir / "blosclz" / key, dir / "v3_blosc_mixed" / key,
                               std::filesystem::copy_options::overwrite_existing);
  cases.back().mixed = true;
  return cases;
}

std::vector<std::byte> host_read(const Array& array, const Region& region, const test::BatchDestination& shape,
                                 std::byte untouched = kUntouched) {
  std::vector<std::byte> bytes(shape.nbytes, untouched);
  Destination host;
  host.data = bytes.data();
  host.byte_strides = shape.byte_strides;
  array.read_into(region, host, Settings{});
  return bytes;
}

// A device read (staged path) into a buffer with guard bands on both sides; returns the
// destination's bytes, and checks the guards. Rethrows the read's error after checking them.
std::vector<std::byte> device_read(const Array& array, const Region& region, const test::BatchDestination& shape,
                                   Settings settings, ReadStats* stats = nullptr,
                                   std::vector<std::byte>* on_failure = nullptr) {
  std::vector<std::byte> all(shape.nbytes + 2 * kGuard);
  void* device = nullptr;
  check(cudaMalloc(&device, all.size()), "cudaMalloc");
  check(cudaMemset(device, std::to_integer<int>(kUntouched), all.size()), "cudaMemset");
  Destination destination{static_cast<std::byte*>(device) + kGuard, shape.byte_strides, Device::cuda, nullptr};
  settings.io_path = IoPath::staged;
  std::exception_ptr failure;
  try {
    const ReadStats got = array.read_into(region, destination, settings);
    if (stats) *stats = got;
  } catch (...) {
    failure = std::current_exception();
  }
  check(cudaMemcpy(all.data(), device, all.size(), cudaMemcpyDeviceToHost), "cudaMemcpy");
  check(cudaFree(device), "cudaFree");
  for (std::size_t i = 0; i < kGuard; ++i) {
    EXPECT_EQ(all[i], kUntouched) << "written before the destination at " << i;
    EXPECT_EQ(all[all.size() - 1 - i], kUntouched) << "written after the destination";
    if (all[i] != kUntouched || all[all.size() - 1 - i] != kUntouched) break;
  }
  std::vector<std::byte> placed(all.begin() + kGuard, all.end() - kGuard);
  if (failure) {
    if (on_failure) *on_failure = std::move(placed);
    std::rethrow_exception(failure);
  }
  return placed;
}

std::size_t first_difference(const std::vector<std::byte>& a, const std::vector<std::byte>& b) {
  for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i)
    if (a[i] != b[i]) return i;
  return a.size() == b.size() ? SIZE_MAX : std::min(a.size(), b.size());
}

Settings with_decode(DecodeSide side) {
  Settings settings;
  settings.decode = side;
  return settings;
}

void compare_cases(const std::vector<std::string>& names) {
  test::TempDir dir;
  for (const auto& c : gpu_cases(dir.path())) {
    if (std::find(names.begin(), names.end(), c.name) == names.end()) continue;
    const std::size_t element = c.array.metadata().dtype.size;
    for (const Region& region : test::batch_regions(c.array.metadata().shape)) {
      for (const auto& shape : test::batch_destinations(region, element)) {
        SCOPED_TRACE(c.name + ", " + shape.name + " destination, region starting at " + std::to_string(region[0].start));
        const auto expected = host_read(c.array, region, shape);
        const auto cpu = device_read(c.array, region, shape, with_decode(DecodeSide::cpu));
        EXPECT_EQ(first_difference(cpu, expected), SIZE_MAX) << "CPU decode";
        Settings gpu = with_decode(DecodeSide::gpu);
        Settings small = gpu;  // batches of a few chunks, several workers
        small.staging_bytes = 2u << 20;
        small.threads = 4;
        Settings per_chunk = gpu;  // fills and CPU fallbacks placed chunk by chunk
        per_chunk.device_batch = false;
        Settings shared = small;  // the CPU takes what the small batches have no room for now
        shared.decode = DecodeSide::share;
        for (const auto& [what, settings] : {std::pair{"gpu", gpu}, std::pair{"gpu, small batches", small},
                                             std::pair{"gpu, per-chunk placement", per_chunk},
                                             std::pair{"share, small batches", shared}}) {
          ReadStats stats;
          const auto got = device_read(c.array, region, shape, settings, &stats);
          const std::size_t at = first_difference(got, expected);
          EXPECT_EQ(at, SIZE_MAX) << what << ": first difference at byte " << at;
          // The first chunk finds the ring empty, shared or not.
          EXPECT_GT(stats.chunks_decoded_gpu, 0u) << what;
          EXPECT_EQ(stats.chunks_decoded_gpu + stats.chunks_decoded_cpu + stats.chunks_missing, stats.chunks_total) << what;
          if (settings.decode == DecodeSide::share) continue;  // how many the CPU took depends on timing
          if (c.mixed) {
            EXPECT_GT(stats.chunks_decoded_cpu, 0u) << what << ": blosclz and two-frame zstd chunks go to the CPU";
          } else {
            EXPECT_EQ(stats.chunks_decoded_cpu, 0u) << what;
          }
        }
      }
    }
  }
}

TEST(GpuDecode, BloscLz4EachShuffleMatchesTheCpuDecode) {
  REQUIRE_GPU();
  compare_cases({"v3_blosc_lz4_noshuffle", "v3_blosc_lz4_shuffle", "v3_blosc_lz4_bitshuffle", "v3_blosc_memcpyed"});
}

TEST(GpuDecode, BigEndianAndTransposedChunksMatchTheCpuDecode) {
  REQUIRE_GPU();
  compare_cases({"v3_blosc_lz4hc_big_f64", "v3_lz4_transposed_i32", "v3_blosc_transposed_big_u16"});
}

TEST(GpuDecode, NumcodecsLz4MatchesTheCpuDecode) {
  REQUIRE_GPU();
  compare_cases({"v3_lz4"});
}

TEST(GpuDecode, ZarrV2ArraysMatchTheCpuDecode) {
  REQUIRE_GPU();
  compare_cases({"v2_blosc_lz4", "v2_blosc_bitshuffle_big_i32", "v2_lz4_F_big_f64"});
}

TEST(GpuDecode, ShardedInnerChunksMatchTheCpuDecode) {
  REQUIRE_GPU();
  compare_cases({"sharded_blosc_lz4", "sharded_lz4_big", "sharded_zstd"});
}

// Block jobs (zstd_decode_kernels.cu): checksummed, level 19, big-endian transposed,
// v2, and frames the GPU leaves to libzstd within the same read.
TEST(GpuDecode, ZstdMatchesTheCpuDecode) {
  REQUIRE_GPU();
  compare_cases({"v3_zstd_checksum", "v3_zstd_transposed_big_f64", "v2_zstd_i32", "v3_zstd_two_frames"});
}

// Batches are shared by the workers and turn in a ring: with 16 workers and 1 MiB batches, a
// read of 2,560 chunks fills, closes and reuses each batch of the ring several times, with
// workers still copying into closed batches while others move on. Every chunk must arrive.
TEST(GpuDecode, SixteenWorkersThroughARingOfSmallBatchesLoseNoChunk) {
  REQUIRE_GPU();
  test::TempDir dir;
  const std::vector<std::uint64_t> shape{160, 256, 256};
  const Array array = test::write_batch_array<std::uint16_t>(
      dir.path() / "ring", test::batch_doc(shape, {16, 16, 16}, "uint16", 0, json::array({bytes_codec(), blosc("lz4", "shuffle", 2)})),
      0, 0);
  const Region region = full_region(shape);
  const auto destination = test::batch_destinations(region, 2).front();
  const auto expected = host_read(array, region, destination);
  Settings settings = with_decode(DecodeSide::gpu);
  settings.threads = 16;
  settings.staging_bytes = 1;  // the smallest batches (1 MiB of stored bytes, 2 MiB decoded)
  for (int round = 0; round < 3; ++round) {
    ReadStats stats;
    const auto got = device_read(array, region, destination, settings, &stats);
    EXPECT_EQ(first_difference(got, expected), SIZE_MAX) << "round " << round;
    EXPECT_EQ(stats.chunks_decoded_gpu, stats.chunks_total) << "round " << round;
  }
  // Shared: workers that find no room decode on the CPU; every chunk arrives once either way.
  settings.decode = DecodeSide::share;
  for (int round = 0; round < 3; ++round) {
    ReadStats stats;
    const auto got = device_read(array, region, destination, settings, &stats);
    EXPECT_EQ(first_difference(got, expected), SIZE_MAX) << "shared, round " << round;
    EXPECT_GT(stats.chunks_decoded_gpu, 0u) << "shared, round " << round;
    EXPECT_EQ(stats.chunks_decoded_gpu + stats.chunks_decoded_cpu, stats.chunks_total) << "shared, round " << round;
  }
}

TEST(GpuDecode, RefusedFramesFallBackToTheCpuWithinOneRead) {
  REQUIRE_GPU();
  compare_cases({"v3_blosc_mixed"});
}

TEST(GpuDecode, CpuSettingAndAutoChooseAsTheTableSays) {
  REQUIRE_GPU();
  test::TempDir dir;
  auto cases = gpu_cases(dir.path());
  const auto& c = cases.front();
  const Region region = full_region(c.array.metadata().shape);
  const auto shape = test::batch_destinations(region, 2).front();
  ReadStats cpu;
  device_read(c.array, region, shape, with_decode(DecodeSide::cpu), &cpu);
  EXPECT_EQ(cpu.chunks_decoded_gpu, 0u);
  EXPECT_GT(cpu.chunks_decoded_cpu, 0u);
  // A read this small (under kAutoBloscGpuMinBytes) decodes faster on the cores: auto keeps it
  // there; `gpu` takes it to the GPU.
  ReadStats automatic;
  device_read(c.array, region, shape, with_decode(DecodeSide::automatic), &automatic);
  EXPECT_EQ(automatic.chunks_decoded_gpu, 0u) << "auto: a small blosc-lz4 read on the CPU, where it measured faster";
  EXPECT_EQ(automatic.chunks_decoded_cpu, cpu.chunks_decoded_cpu);
  ReadStats gpu;
  device_read(c.array, region, shape, with_decode(DecodeSide::gpu), &gpu);
  EXPECT_EQ(gpu.chunks_decoded_gpu, gpu.chunks_total - gpu.chunks_missing);
}

void overwrite(const std::filesystem::path& file, const std::function<void(std::vector<char>&)>& edit) {
  std::vector<char> bytes;
  {
    std::ifstream in(file, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  edit(bytes);
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// Corrupt streams behind headers the host planner accepts: with decoding on the GPU, the kernels
// (lz4) or the host's check of the blosc stream sizes before the launch (which hands the chunk to
// the CPU decoder, whose error it then is) find them; either way the read fails naming the chunk
// and writes nothing past the region.
TEST(GpuDecode, CorruptChunksFailNamingTheKey) {
  REQUIRE_GPU();
  test::TempDir dir;
  auto cases = gpu_cases(dir.path());
  for (const std::string name : {"v3_lz4", "v3_blosc_lz4_shuffle", "v3_blosc_lz4_bitshuffle", "v3_zstd_checksum"}) {
    SCOPED_TRACE(name);
    const auto it = std::find_if(cases.begin(), cases.end(), [&](const GpuCase& c) { return c.name == name; });
    ASSERT_NE(it, cases.end());
    const std::filesystem::path chunk = dir.path() / name / "c" / "1" / "0" / "1";
    overwrite(chunk, [&](std::vector<char>& bytes) {
      std::size_t from = 4;  // numcodecs lz4: everything after the size header
      if (name == "v3_zstd_checksum") {
        from = 12;  // zstd: past the frame header and the first block's header, checksum checked
      } else if (name != "v3_lz4") {
        codec::portable::BloscFrame frame;
        ASSERT_EQ(codec::portable::blosc_plan(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size(),
                                              16 * 16 * 16 * 2, frame),
                  codec::portable::DecodeStatus::ok);
        ASSERT_FALSE(frame.memcpyed());
        // After the first block's first stream size: that stream's bytes and everything after.
        from = codec::portable::blosc_detail::read_le32(reinterpret_cast<const std::uint8_t*>(bytes.data()) + 16) + 4;
      }
      ASSERT_LT(from, bytes.size());
      std::fill(bytes.begin() + static_cast<std::ptrdiff_t>(from), bytes.end(), static_cast<char>(0xff));
    });
    const Region region = full_region(it->array.metadata().shape);
    const auto padded = test::batch_destinations(region, 2)[2];
    // Bytes no read writes: the padding (untouched by two host reads with different filler).
    const auto one = host_read(cases.front().array, region, padded, std::byte{0x11});
    const auto two = host_read(cases.front().array, region, padded, std::byte{0x22});
    for (DecodeSide side : {DecodeSide::gpu, DecodeSide::cpu, DecodeSide::share}) {
      SCOPED_TRACE(std::string(to_string(side)));
      std::vector<std::byte> after;
      try {
        Settings settings = with_decode(side);
        settings.threads = 2;
        device_read(it->array, region, padded, settings, nullptr, &after);
        ADD_FAILURE() << "a corrupt chunk was read";
      } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::corrupt_data) << e.what();
        EXPECT_NE(std::string(e.what()).find("(chunk c/1/0/1)"), std::string::npos) << e.what();
      }
      ASSERT_EQ(after.size(), one.size());
      std::size_t written = 0;
      for (std::size_t i = 0; i < after.size(); ++i)
        if (one[i] == std::byte{0x11} && two[i] == std::byte{0x22} && after[i] != kUntouched) ++written;
      EXPECT_EQ(written, 0u) << "padding bytes written";
    }
  }
}

TEST(GpuDecode, CorruptInnerChunksFailNamingTheShard) {
  REQUIRE_GPU();
  test::TempDir dir;
  auto cases = gpu_cases(dir.path());
  const auto it = std::find_if(cases.begin(), cases.end(), [](const GpuCase& c) { return c.name == "sharded_lz4_big"; });
  ASSERT_NE(it, cases.end());
  // The first inner chunk starts the shard (index at the end): corrupt its LZ4 block.
  overwrite(dir.path() / "sharded_lz4_big" / "c" / "1" / "0" / "0", [](std::vector<char>& bytes) {
    ASSERT_GT(bytes.size(), 64u);
    std::fill(bytes.begin() + 4, bytes.begin() + 64, static_cast<char>(0xff));
  });
  const Region region = full_region(it->array.metadata().shape);
  const auto shape = test::batch_destinations(region, 2).front();
  try {
    device_read(it->array, region, shape, with_decode(DecodeSide::gpu));
    ADD_FAILURE() << "a corrupt inner chunk was read";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::corrupt_data) << e.what();
    EXPECT_NE(std::string(e.what()).find("(shard c/1/0/0, inner chunk at offset 0)"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace zarrdirect

// The reader's side of ChunkSink::place_stored (what the GPU decode sink builds on), on the host:
// a sink that takes some compressed chunks itself gets their stored bytes and the names the
// reader's errors would use, the reader decodes the others on the CPU (mixed in one read, plain
// and sharded arrays), ReadStats counts each side, and an error about an earlier chunk keeps its
// own name instead of the name of the chunk the reader was working on.
#include "engine/chunk_sink.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <string>
#include <vector>

#include "engine/array_state.hpp"
#include "engine/host_sink.hpp"
#include "engine/reader.hpp"
#include "test_support.hpp"
#include "zarrdirect/metadata.hpp"

namespace zarrdirect {
namespace {

using nlohmann::json;

// Takes every other compressed chunk (decoding it with the chain, as a device sink would on the
// GPU) and leaves the rest to the reader; or throws `earlier` at its third chunk.
class TakingSink final : public ChunkSink {
 public:
  TakingSink(HostSink& inner, const codec::CodecChain& chain) : inner_(inner), chain_(chain) {}
  std::string_view name() const override { return "taking"; }
  void start(unsigned workers, std::size_t max_chunk_bytes) override {
    inner_.start(workers, max_chunk_bytes);
    scratch_.resize(workers);
  }
  std::span<std::byte> staging(unsigned worker, std::size_t nbytes) override { return inner_.staging(worker, nbytes); }
  void place(unsigned worker, std::span<const std::byte> chunk, const ChunkBox& box) override {
    inner_.place(worker, chunk, box);
  }
  void fill(unsigned worker, const ChunkBox& box) override { inner_.fill(worker, box); }
  bool place_stored(unsigned worker, std::span<const std::byte> stored, const ChunkBox& box,
                    std::string_view where) override {
    const unsigned call = calls_++;
    if (throw_at_third_ && call == 2) throw EarlierChunkError(ErrorKind::corrupt_data, earlier);
    if (call % 2 == 1) return false;
    {
      std::lock_guard lock(mutex_);
      names.emplace_back(where);
    }
    const std::size_t nbytes = static_cast<std::size_t>(chain_.decoded_spec().nbytes());
    auto staging = inner_.staging(worker, nbytes).first(nbytes);
    chain_.decode(stored, staging, scratch_[worker]);
    inner_.place(worker, staging, box);
    ++taken_;
    return true;
  }
  SinkDecodeCounts sink_decoded() const override {
    return {taken_.load(), taken_.load() * chain_.decoded_spec().nbytes()};
  }
  void finish() override { inner_.finish(); }

  void throw_at_third() { throw_at_third_ = true; }
  std::vector<std::string> names;
  const std::string earlier = "/somewhere/a.zarr/c/9/9 (chunk c/9/9): codec blosc: corrupt data (decoded on the GPU)";

 private:
  HostSink& inner_;
  const codec::CodecChain& chain_;
  std::vector<codec::Scratch> scratch_;
  std::atomic<unsigned> calls_{0};
  std::atomic<std::uint64_t> taken_{0};
  bool throw_at_third_ = false;
  std::mutex mutex_;
};

json blosc_lz4() {
  return {{"name", "blosc"},
          {"configuration", {{"cname", "lz4"}, {"clevel", 5}, {"shuffle", "shuffle"}, {"typesize", 2}, {"blocksize", 0}}}};
}
json bytes_le() { return {{"name", "bytes"}, {"configuration", {{"endian", "little"}}}}; }

json doc_with(json codecs) {
  return {{"zarr_format", 3},
          {"node_type", "array"},
          {"shape", {40, 36}},
          {"data_type", "uint16"},
          {"chunk_grid", {{"name", "regular"}, {"configuration", {{"chunk_shape", {16, 12}}}}}},
          {"chunk_key_encoding", {{"name", "default"}}},
          {"fill_value", 0},
          {"codecs", codecs}};
}

std::vector<std::uint16_t> write_ramp(const std::filesystem::path& path, const json& doc) {
  Array array = Array::create(path, doc);
  std::vector<std::uint16_t> data(40 * 36);
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<std::uint16_t>(i * 7 + 1);
  Source source;
  source.data = data.data();
  array.write({}, source);
  return data;
}

struct Outcome {
  std::vector<std::uint16_t> result;
  ReadStats stats;
  std::vector<std::string> names;
};

Outcome read_taking(const std::filesystem::path& path, const Region& region, bool throw_at_third = false) {
  auto impl = Array::Impl::create(path, read_array_metadata(path));
  const codec::CodecChain& staged = impl->sharding ? impl->sharding->inner_chain() : impl->chain;
  Outcome out;
  out.result.assign(region[0].size() * region[1].size(), 0xffff);
  DestinationLayout layout = DestinationLayout::contiguous(reinterpret_cast<std::byte*>(out.result.data()),
                                                           std::vector<std::uint64_t>{region[0].size(), region[1].size()}, 2);
  HostSink host(layout, impl->metadata.fill_value);
  TakingSink sink(host, staged);
  if (throw_at_third) sink.throw_at_third();
  Settings settings;
  settings.threads = 3;
  out.stats = run_read(*impl, region, sink, settings);
  out.names = sink.names;
  return out;
}

std::vector<std::uint16_t> expected_of(const std::vector<std::uint16_t>& data, const Region& region) {
  std::vector<std::uint16_t> out;
  for (std::uint64_t i = region[0].start; i < region[0].stop; ++i)
    for (std::uint64_t j = region[1].start; j < region[1].stop; ++j) out.push_back(data[i * 36 + j]);
  return out;
}

TEST(ChunkSinkPlaceStored, ChunksTakenByTheSinkAndDecodedByTheReaderMix) {
  test::TempDir dir;
  const auto data = write_ramp(dir / "a", doc_with(json::array({bytes_le(), blosc_lz4()})));
  for (const Region& region : {Region{{0, 40}, {0, 36}}, Region{{3, 37}, {5, 30}}}) {
    const Outcome out = read_taking(dir / "a", region);
    EXPECT_EQ(out.result, expected_of(data, region));
    EXPECT_EQ(out.stats.chunks_decoded_gpu + out.stats.chunks_decoded_cpu, out.stats.chunks_total);
    EXPECT_GT(out.stats.chunks_decoded_gpu, 0u);
    EXPECT_GT(out.stats.chunks_decoded_cpu, 0u);
    EXPECT_EQ(out.stats.bytes_decoded_gpu, out.stats.chunks_decoded_gpu * 16 * 12 * 2);
    EXPECT_EQ(out.stats.bytes_decoded_cpu, out.stats.chunks_decoded_cpu * 16 * 12 * 2);
    ASSERT_EQ(out.names.size(), out.stats.chunks_decoded_gpu);
    for (const auto& name : out.names) {
      EXPECT_NE(name.find((dir / "a" / "c").string()), std::string::npos) << name;
      EXPECT_NE(name.find("(chunk c/"), std::string::npos) << name;
    }
  }
}

TEST(ChunkSinkPlaceStored, ShardedInnerChunksMixToo) {
  test::TempDir dir;
  const json sharding = {{"name", "sharding_indexed"},
                         {"configuration",
                          {{"chunk_shape", {8, 6}},
                           {"codecs", json::array({bytes_le(), blosc_lz4()})},
                           {"index_codecs", json::array({bytes_le()})}}}};
  const auto data = write_ramp(dir / "s", doc_with(json::array({sharding})));
  const Region region{{2, 39}, {1, 35}};
  const Outcome out = read_taking(dir / "s", region);
  EXPECT_EQ(out.result, expected_of(data, region));
  EXPECT_EQ(out.stats.chunks_decoded_gpu + out.stats.chunks_decoded_cpu, out.stats.chunks_total);
  EXPECT_GT(out.stats.chunks_decoded_gpu, 0u);
  EXPECT_GT(out.stats.chunks_decoded_cpu, 0u);
  for (const auto& name : out.names) EXPECT_NE(name.find("inner chunk at offset"), std::string::npos) << name;
}

TEST(ChunkSinkPlaceStored, EarlierChunkErrorsKeepTheirOwnName) {
  test::TempDir dir;
  write_ramp(dir / "a", doc_with(json::array({bytes_le(), blosc_lz4()})));
  try {
    read_taking(dir / "a", Region{{0, 40}, {0, 36}}, true);
    ADD_FAILURE() << "read succeeded";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::corrupt_data);
    EXPECT_EQ(std::string(e.what()), "/somewhere/a.zarr/c/9/9 (chunk c/9/9): codec blosc: corrupt data (decoded on the GPU)");
  }
}

TEST(ChunkSinkPlaceStored, HostReadsCountCpuDecodes) {
  test::TempDir dir;
  write_ramp(dir / "a", doc_with(json::array({bytes_le(), blosc_lz4()})));
  Array array = Array::open(dir / "a");
  const NDArray result = array.read(Region{{0, 40}, {0, 36}}, Device::cpu);
  EXPECT_EQ(result.stats().chunks_decoded_gpu, 0u);
  EXPECT_EQ(result.stats().chunks_decoded_cpu, result.stats().chunks_total);
  EXPECT_EQ(result.stats().bytes_decoded_cpu, result.stats().chunks_total * 16 * 12 * 2);
}

}  // namespace
}  // namespace zarrdirect

// ShardUpdate's planning over an arbitrary stored shard (no file I/O): the first byte picks a
// sharding configuration, the next ones which inner chunks are replaced, the garbage limit and
// the join gap; the rest is the stored shard. Every index decode_index accepts must plan to a
// layout that copies only bytes of the stored shard, keeps every kept inner chunk's bytes, and
// (built in memory as the writer builds the file) gives a shard that decode_index accepts.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "codec/codec.hpp"
#include "codec/crc32c.hpp"
#include "codec/shard_update.hpp"
#include "codec/sharding.hpp"
#include "fuzz_support.hpp"

namespace {

using nlohmann::json;
using zarrdirect::codec::ShardingCodec;
using zarrdirect::codec::ShardUpdate;
using zarrdirect::fuzz::violated;

struct Config {
  ShardingCodec codec;
  bool crc;
};

std::vector<Config>& configs() {
  static std::vector<Config> list = [] {
    json bytes = {{"name", "bytes"}, {"configuration", {{"endian", "little"}}}};
    json crc = {{"name", "crc32c"}};
    zarrdirect::DataType u16{zarrdirect::ScalarKind::unsigned_int, 2};
    zarrdirect::codec::ArraySpec spec{{8, 8}, u16, std::vector<std::byte>(2)};
    auto make = [&](json inner_shape, const char* location, json codecs, bool with_crc) {
      json config = {{"chunk_shape", inner_shape},
                     {"codecs", codecs},
                     {"index_codecs", with_crc ? json::array({bytes, crc}) : json::array({bytes})},
                     {"index_location", location}};
      return Config{ShardingCodec(config, spec), with_crc};
    };
    std::vector<Config> configs;
    configs.push_back(make({4, 4}, "end", json::array({bytes}), false));
    configs.push_back(make({2, 4}, "start", json::array({bytes}), false));
    configs.push_back(make({4, 4}, "start", json::array({bytes, crc}), true));
    configs.push_back(make({2, 2}, "end", json::array({bytes, {{"name", "zstd"}}}), true));
    configs.push_back(make({1, 1}, "start", json::array({bytes}), false));
    return configs;
  }();
  return list;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 4) return 0;
  const Config& config = configs()[data[0] % configs().size()];
  const ShardingCodec& codec = config.codec;
  const std::uint8_t replace_seed = data[1];
  const double max_garbage = data[2] / 255.0;
  const std::uint64_t join_gap = std::uint64_t{data[3]} * 4;
  std::vector<std::byte> old(reinterpret_cast<const std::byte*>(data + 4), reinterpret_cast<const std::byte*>(data + size));
  if (old.size() < codec.index_nbytes()) return 0;
  const std::uint64_t index_at = codec.index_offset(old.size());
  if (config.crc) {  // a valid checksum, so that the fuzzer reaches the entries
    const std::size_t body = static_cast<std::size_t>(codec.index_nbytes() - 4);
    const std::uint32_t crc = zarrdirect::codec::crc32c(std::span(old).subspan(static_cast<std::size_t>(index_at), body));
    for (int b = 0; b < 4; ++b) old[static_cast<std::size_t>(index_at) + body + b] = std::byte((crc >> (8 * b)) & 0xff);
  }
  std::optional<zarrdirect::codec::ShardIndex> index;
  try {
    index.emplace(codec.decode_index(std::span(old).subspan(static_cast<std::size_t>(index_at), codec.index_nbytes()),
                                     old.size()));
  } catch (const zarrdirect::Error&) {
    return 0;
  }
  const std::uint64_t count = codec.inner_chunk_count();
  const std::uint64_t first_body = codec.index_location() == zarrdirect::codec::IndexLocation::start ? codec.index_nbytes() : 0;
  ShardUpdate update(codec);
  update.start_from(*index);
  std::vector<bool> replaced(count);
  for (std::uint64_t i = 0; i < count; ++i) {
    replaced[i] = ((replace_seed >> (i % 8)) & 1) != 0 && (i / 8) % 2 == replace_seed % 2;
    if (replaced[i]) update.replace(i);
  }
  update.plan(max_garbage, join_gap);

  // The plan copies only bytes of the stored shard, after an index at its start.
  if (update.kept_prefix() > old.size()) violated("kept prefix past the stored shard");
  if (update.body_start() < first_body || update.body_start() < update.kept_prefix()) violated("body start inside the prefix");
  if (update.garbage() > update.kept_prefix()) violated("more garbage than prefix");
  std::uint64_t last_end = 0;
  for (const auto& run : update.kept_runs()) {
    if (run.nbytes == 0 || run.offset < std::max(first_body, last_end)) violated("kept runs unsorted, empty or overlapping");
    if (run.offset > update.kept_prefix() || run.nbytes > update.kept_prefix() - run.offset) violated("kept run past the prefix");
    last_end = run.offset + run.nbytes;
  }
  if (update.compacts() && !update.kept_runs().empty()) violated("a compaction copies a prefix");
  std::uint64_t copied = 0;
  for (const auto& kept : update.to_copy()) {
    if (kept.inner >= count || replaced[kept.inner]) violated("copies a replaced inner chunk");
    if (kept.offset > old.size() || kept.nbytes > old.size() - kept.offset) violated("copies past the stored shard");
    copied += kept.nbytes;
  }

  // Built as the writer builds it: runs at their offsets (holes as zeros), new chunks appended,
  // kept ones copied when compacting, then the index.
  std::vector<std::byte> file(static_cast<std::size_t>(update.body_start()));
  for (const auto& run : update.kept_runs())
    std::memcpy(file.data() + run.offset, old.data() + run.offset, static_cast<std::size_t>(run.nbytes));
  // New inner chunks: bytes of a size the inner chain could have encoded.
  std::vector<std::byte> fresh(static_cast<std::size_t>(std::min<std::uint64_t>(8, codec.inner_chain().max_encoded_size())),
                               std::byte{0x5a});
  for (std::uint64_t i = 0; i < count; ++i) {
    if (!replaced[i] || i % 3 == 0) continue;  // some replaced chunks stay missing (all fill value)
    update.place(i, file.size(), fresh.size());
    file.insert(file.end(), fresh.begin(), fresh.end());
  }
  for (const auto& kept : update.to_copy()) {
    update.place(kept.inner, file.size(), kept.nbytes);
    auto from = old.begin() + static_cast<std::ptrdiff_t>(kept.offset);
    file.insert(file.end(), from, from + static_cast<std::ptrdiff_t>(kept.nbytes));
  }
  if (update.empty()) return 0;
  const auto new_index_bytes = update.encode_index();
  const std::uint64_t at = update.index_offset(file.size());
  if (at + new_index_bytes.size() > file.size()) file.resize(static_cast<std::size_t>(at + new_index_bytes.size()));
  std::memcpy(file.data() + at, new_index_bytes.data(), new_index_bytes.size());
  // Appending keeps the body within the old shard plus the new chunks; compacting within the kept bytes.
  if (file.size() > old.size() + count * fresh.size() + codec.index_nbytes() + copied) violated("new shard too large");

  zarrdirect::codec::ShardIndex after = [&] {
    try {
      return codec.decode_index(std::span(file).subspan(static_cast<std::size_t>(codec.index_offset(file.size())),
                                                        codec.index_nbytes()),
                                file.size());
    } catch (const zarrdirect::Error& e) {
      std::fprintf(stderr, "%s\n", e.what());
      violated("the new shard's index does not decode");
    }
  }();
  for (std::uint64_t i = 0; i < count; ++i) {
    const auto before = (*index)[i];
    const auto now = after[i];
    if (replaced[i]) {
      if (i % 3 == 0 ? !now.missing() : (now.missing() || now.nbytes != fresh.size())) violated("replaced chunk wrong");
      continue;
    }
    if (before.missing() != now.missing() || before.nbytes != now.nbytes) violated("kept chunk's entry changed");
    if (before.missing() || before.nbytes == 0) continue;
    if (!std::equal(old.begin() + static_cast<std::ptrdiff_t>(before.offset),
                    old.begin() + static_cast<std::ptrdiff_t>(before.offset + before.nbytes),
                    file.begin() + static_cast<std::ptrdiff_t>(now.offset)))
      violated("kept chunk's bytes changed");
  }
  return 0;
}

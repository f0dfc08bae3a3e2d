// A shard's bytes, decoded by a few fixed sharding configurations (chosen by the first byte):
// decode_index must refuse every entry that would read outside the shard or overlap its index,
// and decoding the whole shard must fail only with zarrdirect::Error.
#include <cstddef>
#include <cstdint>
#include <memory>

#include "codec/codec.hpp"
#include "codec/sharding.hpp"
#include "fuzz_support.hpp"

namespace {

using nlohmann::json;
using zarrdirect::codec::CodecChain;

std::vector<CodecChain>& chains() {
  static std::vector<CodecChain> list = [] {
    json bytes = {{"name", "bytes"}, {"configuration", {{"endian", "little"}}}};
    json crc = {{"name", "crc32c"}};
    auto sharding = [&](json inner_shape, const char* location, json codecs, json index_codecs) {
      return json::array({{{"name", "sharding_indexed"},
                           {"configuration",
                            {{"chunk_shape", inner_shape},
                             {"codecs", codecs},
                             {"index_codecs", index_codecs},
                             {"index_location", location}}}}});
    };
    zarrdirect::DataType u16{zarrdirect::ScalarKind::unsigned_int, 2};
    zarrdirect::codec::ArraySpec spec{{8, 8}, u16, std::vector<std::byte>(2, std::byte{0x11})};
    std::vector<CodecChain> chains;
    chains.push_back(CodecChain::create(sharding({4, 4}, "end", json::array({bytes}), json::array({bytes, crc})), spec, "f"));
    chains.push_back(CodecChain::create(sharding({2, 4}, "start", json::array({bytes, crc}), json::array({bytes, crc})), spec, "f"));
    chains.push_back(CodecChain::create(sharding({4, 8}, "end", json::array({bytes}), json::array({bytes})), spec, "f"));
    chains.push_back(CodecChain::create(sharding({1, 1}, "start", json::array({bytes}), json::array({bytes})), spec, "f"));
    json inner = sharding({2, 2}, "end", json::array({bytes}), json::array({bytes}))[0];
    chains.push_back(CodecChain::create(sharding({4, 4}, "start", json::array({inner}), json::array({bytes, crc})), spec, "f"));
    return chains;
  }();
  return list;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const CodecChain& chain = chains()[data[0] % chains().size()];
  const auto& codec = *chain.sole_sharding_codec();
  auto shard = std::as_bytes(std::span(data + 1, size - 1));
  if (shard.size() >= codec.index_nbytes()) {
    const std::uint64_t begin = codec.index_offset(shard.size());
    const std::uint64_t end = begin + codec.index_nbytes();
    try {
      auto index = codec.decode_index(shard.subspan(begin, codec.index_nbytes()), shard.size());
      if (index.size() != codec.inner_chunk_count()) zarrdirect::fuzz::violated("index size");
      for (std::size_t i = 0; i < index.size(); ++i) {
        const auto& entry = index[i];
        if (entry.missing()) {
          if (entry.nbytes != ~std::uint64_t{0}) zarrdirect::fuzz::violated("half-missing entry accepted");
          continue;
        }
        if (entry.offset > shard.size() || entry.nbytes > shard.size() - entry.offset)
          zarrdirect::fuzz::violated("entry outside the shard accepted");
        if (entry.nbytes > 0 && entry.offset < end && entry.offset + entry.nbytes > begin)
          zarrdirect::fuzz::violated("entry overlapping the index accepted");
      }
    } catch (const zarrdirect::Error&) {
    }
  }
  std::vector<std::byte> decoded(static_cast<std::size_t>(chain.decoded_spec().nbytes()));
  zarrdirect::codec::Scratch scratch;
  try {
    chain.decode(shard, decoded, scratch);
  } catch (const zarrdirect::Error&) {
  }
  return 0;
}

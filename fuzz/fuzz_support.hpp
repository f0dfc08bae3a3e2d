// Shared by the fuzz targets: what a parsed array's metadata is put through after parsing.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "codec/codec.hpp"
#include "codec/sharding.hpp"
#include "zarrdirect/error.hpp"
#include "zarrdirect/metadata.hpp"

namespace zarrdirect::fuzz {

// Stops the fuzzer with a message: a property that must hold did not.
[[noreturn]] inline void violated(const char* what) {
  std::fprintf(stderr, "property violated: %s\n", what);
  std::abort();
}

// Everything Array::open does with parsed metadata, without touching files: grid arithmetic, chunk
// keys, the prepared codec chain; and, for small chunks, a round trip of the fill value through it.
inline void exercise_metadata(const ArrayMetadata& metadata, const std::string& where) {
  auto grid = metadata.chunk_grid_shape();
  (void)metadata.num_elements();
  std::uint64_t chunks = metadata.num_chunks();
  std::vector<std::uint64_t> last(grid.size());
  for (std::size_t d = 0; d < grid.size(); ++d) last[d] = grid[d] ? grid[d] - 1 : 0;
  std::string key = metadata.chunk_key_encoding.key(last);
  if (key.empty() || key.find("..") != std::string::npos || key.front() == '/') violated("chunk key leaves the folder");
  if (chunks == 0 && metadata.num_elements() != 0) violated("no chunks for a non-empty array");

  codec::ArraySpec spec{metadata.chunk_shape, metadata.dtype, metadata.fill_value};
  auto chain = codec::CodecChain::create(metadata.codecs, spec, where);
  (void)chain.is_identity();
  (void)chain.sole_sharding_codec();
  const std::uint64_t bound = chain.max_encoded_size();
  const std::uint64_t nbytes = spec.nbytes();
  if (nbytes > (1u << 16) || bound > (1u << 20)) return;
  std::vector<std::byte> chunk(static_cast<std::size_t>(nbytes));
  for (std::size_t i = 0; i < chunk.size(); i += metadata.fill_value.size())
    std::memcpy(chunk.data() + i, metadata.fill_value.data(), metadata.fill_value.size());
  codec::ByteBuffer encoded;
  try {
    encoded = chain.encode(chunk);
  } catch (const Error&) {
    return;  // codecs that cannot encode this configuration (a v2 filter's unusual types) are fine
  }
  if (encoded.size() > bound) violated("encoding larger than max_encoded_size()");
  std::vector<std::byte> decoded(chunk.size());
  codec::Scratch scratch;
  try {
    chain.decode(encoded, decoded, scratch);
  } catch (const Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    violated("a chunk the chain encoded does not decode");
  }
  // Lossy filters (quantize, fixedscaleoffset) may change values; the rest must round-trip.
  bool lossless = true;
  for (const auto& codec : metadata.codecs) {
    auto name = codec["name"].get<std::string>();
    if (name.rfind("numcodecs.", 0) == 0 && name != "numcodecs.zlib" && name != "numcodecs.gzip" &&
        name != "numcodecs.zstd" && name != "numcodecs.bz2" && name != "numcodecs.lz4" && name != "numcodecs.blosc")
      lossless = false;
  }
  if (lossless && std::memcmp(decoded.data(), chunk.data(), chunk.size()) != 0) violated("fill chunk does not round-trip");
}

}  // namespace zarrdirect::fuzz

#include "cli/sample.hpp"

#include <cmath>
#include <span>

#include "zarrdirect/array.hpp"
#include "zarrdirect/error.hpp"

namespace zarrdirect::cli {

std::vector<std::uint16_t> sample_volume(std::uint64_t nz, std::uint64_t ny, std::uint64_t nx) {
  // Separable signal from per-axis tables: gigabytes are generated in seconds. Like a microscope
  // image, it uses a small part of the 16-bit range (about 150 to 1900: a background plus
  // structure) under 5 bits of noise, which is what makes such data compress 1.3x to 1.7x.
  std::vector<double> along_x(nx), along_y(ny), along_z(nz);
  for (std::uint64_t x = 0; x < nx; ++x) along_x[x] = 600.0 * std::sin(static_cast<double>(x) * 0.05);
  for (std::uint64_t y = 0; y < ny; ++y) along_y[y] = std::cos(static_cast<double>(y) * 0.03);
  for (std::uint64_t z = 0; z < nz; ++z) along_z[z] = 1000.0 + 250.0 * std::sin(static_cast<double>(z) * 0.02);
  std::vector<std::uint16_t> volume(nz * ny * nx);
  std::uint64_t state = 0x9e3779b97f4a7c15ull;  // xorshift noise: deterministic across machines
  std::size_t i = 0;
  for (std::uint64_t z = 0; z < nz; ++z)
    for (std::uint64_t y = 0; y < ny; ++y)
      for (std::uint64_t x = 0; x < nx; ++x, ++i) {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        double signal = along_z[z] + along_x[x] * along_y[y];
        volume[i] = static_cast<std::uint16_t>(static_cast<std::uint16_t>(signal) + (state & 31u));
      }
  return volume;
}

nlohmann::json sample_metadata(const std::vector<std::uint64_t>& shape, const std::vector<std::uint64_t>& chunks,
                               const std::string& codec) {
  nlohmann::json bytes = {{"name", "bytes"}, {"configuration", {{"endian", "little"}}}};
  nlohmann::json codecs = nlohmann::json::array({bytes});
  if (codec == "zstd") codecs.push_back({{"name", "zstd"}, {"configuration", {{"level", 1}, {"checksum", false}}}});
  else if (codec == "gzip") codecs.push_back({{"name", "gzip"}, {"configuration", {{"level", 1}}}});
  else if (codec == "blosc")
    codecs.push_back({{"name", "blosc"},
                      {"configuration", {{"cname", "lz4"}, {"clevel", 5}, {"shuffle", "shuffle"}, {"typesize", 2}, {"blocksize", 0}}}});
  else if (codec == "sharded") {
    std::vector<std::uint64_t> inner;
    for (auto c : chunks) {
      // A quarter of the shard along each axis, or the largest divisor of the extent below that:
      // inner chunks must tile the shard.
      const std::uint64_t target = std::max<std::uint64_t>(1, c / 4);
      std::uint64_t extent = 1;
      for (std::uint64_t d = 1; d <= c / d; ++d) {
        if (c % d != 0) continue;
        if (d <= target) extent = std::max(extent, d);
        if (c / d <= target) extent = std::max(extent, c / d);
      }
      inner.push_back(extent);
    }
    nlohmann::json inner_codecs = nlohmann::json::array({bytes, {{"name", "zstd"}, {"configuration", {{"level", 1}, {"checksum", false}}}}});
    codecs = nlohmann::json::array({{{"name", "sharding_indexed"},
                                     {"configuration",
                                      {{"chunk_shape", inner},
                                       {"codecs", inner_codecs},
                                       {"index_codecs", nlohmann::json::array({bytes, {{"name", "crc32c"}}})},
                                       {"index_location", "end"}}}}});
  } else if (codec != "none") {
    throw Error(ErrorKind::invalid_argument, "sample codec must be none, zstd, gzip, blosc or sharded");
  }
  return {{"zarr_format", 3},
          {"node_type", "array"},
          {"shape", shape},
          {"data_type", "uint16"},
          {"chunk_grid", {{"name", "regular"}, {"configuration", {{"chunk_shape", chunks}}}}},
          {"chunk_key_encoding", {{"name", "default"}, {"configuration", {{"separator", "/"}}}}},
          {"fill_value", 0},
          {"codecs", codecs},
          {"dimension_names", {"z", "y", "x"}},
          {"attributes", {{"description", kSampleDescription}, {"zarrdirect_sample_version", kSampleVersion}}}};
}

void write_sample(const std::filesystem::path& path, const std::vector<std::uint64_t>& shape,
                  const std::vector<std::uint64_t>& chunks, const std::string& codec) {
  if (shape.size() != 3 || chunks.size() != 3)
    throw Error(ErrorKind::invalid_argument, "the sample is 3-d: give three extents for its shape and chunks");
  auto volume = sample_volume(shape[0], shape[1], shape[2]);
  // Through the public writer: every chunk file replaced atomically, chunks written in parallel.
  Array array = Array::create(path, sample_metadata(shape, chunks, codec));
  Source source;
  source.data = volume.data();
  array.write({}, source);
}

}  // namespace zarrdirect::cli

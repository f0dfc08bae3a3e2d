#include "zarrdirect/describe.hpp"

namespace zarrdirect {
namespace {

// The sharding codec of the chain, or null when the array is not sharded.
const nlohmann::json* sharding_codec(const ArrayMetadata& m) {
  for (const auto& codec : m.codecs)
    if (codec.is_object() && codec.value("name", "") == "sharding_indexed") return &codec;
  return nullptr;
}

// v2 parsing turns order "F" into a leading transpose that reverses the dimensions (for more
// than one dimension; with fewer the orders coincide).
std::string memory_order(const ArrayMetadata& m) {
  if (m.zarr_format != 2 || m.rank() < 2 || m.codecs.empty()) return "C";
  const auto& first = m.codecs.front();
  return first.is_object() && first.value("name", "") == "transpose" ? "F" : "C";
}

}  // namespace

nlohmann::json describe(const Array& array) { return describe(array, array.storage_summary()); }

nlohmann::json describe(const Array& array, const StorageSummary& stored) {
  const ArrayMetadata& m = array.metadata();
  nlohmann::json chunks = m.chunk_shape, shards = nullptr;
  if (const auto* sharding = sharding_codec(m)) {
    shards = m.chunk_shape;
    chunks = sharding->at("configuration").at("chunk_shape");  // checked when the metadata was parsed
  }
  nlohmann::json names = nullptr;
  if (!m.dimension_names.empty()) {
    names = nlohmann::json::array();
    for (const auto& name : m.dimension_names) names.push_back(name ? nlohmann::json(*name) : nlohmann::json());
  }
  // num_elements() * size was checked against overflow when the metadata was parsed.
  const std::uint64_t nbytes = m.num_elements() * m.dtype.size;
  return {{"path", array.path().string()},
          {"zarr_format", m.zarr_format},
          {"node_type", "array"},
          {"shape", m.shape},
          {"dtype", m.dtype.name()},
          {"chunks", chunks},
          {"shards", shards},
          {"order", memory_order(m)},
          {"fill_value", m.fill_value_json},
          {"codecs", m.codecs},
          {"dimension_names", names},
          {"attributes", m.attributes},
          {"chunks_stored", stored.chunks_stored},
          {"chunks_total", stored.chunks_total},
          {"bytes_stored", stored.bytes_stored},
          {"nbytes", nbytes}};
}

}  // namespace zarrdirect

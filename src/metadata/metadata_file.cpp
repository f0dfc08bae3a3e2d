#include "metadata/metadata_file.hpp"

namespace zarrdirect {

std::optional<nlohmann::json> read_metadata_document(const Store& store, const std::string& key) {
  auto bytes = store.read(key, kMaxMetadataBytes);
  if (!bytes) return std::nullopt;
  std::string_view text(reinterpret_cast<const char*>(bytes->data()), bytes->size());
  return parse_json_document(text, (std::filesystem::path(store.location()) / key).string(), non_finite_tokens_for(key));
}

NonFiniteTokens non_finite_tokens_for(const std::string& key) {
  const std::string_view name = std::string_view(key).substr(key.rfind('/') + 1);
  if (name == ".zattrs") return NonFiniteTokens::anywhere;
  if (name == "zarr.json" || name == ".zmetadata") return NonFiniteTokens::in_attributes;
  return NonFiniteTokens::refused;
}

}  // namespace zarrdirect

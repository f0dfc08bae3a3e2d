#include <fmt/format.h>

#include "metadata/json_fields.hpp"
#include "store/file_store.hpp"
#include "zarrdirect/error.hpp"
#include "zarrdirect/metadata.hpp"

namespace zarrdirect {
namespace {

// Metadata documents larger than this are refused before they are read.
constexpr std::uint64_t kMaxMetadataBytes = 64u << 20;

std::optional<nlohmann::json> read_json(const FileStore& store, const std::string& key) {
  auto bytes = store.read(key, kMaxMetadataBytes);
  if (!bytes) return std::nullopt;
  std::string_view text(reinterpret_cast<const char*>(bytes->data()), bytes->size());
  return parse_json_document(text, (store.root() / key).string());
}

}  // namespace

ArrayMetadata read_array_metadata(const std::filesystem::path& path) {
  FileStore store(path);
  if (auto doc = read_json(store, "zarr.json")) return parse_v3_array_metadata(*doc, (path / "zarr.json").string());
  if (auto doc = read_json(store, ".zarray")) {
    auto attrs = read_json(store, ".zattrs");
    return parse_v2_array_metadata(*doc, attrs ? *attrs : nlohmann::json::object(), (path / ".zarray").string());
  }
  if (store.exists(".zgroup"))
    throw Error(ErrorKind::invalid_argument,
                fmt::format("{}: is a Zarr v2 group, not an array (open one of its arrays, or a level)", path.string()));
  throw Error(ErrorKind::invalid_argument,
              fmt::format("{}: not a Zarr array: no zarr.json (v3) or .zarray (v2) found", path.string()));
}

}  // namespace zarrdirect

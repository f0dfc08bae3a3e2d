// zarrdirect::node_kind: what a folder holds, through the store's checked path only.
#include <fmt/format.h>

#include "metadata/json_fields.hpp"
#include "metadata/metadata_file.hpp"
#include "store/file_store.hpp"
#include "zarrdirect/error.hpp"
#include "zarrdirect/group.hpp"

namespace zarrdirect {
namespace {

// OME-Zarr keeps "multiscales" under "ome" (0.5) or at the top of the attributes (0.4 and
// earlier), as Multiscale::open reads it.
bool has_multiscales(const nlohmann::json& attributes) {
  if (!attributes.is_object()) return false;
  const nlohmann::json* container = &attributes;
  if (auto ome = attributes.find("ome"); ome != attributes.end() && ome->is_object()) container = &*ome;
  auto multiscales = container->find("multiscales");
  return multiscales != container->end() && multiscales->is_array() && !multiscales->empty();
}

}  // namespace

std::string_view to_string(NodeKind kind) {
  switch (kind) {
    case NodeKind::none: return "none";
    case NodeKind::array_v2: return "array (v2)";
    case NodeKind::array_v3: return "array (v3)";
    case NodeKind::group_v2: return "group (v2)";
    case NodeKind::group_v3: return "group (v3)";
    case NodeKind::multiscale_v2: return "OME-Zarr multiscale image (v2)";
    case NodeKind::multiscale_v3: return "OME-Zarr multiscale image (v3)";
  }
  return "none";
}

bool is_array(NodeKind kind) { return kind == NodeKind::array_v2 || kind == NodeKind::array_v3; }

bool is_group(NodeKind kind) {
  return kind == NodeKind::group_v2 || kind == NodeKind::group_v3 || kind == NodeKind::multiscale_v2 ||
         kind == NodeKind::multiscale_v3;
}

NodeKind node_kind(const std::filesystem::path& path, const StoreOptions& options) {
  auto store_handle = open_store(path, options);
  const Store& store = *store_handle;
  if (auto doc = read_metadata_document(store, "zarr.json")) {
    const std::string where = (path / "zarr.json").string();
    const std::string type = parse_string(required_field(*doc, "node_type", where), "node_type", where);
    if (type == "array") return NodeKind::array_v3;
    if (type != "group") throw_invalid_field(where, "node_type", fmt::format("is {}, not \"array\" or \"group\"", json_quoted(type)));
    auto attributes = doc->find("attributes");
    return attributes != doc->end() && has_multiscales(*attributes) ? NodeKind::multiscale_v3 : NodeKind::group_v3;
  }
  // Opened, not merely looked up: a FIFO or a link out of the folder is refused here too.
  if (store.open_object(".zarray")) return NodeKind::array_v2;
  if (!store.open_object(".zgroup")) return NodeKind::none;
  auto attributes = read_metadata_document(store, ".zattrs");
  return attributes && has_multiscales(*attributes) ? NodeKind::multiscale_v2 : NodeKind::group_v2;
}

}  // namespace zarrdirect

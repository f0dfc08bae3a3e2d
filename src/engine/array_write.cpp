// Array::create, Group::create and Array::write: the public write calls.
#include <algorithm>
#include <system_error>

#include <fmt/format.h>

#include "engine/array_state.hpp"
#include "engine/chunk_source.hpp"
#include "engine/read_many.hpp"
#include "engine/writer.hpp"
#include "metadata/json_document.hpp"
#include "zarrdirect/group.hpp"

namespace zarrdirect {
namespace {

std::span<const std::byte> text_bytes(const std::string& text) { return std::as_bytes(std::span(text)); }

void make_folder(const std::filesystem::path& path) {
  std::error_code ec;
  std::filesystem::create_directories(path, ec);
  if (ec) throw Error(ErrorKind::io, fmt::format("{}: cannot create folder: {}", path.string(), ec.message()));
}

bool holds_node(const FileStore& store) {
  return store.exists("zarr.json") || store.exists(".zarray") || store.exists(".zgroup");
}

// Refuses a folder that holds a node, or (overwrite) removes everything inside it first.
void clear_or_refuse(const FileStore& store, const std::filesystem::path& path, bool overwrite) {
  if (!holds_node(store)) return;
  if (!overwrite)
    throw Error(ErrorKind::invalid_argument,
                fmt::format("{}: already holds a Zarr array or group; pass overwrite to replace it", path.string()));
  store.erase_tree();
}

}  // namespace

Array Array::create(const std::filesystem::path& path, const nlohmann::json& document, bool overwrite, bool durable) {
  require_writable_location(path);  // before any folder is made: "http://h/a" is no local path
  if (!document.is_object())
    throw Error(ErrorKind::invalid_metadata, fmt::format("{}: array metadata must be a JSON object", path.string()));
  auto format = document.find("zarr_format");
  const bool v3 = format != document.end() && *format == 3;
  const bool v2 = format != document.end() && *format == 2;
  if (!v2 && !v3)
    throw Error(ErrorKind::invalid_metadata,
                fmt::format("{}: array metadata needs \"zarr_format\" 2 or 3", path.string()));
  const std::string metadata_name = v3 ? "zarr.json" : ".zarray";
  const std::string where = (path / metadata_name).string();
  nlohmann::json zarray = document;
  nlohmann::json attributes = nlohmann::json::object();
  if (v2 && zarray.contains("attributes")) {
    attributes = zarray["attributes"];
    if (!attributes.is_object())
      throw Error(ErrorKind::invalid_metadata, fmt::format("{}: \"attributes\" must be an object", where));
    zarray.erase("attributes");
  }
  // Everything open() would check, before anything is written.
  ArrayMetadata metadata = v3 ? parse_v3_array_metadata(document, where) : parse_v2_array_metadata(zarray, attributes, where);
  codec::ArraySpec chunk_spec{metadata.chunk_shape, metadata.dtype, metadata.fill_value};
  (void)codec::CodecChain::create(metadata.codecs, chunk_spec, where);

  // The texts, checked to read back (depth, size), before anything is written.
  const std::string text = v3 ? readable_json_document(document, where, NonFiniteTokens::in_attributes)
                              : readable_json_document(zarray, where, NonFiniteTokens::refused);
  const std::string attributes_text =
      v3 || attributes.empty() ? std::string()
                               : readable_json_document(attributes, (path / ".zattrs").string(), NonFiniteTokens::anywhere);

  make_folder(path);
  {
    FileStore store(path);
    clear_or_refuse(store, path, overwrite);
    store.set(metadata_name, text_bytes(text), durable);
    if (!attributes_text.empty()) store.set(".zattrs", text_bytes(attributes_text), durable);
  }
  return Array::open(path, std::move(metadata));
}

Group Group::create(const std::filesystem::path& path, int zarr_format, const nlohmann::json& attributes, bool overwrite) {
  require_writable_location(path);
  if (zarr_format != 2 && zarr_format != 3)
    throw Error(ErrorKind::invalid_argument, fmt::format("{}: zarr_format must be 2 or 3, not {}", path.string(), zarr_format));
  if (!attributes.is_object())
    throw Error(ErrorKind::invalid_argument, fmt::format("{}: group attributes must be a JSON object", path.string()));
  const std::string text =
      zarr_format == 3
          ? readable_json_document({{"zarr_format", 3}, {"node_type", "group"}, {"attributes", attributes}},
                                   (path / "zarr.json").string(), NonFiniteTokens::in_attributes)
          : dump_json_document(nlohmann::json{{"zarr_format", 2}});
  const std::string attributes_text =
      zarr_format == 3 || attributes.empty()
          ? std::string()
          : readable_json_document(attributes, (path / ".zattrs").string(), NonFiniteTokens::anywhere);
  make_folder(path);
  {
    FileStore store(path);
    clear_or_refuse(store, path, overwrite);
    store.set(zarr_format == 3 ? "zarr.json" : ".zgroup", text_bytes(text));
    if (!attributes_text.empty()) store.set(".zattrs", text_bytes(attributes_text));
  }
  return Group::open(path);
}

WriteStats Array::write(const Region& region, const Source& source, const WriteSettings& options,
                        const Settings& settings) const {
  const auto& metadata = impl_->metadata;
  auto refuse = [&](const std::string& why) {
    throw Error(ErrorKind::invalid_argument, fmt::format("{}: write: {}", impl_->path.string(), why));
  };
  Region resolved;
  try {
    resolved = resolve_region(region, metadata.shape);
  } catch (const Error& e) {
    throw e.with_context(fmt::format("{}: write", impl_->path.string()));
  }
  auto shape = region_shape(resolved);
  if (!source.shape.empty() && source.shape != shape)
    refuse(fmt::format("the source has shape [{}], the region {} has shape [{}]", fmt::join(source.shape, ", "),
                       to_string(resolved), fmt::join(shape, ", ")));
  if (source.dtype && *source.dtype != metadata.dtype)
    refuse(fmt::format("the source holds {}, the array {}", source.dtype->name(), metadata.dtype.name()));
  const bool empty = std::any_of(shape.begin(), shape.end(), [](std::uint64_t e) { return e == 0; });
  if (source.device == Device::cuda) check_device(DeviceSpec(Device::cuda, source.device_ordinal));
  if (empty) return {};
  if (!source.data) refuse("source data is null");
  DestinationLayout layout = DestinationLayout::contiguous(
      static_cast<std::byte*>(const_cast<void*>(source.data)), shape, metadata.dtype.size);
  if (!source.byte_strides.empty()) {
    if (source.byte_strides.size() != shape.size())
      refuse(fmt::format("{} strides given for a {}-d region", source.byte_strides.size(), shape.size()));
    std::copy(source.byte_strides.begin(), source.byte_strides.end(), layout.byte_strides.begin());
  }
  CacheInvalidation drop_cached(*impl_, resolved);  // the chunks written are stale in the handle's cache
  if (source.device == Device::cuda) {
    auto device_source = make_device_source(layout, source.cuda_stream, source.device_ordinal);
    return run_write(*impl_, resolved, *device_source, options, settings);
  }
  HostSource host(layout);
  return run_write(*impl_, resolved, host, options, settings);
}

}  // namespace zarrdirect

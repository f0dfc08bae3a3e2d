#include "engine/attributes_write.hpp"

#include <fmt/format.h>

#include "engine/array_state.hpp"
#include "metadata/json_document.hpp"
#include "zarrdirect/group.hpp"

namespace zarrdirect {
namespace {

// Through the metadata readers' parser: the bare NaN / Infinity / -Infinity that zarr-python 2
// writes in attributes are read (plain nlohmann refused the whole document as "not valid JSON").
nlohmann::json parse_object(const std::vector<std::byte>& bytes, const std::string& where, NonFiniteTokens non_finite) {
  return parse_json_document(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()), where,
                             non_finite);
}

std::span<const std::byte> text_bytes(const std::string& text) { return std::as_bytes(std::span(text)); }

}  // namespace

nlohmann::json save_attributes(const FileStore& store, int zarr_format,
                               const std::function<void(nlohmann::json&)>& edit, bool durable) {
  const bool v3 = zarr_format == 3;
  const std::string key = v3 ? "zarr.json" : ".zattrs";
  const std::string where = (store.root() / key).string();
  KeyLock lock = store.lock(key, durable);
  auto stored = store.read(key, kMaxMetadataBytes);
  nlohmann::json document;
  nlohmann::json attributes = nlohmann::json::object();
  if (v3) {
    if (!stored) throw Error(ErrorKind::io, fmt::format("{}: missing", where));
    document = parse_object(*stored, where, NonFiniteTokens::in_attributes);
    if (auto found = document.find("attributes"); found != document.end()) {
      if (!found->is_object())
        throw Error(ErrorKind::invalid_metadata, fmt::format("{}: \"attributes\" is not a JSON object", where));
      attributes = *found;
    }
  } else if (stored) {
    attributes = parse_object(*stored, where, NonFiniteTokens::anywhere);
  }
  edit(attributes);
  if (!attributes.is_object())
    throw Error(ErrorKind::invalid_argument, fmt::format("{}: attributes must be a JSON object", where));
  std::string text;
  try {
    if (v3) {
      document["attributes"] = attributes;
      text = readable_json_document(document, where, NonFiniteTokens::in_attributes);
    } else {
      text = readable_json_document(attributes, where, NonFiniteTokens::anywhere);
    }
  } catch (const nlohmann::json::exception& e) {  // text that is not UTF-8
    throw Error(ErrorKind::invalid_argument, fmt::format("{}: attributes cannot be saved: {}", where, e.what()));
  }
  lock.commit(text_bytes(text), durable);
  return attributes;
}

std::function<void(nlohmann::json&)> patch_attributes(const nlohmann::json& set,
                                                      const std::vector<std::string>& remove) {
  if (!set.is_object()) throw Error(ErrorKind::invalid_argument, "attributes to set must be a JSON object");
  return [set, remove](nlohmann::json& attributes) {
    for (const auto& [name, value] : set.items()) attributes[name] = value;
    for (const auto& name : remove) attributes.erase(name);
  };
}

nlohmann::json Array::update_attributes(const nlohmann::json& set, const std::vector<std::string>& remove,
                                        bool durable) {
  return replace_attributes(patch_attributes(set, remove), durable);
}

void Array::set_attributes(const nlohmann::json& attributes, bool durable) {
  if (!attributes.is_object())
    throw Error(ErrorKind::invalid_argument,
                fmt::format("{}: attributes must be a JSON object", impl_->path.string()));
  replace_attributes([&](nlohmann::json& stored) { stored = attributes; }, durable);
}

nlohmann::json Array::replace_attributes(const std::function<void(nlohmann::json&)>& edit, bool durable) {
  nlohmann::json saved = save_attributes(impl_->file_store(), impl_->metadata.zarr_format, edit, durable);
  ArrayMetadata metadata = impl_->metadata;
  metadata.attributes = saved;
  impl_ = Impl::create(impl_->path, std::move(metadata));
  return saved;
}

nlohmann::json Group::update_attributes(const nlohmann::json& set, const std::vector<std::string>& remove,
                                        bool durable) {
  auto edit = patch_attributes(set, remove);
  FileStore store(path_);
  attributes_ = save_attributes(store, zarr_format_, edit, durable);
  return attributes_;
}

void Group::set_attributes(const nlohmann::json& attributes, bool durable) {
  if (!attributes.is_object())
    throw Error(ErrorKind::invalid_argument, fmt::format("{}: attributes must be a JSON object", path_.string()));
  FileStore store(path_);
  attributes_ = save_attributes(store, zarr_format_, [&](nlohmann::json& stored) { stored = attributes; }, durable);
}

}  // namespace zarrdirect

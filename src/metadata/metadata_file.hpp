// Reading one metadata document (zarr.json, .zarray, .zattrs, .zgroup, .zmetadata) from a store.
//
// Every metadata read goes through here: the store opens the file beneath its folder
// (openat2 RESOLVE_BENEATH: no link out of it), refuses anything but a regular file (a FIFO
// would block, a device never ends) and checks the file's size against kMaxMetadataBytes before
// reading or allocating; the text is then parsed by parse_json_document.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "metadata/json_document.hpp"
#include "store/file_store.hpp"
#include "zarrdirect/metadata.hpp"

namespace zarrdirect {

// The bare NaN / Infinity tokens a metadata file may hold, from its name: zarr-python writes them
// in attributes only (all of .zattrs; the attributes inside zarr.json and .zmetadata).
NonFiniteTokens non_finite_tokens_for(const std::string& key);

// The parsed document at `key`, nullopt when there is no such file. Errors as FileStore::read and
// parse_json_document; they name the file. Thread-safe.
std::optional<nlohmann::json> read_metadata_document(const Store& store, const std::string& key);

// read_array_metadata (zarrdirect/metadata.hpp) from a store already open at `path`.
ArrayMetadata read_array_metadata(const Store& store, const std::filesystem::path& path);

}  // namespace zarrdirect

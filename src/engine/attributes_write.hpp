// Saving a node's user attributes: Array::update_attributes and Group::update_attributes.
#pragma once

#include <filesystem>
#include <functional>

#include <nlohmann/json.hpp>

#include "store/file_store.hpp"

namespace zarrdirect {

// Changes the attributes of the node (array or group) in `store` and saves them atomically:
// under the lock on the metadata file it reads the attributes stored now (v3: "attributes" of
// zarr.json; v2: .zattrs, {} when missing), lets `edit` change them, and writes the file anew
// (v3: the whole zarr.json, every other member kept as stored; v2: .zattrs). Returns the
// attributes saved. Errors: io when a v3 node has no zarr.json; invalid_metadata naming
// the file when it is not a JSON object (or its "attributes" is not one); invalid_argument when
// `edit` leaves something other than an object; io when writing fails (the file is unchanged).
// What `edit` throws propagates, nothing written.
nlohmann::json save_attributes(const FileStore& store, int zarr_format,
                               const std::function<void(nlohmann::json&)>& edit, bool durable);

// The `edit` of update_attributes(): sets each member of `set` (an object), then removes each key
// of `remove` (one that is not there is no error). Error(invalid_argument) when `set` is not an
// object.
std::function<void(nlohmann::json&)> patch_attributes(const nlohmann::json& set,
                                                      const std::vector<std::string>& remove);

}  // namespace zarrdirect

// The chunk keys an array's folder holds, found as a read would find them: the folder is listed
// (through the store, which never leaves the array folder), each name is decoded as a chunk key of
// the array's encoding and grid, and only a name that encodes back to itself counts ("c/01/2",
// "c/0/9" beyond the grid, ".zattrs" or "notes.txt" are not chunks). Shared by
// Array::storage_summary and Array::resize.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "store/store.hpp"
#include "zarrdirect/metadata.hpp"

namespace zarrdirect {

// Calls `visit` with the grid coordinates of each chunk (or shard) key listed under the array
// folder, in listing order; a 0-d array's single key is visited without listing. The key may be
// gone, or refused, when it is opened: callers open it as a read would. Error(io) when the folder
// cannot be listed.
void for_each_listed_chunk(const Store& store, const ArrayMetadata& metadata,
                           const std::function<void(const std::vector<std::uint64_t>& coords)>& visit);

}  // namespace zarrdirect

// Opens what a command names: an array folder, a group, or a level of an OME-Zarr multiscale
// group. Only through the library's public calls: every metadata read goes through the store's
// checked path (links out of the folder refused, FIFOs and devices refused without blocking,
// documents over the size limit refused before they are read).
#pragma once

#include <optional>
#include <string>

#include "zarrdirect/array.hpp"
#include "zarrdirect/group.hpp"

namespace zarrdirect::cli {

// The node at `path`: exactly one of the two is set. Errors: the library's, for the kind of node
// the metadata says it is (a broken array's fault, not "not a group").
struct Node {
  std::optional<Array> array;
  std::optional<Group> group;
};
Node open_node(const std::string& path);

// The array a read or bench command works on. An OME-Zarr multiscale group needs `level`:
// without it, UsageError listing the levels (path and shape); a level it lacks, or a level
// asked of an array, is UsageError too. A plain group is Error(invalid_argument) naming members.
Array open_target(const std::string& path, std::optional<std::size_t> level);

}  // namespace zarrdirect::cli

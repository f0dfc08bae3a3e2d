// describe(): one JSON description of an array, the schema `zarrdirect info --json` prints and
// Python's Array.info returns.
//
//   {"path": "/data/v.zarr", "zarr_format": 3, "node_type": "array", "shape": [512, 512],
//    "dtype": "uint16", "chunks": [64, 64], "shards": null, "order": "C", "fill_value": 0,
//    "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, ...],
//    "dimension_names": ["y", "x"], "attributes": {...},
//    "chunks_stored": 60, "chunks_total": 64, "bytes_stored": 412345, "nbytes": 524288}
//
// chunks: the shape of the unit a codec chain decodes (for a sharded array, the inner chunk;
// shards is then the shard shape, else null), as zarr-python 3 reports them. order: "F" for a
// Zarr v2 array stored in Fortran order, else "C". codecs: the chain in v3 form (a v2
// compressor and filters become numcodecs.* entries), each {"name", "configuration"?}.
// dimension_names: null when the metadata gives none. chunks_stored, chunks_total and
// bytes_stored are Array::storage_summary() (chunk or shard files, as a read finds them);
// nbytes is the decoded size of the whole array.
#pragma once

#include <nlohmann/json.hpp>

#include "zarrdirect/array.hpp"

namespace zarrdirect {

// Lists the array's folder for the storage counts (see Array::storage_summary). Strings that
// came from the file system (the path) may hold bytes that are not UTF-8: dump the result with
// nlohmann::json::error_handler_t::replace. Error(io) when the folder cannot be listed. Safe
// from any thread.
nlohmann::json describe(const Array& array);
// The same with the storage counts given (from array.storage_summary()), for a caller that also
// shows the summary's other fields and would otherwise list the folder twice. Lists nothing.
nlohmann::json describe(const Array& array, const StorageSummary& stored);

}  // namespace zarrdirect

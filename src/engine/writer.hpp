// The write engine: plans the chunks (or shards) a region touches with the reader's chunk grid
// (chunk_grid.hpp) and runs them through the worker pool: gather from the source, merge with the
// stored chunk when only part of it is written, encode, store atomically.
#pragma once

#include "engine/array_state.hpp"
#include "engine/chunk_source.hpp"

namespace zarrdirect {

// Writes `source` into `region` (already resolved against the shape) of `array`.
// Errors name the region and the chunk or shard that did not land.
WriteStats run_write(const Array::Impl& array, const Region& region, ChunkSource& source, const WriteSettings& options,
                     const Settings& settings);

}  // namespace zarrdirect

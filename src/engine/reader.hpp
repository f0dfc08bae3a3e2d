// The read engine: plans the chunks a region touches and runs them through a pool of threads.
#pragma once

#include "engine/array_state.hpp"
#include "engine/chunk_sink.hpp"

namespace zarrdirect {

// Reads `region` (already resolved against the shape) of `array` into `sink`.
ReadStats run_read(const Array::Impl& array, const Region& region, ChunkSink& sink, const Settings& settings);

// The cells a selection read needs (engine/selection_read.cpp): of the chunk grid (shards, for a
// sharded array) and, for sharded arrays, of the inner chunk grid. Cells of `region` not picked
// are neither read nor placed.
struct ReadPicks {
  CellPicks chunks;
  CellPicks inner;
};
ReadStats run_read(const Array::Impl& array, const Region& region, ChunkSink& sink, const Settings& settings,
                   const ReadPicks* picks);

}  // namespace zarrdirect

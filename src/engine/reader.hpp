// The read engine: plans the chunks a region touches and runs them through a pool of threads.
#pragma once

#include "engine/array_state.hpp"
#include "engine/chunk_sink.hpp"

namespace zarrdirect {

// Reads `region` (already resolved against the shape) of `array` into `sink`.
ReadStats run_read(const Array::Impl& array, const Region& region, ChunkSink& sink, const Settings& settings);

}  // namespace zarrdirect

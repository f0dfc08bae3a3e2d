// The batch reader behind Array::read_many and cached reads: many regions planned as one.
#pragma once

#include <vector>

#include "engine/array_state.hpp"
#include "engine/device_placer.hpp"
#include "engine/layout.hpp"

namespace zarrdirect {

// Reads each of `regions` (resolved against the shape, none empty) into the host destination of
// the same index. Every chunk (inner chunk, for a sharded array) any region needs is fetched and
// decoded once (or taken from the handle's cache when it is on) and placed into each region
// that needs it. Stats: chunks_total and chunks_missing count distinct chunks, bytes_out is 0.
// The plan holds 24 + 8 * rank bytes per (chunk, region) pair.
//
// With `placer`, the destinations are in device memory (device_placer.hpp) and every chunk goes
// through it: the part of it the batch needs is staged once and placed on the device into every
// region, chunks of the handle's device cache are placed from GPU memory, and the placer is
// finished before this returns. `destinations` then describe the device memory itself.
ReadStats run_read_many(const Array::Impl& array, const std::vector<Region>& regions,
                        const std::vector<DestinationLayout>& destinations, const Settings& settings,
                        DevicePlacer* placer = nullptr);

}  // namespace zarrdirect

namespace zarrdirect {

// Drops, when it goes out of scope, the cached chunks that a write of `region` (resolved) touches
// (the whole cache if naming them fails). Put one before a write through the handle: chunks done
// before a failure are new as well.
class CacheInvalidation {
 public:
  CacheInvalidation(const Array::Impl& array, const Region& region) : array_(array), region_(region) {}
  ~CacheInvalidation();
  CacheInvalidation(const CacheInvalidation&) = delete;
  CacheInvalidation& operator=(const CacheInvalidation&) = delete;

 private:
  const Array::Impl& array_;
  const Region& region_;
};

}  // namespace zarrdirect

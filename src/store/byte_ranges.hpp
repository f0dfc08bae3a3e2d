// Merging nearby byte ranges of one object into one request (remote stores: a request costs a
// round trip, a few hundred KiB of unused bytes cost less).
#pragma once

#include <cstdint>

namespace zarrdirect {

// Gap between two ranges of one shard up to which a remote read fetches both with one request
// (zarr-python's obstore store and tensorstore use similar bounds).
inline constexpr std::uint64_t kRemoteMergeGap = std::uint64_t{1} << 20;

// Whether a range starting at `next_offset` joins a run of reads ending at `run_end` (exclusive):
// it starts at or after the end, at most `max_gap` bytes later. Overlapping ranges never join.
constexpr bool joins_run(std::uint64_t run_end, std::uint64_t next_offset, std::uint64_t max_gap) {
  return next_offset >= run_end && next_offset - run_end <= max_gap;
}

}  // namespace zarrdirect

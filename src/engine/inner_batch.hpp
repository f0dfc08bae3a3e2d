// How many of a wave's inner chunks (sorted by shard and offset) one task of the sharded reader
// takes. Neighbours within a task share one read of the shard, so larger tasks mean fewer,
// larger reads; smaller ones spread a small region over every worker.
//
//   remote store       up to 64: each read is a round trip, worth merging even across gaps
//   raw inner chunks   up to kRawRunBytes of them (at least 8): nothing to decode, so the
//                      read itself is the work, and one pread per few MiB runs at the bus's speed
//   compressed         up to 8: decoding dominates, and small tasks balance it across workers
#pragma once

#include <cstdint>

namespace zarrdirect {

// Bytes of raw inner chunks one task reads at most (before the memory limit's own bound).
inline constexpr std::uint64_t kRawRunBytes = std::uint64_t{4} << 20;

// `reads`: the wave's inner chunks to fetch; `inner_bytes`: one decoded inner chunk. At least 1.
std::uint64_t inner_chunks_per_task(std::uint64_t reads, unsigned workers, bool remote, bool raw,
                                    std::uint64_t inner_bytes);

}  // namespace zarrdirect

#include "engine/inner_batch.hpp"

#include <algorithm>

namespace zarrdirect {

std::uint64_t inner_chunks_per_task(std::uint64_t reads, unsigned workers, bool remote, bool raw,
                                    std::uint64_t inner_bytes) {
  const std::uint64_t threads = std::max(workers, 1u);
  if (remote) return std::clamp<std::uint64_t>(reads / threads, 1, 64);
  std::uint64_t most = 8;
  if (raw) most = std::max<std::uint64_t>(most, kRawRunBytes / std::max<std::uint64_t>(inner_bytes, 1));
  // Four tasks per worker at least, so that a worker finishing early finds more to take.
  return std::clamp<std::uint64_t>(reads / (threads * 4), 1, most);
}

}  // namespace zarrdirect

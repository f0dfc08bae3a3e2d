#include "codec/shard_update.hpp"

#include <algorithm>
#include <span>

#include <fmt/format.h>

#include "zarrdirect/error.hpp"

namespace zarrdirect::codec {
namespace {

constexpr std::uint64_t kMissing = ~std::uint64_t{0};

// Where a shard's inner chunks may start: after an index at the start.
std::uint64_t first_body_byte(const ShardingCodec& sharding) {
  return sharding.index_location() == IndexLocation::start ? sharding.index_nbytes() : 0;
}

}  // namespace

ShardUpdate::ShardUpdate(const ShardingCodec& sharding) : sharding_(&sharding) { start_new(); }

void ShardUpdate::start_new() {
  entries_.assign(static_cast<std::size_t>(sharding_->inner_chunk_count()) * 2, kMissing);
  to_copy_.clear();
  kept_runs_.clear();
  updating_ = planned_ = compacts_ = false;
  kept_prefix_ = garbage_ = 0;
  body_start_ = first_body_byte(*sharding_);
}

void ShardUpdate::start_from(const ShardIndex& stored) {
  start_new();
  if (stored.first() != 0 || stored.size() != sharding_->inner_chunk_count())
    throw Error(ErrorKind::invalid_argument,
                fmt::format("sharding_indexed: an update needs the whole stored index ({} entries), got entries "
                            "[{}, {})",
                            sharding_->inner_chunk_count(), stored.first(), stored.first() + stored.size()));
  for (std::uint64_t i = 0; i < sharding_->inner_chunk_count(); ++i) {
    const ShardIndexEntry entry = stored[i];
    if (entry.missing()) continue;
    entries_[2 * i] = entry.offset;
    entries_[2 * i + 1] = entry.nbytes;
  }
  updating_ = true;
}

namespace {

void check_inner(const ShardingCodec& sharding, std::uint64_t inner, const char* call) {
  if (inner >= sharding.inner_chunk_count())
    throw Error(ErrorKind::invalid_argument, fmt::format("sharding_indexed: {} of inner chunk {}, the shard has {}",
                                                         call, inner, sharding.inner_chunk_count()));
}

}  // namespace

void ShardUpdate::replace(std::uint64_t inner) {
  check_inner(*sharding_, inner, "replace");
  if (planned_) throw Error(ErrorKind::invalid_argument, "sharding_indexed: replace() after plan()");
  entries_[2 * inner] = entries_[2 * inner + 1] = kMissing;
}

void ShardUpdate::plan(double max_garbage, std::uint64_t join_gap) {
  if (!(max_garbage >= 0.0 && max_garbage <= 1.0))
    throw Error(ErrorKind::invalid_argument,
                fmt::format("sharding_indexed: the garbage fraction must be in [0, 1], not {}", max_garbage));
  planned_ = true;
  if (!updating_) return;
  const std::uint64_t start = first_body_byte(*sharding_);
  std::uint64_t prefix = 0, live = 0;
  bool any = false;
  for (std::size_t i = 0; i < entries_.size(); i += 2) {
    if (entries_[i] == kMissing) continue;
    any = true;
    if (entries_[i + 1] == 0) {
      entries_[i] = start;  // an empty inner chunk needs no bytes: any offset inside the file
      continue;
    }
    // Checked entries (decode_index): neither sum overflows, each ends inside the stored shard.
    prefix = std::max(prefix, entries_[i] + entries_[i + 1]);
    live += entries_[i + 1];
  }
  if (!any) return;  // nothing kept: written as a new shard
  // An index at the start is copied with the prefix and then written over.
  prefix = std::max(prefix, start);
  // Entries of a foreign shard may share bytes, so live bytes can exceed the span.
  const std::uint64_t garbage = prefix - start > live ? prefix - start - live : 0;
  if (static_cast<double>(garbage) > max_garbage * static_cast<double>(prefix - start)) {
    compacts_ = true;
    for (std::uint64_t i = 0; i < sharding_->inner_chunk_count(); ++i) {
      if (entries_[2 * i] == kMissing) continue;
      to_copy_.push_back({i, entries_[2 * i], entries_[2 * i + 1]});
      entries_[2 * i] = entries_[2 * i + 1] = kMissing;
    }
    return;
  }
  kept_prefix_ = prefix;
  garbage_ = garbage;
  body_start_ = prefix;
  for (std::size_t i = 0; i < entries_.size(); i += 2)
    if (entries_[i] != kMissing && entries_[i + 1] > 0) kept_runs_.push_back({entries_[i], entries_[i + 1]});
  std::sort(kept_runs_.begin(), kept_runs_.end(), [](const Run& a, const Run& b) { return a.offset < b.offset; });
  std::size_t joined = 0;
  for (const Run& run : kept_runs_) {
    if (joined > 0) {
      Run& last = kept_runs_[joined - 1];
      const std::uint64_t last_end = last.offset + last.nbytes;
      // Overlapping (entries of a foreign shard may share bytes), touching or close: one run.
      if (run.offset <= last_end || run.offset - last_end < join_gap) {
        last.nbytes = std::max(last_end, run.offset + run.nbytes) - last.offset;
        continue;
      }
    }
    kept_runs_[joined++] = run;
  }
  kept_runs_.resize(joined);
}

void ShardUpdate::place(std::uint64_t inner, std::uint64_t offset, std::uint64_t nbytes) {
  check_inner(*sharding_, inner, "place");
  if (offset == kMissing || nbytes == kMissing)
    throw Error(ErrorKind::invalid_argument,
                fmt::format("sharding_indexed: inner chunk {} placed at offset {} with {} bytes: not an entry", inner,
                            offset, nbytes));
  entries_[2 * inner] = offset;
  entries_[2 * inner + 1] = nbytes;
}

bool ShardUpdate::empty() const {
  for (std::size_t i = 0; i < entries_.size(); i += 2)
    if (entries_[i] != kMissing) return false;
  return true;
}

std::uint64_t ShardUpdate::index_offset(std::uint64_t body_end) const {
  return sharding_->index_location() == IndexLocation::start ? 0 : body_end;
}

ByteBuffer ShardUpdate::encode_index() const {
  return sharding_->index_chain().encode(std::as_bytes(std::span(entries_)));
}

}  // namespace zarrdirect::codec

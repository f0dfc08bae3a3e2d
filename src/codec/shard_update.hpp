// The layout of a shard being written: where its inner chunks go in the new shard file and the
// index that points at them. Pure bookkeeping on offsets; the engine does the file I/O.
//
// A shard written from nothing (new, or covered whole by a write) gets its inner chunks one
// after another from the start of the body, then its index (at the start or the end).
//
// A shard covered in part is updated. Rewriting it whole would copy every untouched inner chunk
// one by one to new offsets; instead the update keeps the stored shard's layout up to the end of
// its last kept inner chunk (kept_prefix()): the runs of kept bytes (kept_runs()) are copied file
// to file to the same offsets (a few large kernel-side copies, reflinks where the filesystem has
// them), so untouched inner chunks keep their index entries; the new inner chunks are appended
// after the prefix and a new index written (at the start, over the old one, or after the new
// chunks). Where replaced inner chunks (or bytes no entry pointed at) were, the new file has a
// hole (read as zeros, no space taken where the filesystem has sparse files), or, between kept
// chunks closer than the join gap, their old bytes: unreferenced either way. The
// sharding spec allows bytes no entry points at, and zarr-python, tensorstore and zarrdirect
// read such shards (an entry is just an offset and a length).
//
// So that shards do not grow without bound, an update compacts instead (the shard is written
// anew: new inner chunks, then every kept one copied entry by entry) when the unreferenced bytes
// of the prefix would exceed a fraction (one half by default) of its inner chunk bytes (the
// prefix less an index at the start). The new file adds the new chunks and the index to the
// prefix, so after an appending update at most that fraction of a shard's body is unreferenced:
// the body is at most twice the kept chunks' bytes plus the new ones.
#pragma once

#include <cstdint>
#include <vector>

#include "codec/sharding.hpp"

namespace zarrdirect::codec {

class ShardUpdate {
 public:
  // The fraction of the kept prefix's inner chunk bytes allowed to be unreferenced before an
  // update compacts.
  static constexpr double kDefaultMaxGarbage = 0.5;
  // Kept inner chunks closer than this are copied as one run (the bytes between them too): one
  // copy instead of two, rather than a small hole.
  static constexpr std::uint64_t kDefaultJoinGap = std::uint64_t{64} << 10;

  // Bytes [offset, offset + nbytes) of the stored shard, copied to the same offsets.
  struct Run {
    std::uint64_t offset = 0;
    std::uint64_t nbytes = 0;
  };

  // An inner chunk of the stored shard to copy entry by entry (when compacting).
  struct Kept {
    std::uint64_t inner = 0;   // C-order linear index in the shard
    std::uint64_t offset = 0;  // in the stored shard
    std::uint64_t nbytes = 0;
  };

  // `sharding` must outlive the update. Starts as start_new().
  explicit ShardUpdate(const ShardingCodec& sharding);

  // Begins a shard written from nothing: every inner chunk missing until placed.
  void start_new();

  // Begins an update of a stored shard whose whole index `stored` was decoded (and so checked
  // against the stored shard's size) by the sharding codec: its inner chunks are kept unless
  // replaced. Error(invalid_argument) for a part of an index.
  void start_from(const ShardIndex& stored);

  // Marks inner chunk `inner` (C-order linear index, below the shard's inner chunk count) as
  // rewritten: missing until placed, its stored bytes (if any) no longer referenced. Call for
  // every inner chunk the write touches, before plan().
  void replace(std::uint64_t inner);

  // Chooses the layout of the new file: appending after the stored prefix, unless its
  // unreferenced bytes would exceed `max_garbage` (a fraction in [0, 1]) of it, or nothing is
  // kept; then the shard is written anew. Kept runs closer than `join_gap` bytes are joined.
  // Call once, after the replace() calls.
  void plan(double max_garbage = kDefaultMaxGarbage, std::uint64_t join_gap = kDefaultJoinGap);

  // True when plan() chose to write the shard anew although stored inner chunks are kept.
  bool compacts() const { return compacts_; }
  // The end of the last kept inner chunk of the stored shard when appending (0: nothing kept at
  // its offsets). The new file's layout up to there is the stored shard's.
  std::uint64_t kept_prefix() const { return kept_prefix_; }
  // The bytes of the stored shard to copy to the same offsets of the new file before anything
  // else is written: the kept inner chunks, sorted, in disjoint runs within [0, kept_prefix()).
  const std::vector<Run>& kept_runs() const { return kept_runs_; }
  // Unreferenced bytes in the kept prefix (the replaced inner chunks' stored bytes, and any the
  // stored shard had already); 0 when nothing is copied as a prefix.
  std::uint64_t garbage() const { return garbage_; }
  // Offset in the new file where the first new inner chunk goes.
  std::uint64_t body_start() const { return body_start_; }
  // The kept inner chunks the engine copies one by one after the new ones (when writing anew);
  // each then placed. Empty when appending.
  const std::vector<Kept>& to_copy() const { return to_copy_; }

  // Records inner chunk `inner` as `nbytes` bytes at `offset` of the new file. Calls for
  // distinct inner chunks may run on several threads at once.
  void place(std::uint64_t inner, std::uint64_t offset, std::uint64_t nbytes);

  // True when no inner chunk is present in the new shard (it is removed rather than written).
  bool empty() const;
  // Where the index goes in a new file whose inner chunks end at `body_end`.
  std::uint64_t index_offset(std::uint64_t body_end) const;
  // The new index, encoded by the sharding codec's index chain (checksum included).
  ByteBuffer encode_index() const;

 private:
  const ShardingCodec* sharding_;
  std::vector<std::uint64_t> entries_;  // (offset, nbytes) per inner chunk; all ones: missing
  std::vector<Kept> to_copy_;
  std::vector<Run> kept_runs_;
  bool updating_ = false;
  bool planned_ = false;
  bool compacts_ = false;
  std::uint64_t kept_prefix_ = 0;
  std::uint64_t garbage_ = 0;
  std::uint64_t body_start_ = 0;
};

}  // namespace zarrdirect::codec

// Building the descriptor table of a batch: many chunks packed into one staging buffer, uploaded
// with one copy and placed by one kernel launch (batch_kernels.cuh), missing chunks filled by the
// same launch.
//
// Layout of a batch's staging (host and device copies alike):
//   [chunk 0][chunk 1]...[chunk n-1][table: one BatchEntry per box]
// Each chunk starts on a page (O_DIRECT reads land in it); the table follows the last chunk,
// aligned for BatchEntry, so the chunks and the table go to the device in one transfer.
//
// Pure host C++ (no CUDA): the arithmetic is tested without a GPU, and place_batch_on_host()
// applies a table the way the kernel does, as the reference the kernel is checked against.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "cuda/batch_entry.hpp"
#include "cuda/copy_plan_types.hpp"
#include "util/geometry.hpp"

namespace zarrdirect::cuda {

// Entries one launch takes at most (the kernel's grid has one row of blocks per entry).
inline constexpr std::size_t kMaxBatchEntries = 65535;

class BatchTable {
 public:
  // A batch whose staging holds `capacity` bytes, chunks and table together.
  explicit BatchTable(std::size_t capacity);

  // Room for a chunk of `nbytes` (rounded up to a page) and `entries` entries: the chunk's offset
  // in the staging, or nothing when the batch has no room left for it (an empty batch: the chunk
  // is larger than the staging, and must be placed alone). `nbytes` 0 reserves entries only (for
  // add_copy_absolute). Every reserved entry is expected to be used by add_copy() or
  // add_copy_absolute(), or its room stays unused.
  std::optional<std::size_t> reserve(std::size_t nbytes, std::size_t entries = 1);

  // An entry copying `box` from the C-order chunk reserved at `chunk_offset` into `dest`. The
  // reservation holds `chunk_bytes` bytes of the chunk starting at its byte `chunk_first_byte`
  // (all of it by default; a part when only that part is staged). False when the planner leaves
  // the box with more than kBatchMaxRank dims or 2^31 units or more: the caller places it alone
  // (its bytes are still uploaded with the batch). Throws Error(invalid_argument) when the box
  // needs bytes outside the part held.
  bool add_copy(std::size_t chunk_offset, std::size_t chunk_bytes, const ChunkBox& box, const DestinationLayout& dest,
                std::size_t chunk_first_byte = 0);

  // The same from a whole C-order chunk of `chunk_bytes` already in device memory at `chunk`
  // (the device cache): the entry names that address instead of an offset into the staging.
  bool add_copy_absolute(const std::byte* chunk, std::size_t chunk_bytes, const ChunkBox& box,
                         const DestinationLayout& dest);

  enum class Added { yes, full, alone };
  // An entry writing `fill` (one element) over `box`: yes; full when the table has no room (flush
  // and try again); alone when the fill is larger than a batch's staging or does not fit an
  // entry, and is better written by itself.
  Added add_fill(const ChunkBox& box, const DestinationLayout& dest, std::span<const std::byte> fill);

  bool empty() const { return entries_.empty() && data_end_ == 0; }
  std::span<const BatchEntry> entries() const { return entries_; }
  // Where the table goes in the staging, and the bytes to upload (chunks and table).
  std::size_t table_offset() const;
  std::size_t upload_bytes() const { return table_offset() + entries_.size() * sizeof(BatchEntry); }
  // The most units of any entry: sizes the kernel's grid.
  std::uint32_t max_units() const { return max_units_; }
  std::size_t capacity() const { return capacity_; }

  // Writes the table into `staging` (at least upload_bytes()) at table_offset().
  void write_table(std::span<std::byte> staging) const;
  // Starts the next batch.
  void clear();

 private:
  bool room_for(std::size_t data_end, std::size_t entries) const;
  void add_entry(const BatchEntry& entry);

  std::size_t capacity_;
  std::size_t data_end_ = 0;  // end of the last chunk reserved
  std::size_t pending_ = 0;   // reservations whose entry is not added yet
  std::uint32_t max_units_ = 0;
  std::vector<BatchEntry> entries_;
};

// The entry (count, unit, rank, extents and strides; offsets left 0) for a plan, when it fits
// one: at most kBatchMaxRank dims and fewer than 2^31 units (the kernel's 32-bit unit index plus
// its grid stride stays below 2^32).
std::optional<BatchEntry> batch_entry_of(const CopyPlan& plan);

// Applies `entries` on the host: what the batch kernel does on the device, with destination
// addresses in host memory and `staging` the batch's staging.
void place_batch_on_host(std::span<const BatchEntry> entries, const std::byte* staging);

}  // namespace zarrdirect::cuda

#include "cuda/batch_table.hpp"

#include <algorithm>
#include <array>
#include <cstring>

#include <fmt/format.h>

#include "cuda/copy_plan.hpp"
#include "zarrdirect/error.hpp"

namespace zarrdirect::cuda {
namespace {

constexpr std::size_t kPage = 4096;
std::size_t round_to_page(std::size_t n) { return (std::max<std::size_t>(n, 1) + kPage - 1) / kPage * kPage; }
std::size_t round_to_entry(std::size_t n) { return (n + alignof(BatchEntry) - 1) / alignof(BatchEntry) * alignof(BatchEntry); }

std::uintptr_t address(const void* p) { return reinterpret_cast<std::uintptr_t>(p); }


template <typename Unit, int R>
void place_entry(const BatchEntry& entry, const std::byte* staging) {
  auto* dst = reinterpret_cast<std::byte*>(static_cast<std::uintptr_t>(entry.dst));
  const std::byte* src = entry.src_absolute ? reinterpret_cast<const std::byte*>(static_cast<std::uintptr_t>(entry.src_offset))
                                            : staging + entry.src_offset;
  for (std::uint32_t i = 0; i < entry.count; ++i) {
    std::int64_t s = 0;
    std::int64_t d = 0;
    batch_unit_offsets<R>(entry, i, s, d);
    // memcpy: the host destination carries no alignment guarantee the compiler could rely on.
    std::memcpy(dst + d * static_cast<std::int64_t>(sizeof(Unit)),
                entry.fill ? static_cast<const void*>(entry.value) : src + s * static_cast<std::int64_t>(sizeof(Unit)),
                sizeof(Unit));
  }
}

template <typename Unit>
void place_rank(const BatchEntry& entry, const std::byte* staging) {
  switch (entry.rank) {
    case 1: place_entry<Unit, 1>(entry, staging); break;
    case 2: place_entry<Unit, 2>(entry, staging); break;
    case 3: place_entry<Unit, 3>(entry, staging); break;
    case 4: place_entry<Unit, 4>(entry, staging); break;
    default: throw Error(ErrorKind::invalid_argument, fmt::format("batch entry: rank {}", entry.rank));
  }
}

struct Unit16 {
  unsigned char bytes[16];
};

}  // namespace

std::optional<BatchEntry> batch_entry_of(const CopyPlan& plan) {
  if (plan.rank < 1 || plan.rank > kBatchMaxRank || plan.count >= (std::uint64_t{1} << 31)) return std::nullopt;
  BatchEntry entry;
  entry.count = static_cast<std::uint32_t>(plan.count);
  entry.unit = static_cast<std::uint8_t>(plan.unit);
  entry.rank = static_cast<std::uint8_t>(plan.rank);
  for (int k = 0; k < plan.rank; ++k) {
    entry.extent[k] = static_cast<std::uint32_t>(plan.dims.extent[k]);
    entry.src_stride[k] = plan.dims.src_stride[k];
    entry.dst_stride[k] = plan.dims.dst_stride[k];
  }
  return entry;
}

BatchTable::BatchTable(std::size_t capacity) : capacity_(capacity) {}

bool BatchTable::room_for(std::size_t data_end, std::size_t entries) const {
  return entries <= kMaxBatchEntries && round_to_entry(data_end) + entries * sizeof(BatchEntry) <= capacity_;
}

std::size_t BatchTable::table_offset() const { return round_to_entry(data_end_); }

std::optional<std::size_t> BatchTable::reserve(std::size_t nbytes, std::size_t entries) {
  const std::size_t offset = data_end_;
  const std::size_t end = nbytes == 0 ? offset : offset + round_to_page(nbytes);
  const std::size_t wanted = entries_.size() + pending_ + entries;
  if (end < offset || wanted < entries || !room_for(end, wanted)) return std::nullopt;
  data_end_ = end;
  pending_ += entries;
  return offset;
}

void BatchTable::add_entry(const BatchEntry& entry) {
  entries_.push_back(entry);
  max_units_ = std::max(max_units_, entry.count);
}

bool BatchTable::add_copy(std::size_t chunk_offset, std::size_t chunk_bytes, const ChunkBox& box,
                          const DestinationLayout& dest, std::size_t chunk_first_byte) {
  if (pending_ > 0) --pending_;
  if (box.num_elements() == 0) return true;
  const ChunkRange range = chunk_range(box, dest.element_size);
  if (range.first_byte < chunk_first_byte || range.first_byte - chunk_first_byte + range.nbytes > chunk_bytes ||
      chunk_offset + chunk_bytes > data_end_ || chunk_offset + chunk_bytes < chunk_offset)
    throw Error(ErrorKind::invalid_argument,
                fmt::format("batch: box needs chunk bytes [{}, {}), the staging at offset {} holds [{}, {}) of a {} "
                            "byte batch",
                            range.first_byte, range.first_byte + range.nbytes, chunk_offset, chunk_first_byte,
                            chunk_first_byte + chunk_bytes, data_end_));
  const std::size_t src_offset = chunk_offset + (range.first_byte - chunk_first_byte);
  const std::byte* dst = dest.address_of(box.offset_in_dest);
  // The staging (pinned on the host, cudaMalloc'ed on the device) starts page-aligned, so the
  // offset stands for the source origin's alignment.
  const BoxPlan plan = plan_box_copy(box, dest, src_offset, address(dst));
  auto entry = batch_entry_of(plan.plan);
  if (!entry) return false;
  entry->src_offset = src_offset;
  entry->dst = address(dst);
  add_entry(*entry);
  return true;
}

bool BatchTable::add_copy_absolute(const std::byte* chunk, std::size_t chunk_bytes, const ChunkBox& box,
                                   const DestinationLayout& dest) {
  if (pending_ > 0) --pending_;
  if (box.num_elements() == 0) return true;
  const ChunkRange range = chunk_range(box, dest.element_size);
  if (range.first_byte + range.nbytes > chunk_bytes)
    throw Error(ErrorKind::invalid_argument,
                fmt::format("batch: box needs {} chunk bytes, the cached chunk holds {}", range.first_byte + range.nbytes,
                            chunk_bytes));
  const std::uintptr_t source = address(chunk) + range.first_byte;
  const std::byte* dst = dest.address_of(box.offset_in_dest);
  const BoxPlan plan = plan_box_copy(box, dest, source, address(dst));
  auto entry = batch_entry_of(plan.plan);
  if (!entry) return false;
  entry->src_offset = source;
  entry->src_absolute = 1;
  entry->dst = address(dst);
  add_entry(*entry);
  return true;
}

BatchTable::Added BatchTable::add_fill(const ChunkBox& box, const DestinationLayout& dest,
                                       std::span<const std::byte> fill) {
  if (box.num_elements() == 0) return Added::yes;
  if (box.num_elements() * dest.element_size > capacity_) return Added::alone;
  if (!room_for(data_end_, entries_.size() + pending_ + 1)) return Added::full;
  const std::byte* dst = dest.address_of(box.offset_in_dest);
  std::array<std::byte, 16> unit{};
  const BoxPlan plan = plan_box_fill(box, dest, fill, address(dst), unit);
  auto entry = batch_entry_of(plan.plan);
  if (!entry) return Added::alone;
  entry->fill = 1;
  entry->dst = address(dst);
  std::memcpy(entry->value, unit.data(), unit.size());
  add_entry(*entry);
  return Added::yes;
}

void BatchTable::write_table(std::span<std::byte> staging) const {
  if (staging.size() < upload_bytes())
    throw Error(ErrorKind::invalid_argument,
                fmt::format("batch: {} bytes of staging for a {} byte batch", staging.size(), upload_bytes()));
  if (!entries_.empty())
    std::memcpy(staging.data() + table_offset(), entries_.data(), entries_.size() * sizeof(BatchEntry));
}

void BatchTable::clear() {
  entries_.clear();
  data_end_ = 0;
  pending_ = 0;
  max_units_ = 0;
}

void place_batch_on_host(std::span<const BatchEntry> entries, const std::byte* staging) {
  for (const BatchEntry& entry : entries) {
    switch (entry.unit) {
      case 1: place_rank<std::uint8_t>(entry, staging); break;
      case 2: place_rank<std::uint16_t>(entry, staging); break;
      case 4: place_rank<std::uint32_t>(entry, staging); break;
      case 8: place_rank<std::uint64_t>(entry, staging); break;
      case 16: place_rank<Unit16>(entry, staging); break;
      default: throw Error(ErrorKind::invalid_argument, fmt::format("batch entry: unit of {} bytes", entry.unit));
    }
  }
}

}  // namespace zarrdirect::cuda

// The batch descriptor table, without a GPU: the builder's offsets, boxes, strides and batch
// boundaries, and a reader run through a sink that batches like the device sink and applies each
// table on the host (place_batch_on_host, the kernel's reference), against the ordinary host read.
#include "cuda/batch_table.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>

#include "cuda/batch_test_arrays.hpp"
#include "engine/array_state.hpp"
#include "engine/chunk_sink.hpp"
#include "engine/reader.hpp"
#include "test_support.hpp"
#include "zarrdirect/error.hpp"

namespace zarrdirect::cuda {
namespace {

constexpr std::size_t kEntry = sizeof(BatchEntry);

// A fake destination base: the builder only computes addresses, never dereferences them.
std::byte* const kBase = reinterpret_cast<std::byte*>(std::uintptr_t{1} << 20);

DestinationLayout c_order(std::vector<std::uint64_t> shape, std::size_t element_size) {
  return DestinationLayout::contiguous(kBase, shape, element_size);
}

TEST(BatchTable, ReservesPageAlignedChunksAndPutsTheTableAfterThem) {
  BatchTable table(1 << 20);
  EXPECT_TRUE(table.empty());
  EXPECT_EQ(table.reserve(5000), std::optional<std::size_t>(0));
  EXPECT_EQ(table.reserve(100), std::optional<std::size_t>(8192));
  EXPECT_EQ(table.reserve(4096), std::optional<std::size_t>(12288));
  EXPECT_FALSE(table.empty());
  EXPECT_EQ(table.table_offset(), 16384u);
  EXPECT_EQ(table.upload_bytes(), 16384u);  // no entries yet
  table.clear();
  EXPECT_TRUE(table.empty());
  EXPECT_EQ(table.reserve(1), std::optional<std::size_t>(0));
}

TEST(BatchTable, ABatchEndsWhereTheNextChunkOrItsEntryWouldNotFit) {
  // Room for three pages and three entries: the fourth chunk does not fit.
  BatchTable table(3 * 4096 + 3 * kEntry);
  for (std::size_t k = 0; k < 3; ++k) EXPECT_EQ(table.reserve(4096), std::optional<std::size_t>(k * 4096)) << k;
  EXPECT_FALSE(table.reserve(1).has_value());
  // One byte less: the third chunk's entry does not fit, so neither does the chunk.
  BatchTable tight(3 * 4096 + 3 * kEntry - 1);
  EXPECT_TRUE(tight.reserve(4096).has_value());
  EXPECT_TRUE(tight.reserve(4096).has_value());
  EXPECT_FALSE(tight.reserve(4096).has_value());
  // Fills take entry room only; a full table refuses them until cleared.
  BatchTable fills(2 * kEntry);
  const auto dest = c_order({8}, 1);
  const std::byte fill{3};
  const ChunkBox box = test::make_box({4}, {0}, {4}, {0});
  EXPECT_EQ(fills.add_fill(box, dest, {&fill, 1}), BatchTable::Added::yes);
  EXPECT_EQ(fills.add_fill(box, dest, {&fill, 1}), BatchTable::Added::yes);
  EXPECT_EQ(fills.add_fill(box, dest, {&fill, 1}), BatchTable::Added::full);
  EXPECT_EQ(fills.entries().size(), 2u);
}

TEST(BatchTable, AChunkLargerThanTheStagingIsRefusedEvenByAnEmptyBatch) {
  BatchTable table(64 << 10);
  EXPECT_FALSE(table.reserve(64 << 10).has_value());  // no room left for its entry
  EXPECT_FALSE(table.reserve(1 << 20).has_value());
  EXPECT_TRUE(table.empty());
  EXPECT_TRUE(table.reserve((64 << 10) - 4096).has_value());
  // A fill larger than the staging is written alone.
  const auto dest = c_order({1 << 20}, 1);
  const std::byte fill{0};
  EXPECT_EQ(table.add_fill(test::make_box({1 << 17}, {0}, {1 << 17}, {0}), dest, {&fill, 1}),
            BatchTable::Added::alone);
}

TEST(BatchTable, EntryOfAnInteriorChunkHasItsBoxAndStrides) {
  // A 4^3 uint16 chunk at (4, 4, 4) of a 10^3 C-order destination, staged at 8192.
  BatchTable table(1 << 20);
  ASSERT_EQ(table.reserve(4096), std::optional<std::size_t>(0));
  ASSERT_EQ(table.reserve(4 * 4 * 4 * 2), std::optional<std::size_t>(4096));
  const auto dest = c_order({10, 10, 10}, 2);
  ASSERT_TRUE(table.add_copy(4096, 128, test::make_box({4, 4, 4}, {0, 0, 0}, {4, 4, 4}, {4, 4, 4}), dest));
  ASSERT_EQ(table.entries().size(), 1u);
  const BatchEntry& e = table.entries()[0];
  EXPECT_EQ(e.fill, 0);
  EXPECT_EQ(e.src_offset, 4096u);
  EXPECT_EQ(e.dst, reinterpret_cast<std::uintptr_t>(kBase) + 2 * (4 * 100 + 4 * 10 + 4));
  // Rows of 8 bytes, 20 bytes apart in the destination: 4-byte units.
  EXPECT_EQ(e.unit, 4);
  EXPECT_EQ(e.rank, 3);
  EXPECT_EQ(e.count, 32u);
  EXPECT_EQ(e.extent[0], 4u);
  EXPECT_EQ(e.extent[1], 4u);
  EXPECT_EQ(e.extent[2], 2u);
  EXPECT_EQ(e.src_stride[0], 8);
  EXPECT_EQ(e.src_stride[1], 2);
  EXPECT_EQ(e.src_stride[2], 1);
  EXPECT_EQ(e.dst_stride[0], 50);
  EXPECT_EQ(e.dst_stride[1], 5);
  EXPECT_EQ(e.dst_stride[2], 1);
  EXPECT_EQ(table.max_units(), 32u);
  EXPECT_EQ(table.table_offset(), 8192u);
  EXPECT_EQ(table.upload_bytes(), 8192u + kEntry);
}

TEST(BatchTable, EntryOfAnEdgeBoxStartsAtItsFirstElement) {
  // The box [1, 3) x [2, 4) of a 4 x 4 uint8 chunk, into a 5 x 6 destination at (0, 0).
  BatchTable table(1 << 20);
  ASSERT_EQ(table.reserve(16), std::optional<std::size_t>(0));
  const auto dest = c_order({5, 6}, 1);
  ASSERT_TRUE(table.add_copy(0, 16, test::make_box({4, 4}, {1, 2}, {2, 2}, {0, 0}), dest));
  const BatchEntry& e = table.entries()[0];
  EXPECT_EQ(e.src_offset, 1u * 4 + 2);
  EXPECT_EQ(e.dst, reinterpret_cast<std::uintptr_t>(kBase));
  // A source origin of 6 and row strides of 4 and 6 bytes allow 2-byte units: a row is one unit.
  EXPECT_EQ(e.unit, 2);
  EXPECT_EQ(e.rank, 1);
  EXPECT_EQ(e.count, 2u);
  EXPECT_EQ(e.extent[0], 2u);
  EXPECT_EQ(e.src_stride[0], 2);
  EXPECT_EQ(e.dst_stride[0], 3);
  // A box past the chunk's bytes is an error, not an entry.
  EXPECT_THROW(table.add_copy(0, 8, test::make_box({4, 4}, {1, 2}, {2, 2}, {0, 0}), dest), Error);
}

TEST(BatchTable, AReservationHoldsRoomForTheEntriesItAnnounces) {
  // Two pages and four entries: a chunk for three regions fits once, not twice.
  BatchTable table(2 * 4096 + 4 * kEntry);
  EXPECT_EQ(table.reserve(4096, 3), std::optional<std::size_t>(0));
  EXPECT_FALSE(table.reserve(4096, 3).has_value());
  EXPECT_TRUE(table.reserve(4096, 1).has_value());
  // Entries only (a chunk already on the device): no staging bytes taken.
  BatchTable entries_only(4096 + 3 * kEntry);
  EXPECT_EQ(entries_only.reserve(0, 2), std::optional<std::size_t>(0));
  EXPECT_TRUE(entries_only.empty());  // no bytes, no entries yet
  EXPECT_EQ(entries_only.reserve(100), std::optional<std::size_t>(0));
  EXPECT_FALSE(entries_only.reserve(0, 1).has_value());
}

TEST(BatchTable, APartOfAChunkIsAddressedFromWhereThePartStarts) {
  // Bytes [32, 96) of a 4 x 4 x 8 uint8 chunk are staged at 4096: the box [1, 3) x [0, 4) x [2, 6)
  // starts 32 + 2 bytes into the chunk, 2 bytes into the part.
  BatchTable table(1 << 20);
  ASSERT_EQ(table.reserve(4096), std::optional<std::size_t>(0));
  ASSERT_EQ(table.reserve(64), std::optional<std::size_t>(4096));
  const auto dest = c_order({2, 4, 4}, 1);
  const ChunkBox box = test::make_box({4, 4, 8}, {1, 0, 2}, {2, 4, 4}, {0, 0, 0});
  ASSERT_TRUE(table.add_copy(4096, 64, box, dest, 32));
  EXPECT_EQ(table.entries()[0].src_offset, 4096u + 2);
  EXPECT_EQ(table.entries()[0].src_absolute, 0);
  // A part that starts after the box, or ends before its last byte, is an error.
  EXPECT_THROW(table.add_copy(4096, 64, box, dest, 40), Error);
  EXPECT_THROW(table.add_copy(4096, 60, box, dest, 32), Error);
  // Applied on the host: the part's bytes land where the whole chunk's would.
  std::vector<std::uint8_t> chunk(128);
  for (std::size_t i = 0; i < chunk.size(); ++i) chunk[i] = static_cast<std::uint8_t>(i);
  std::vector<std::byte> staging(8192);
  std::memcpy(staging.data() + 4096, chunk.data() + 32, 64);
  std::vector<std::uint8_t> out(32, 0);
  BatchTable real(1 << 20);
  ASSERT_TRUE(real.reserve(4096).has_value());
  ASSERT_TRUE(real.reserve(64).has_value());
  ASSERT_TRUE(real.add_copy(4096, 64, box, DestinationLayout::contiguous(reinterpret_cast<std::byte*>(out.data()),
                                                                          std::vector<std::uint64_t>{2, 4, 4}, 1),
                            32));
  place_batch_on_host(real.entries(), staging.data());
  for (std::uint64_t i = 0; i < 2; ++i)
    for (std::uint64_t j = 0; j < 4; ++j)
      for (std::uint64_t k = 0; k < 4; ++k)
        EXPECT_EQ(out[(i * 4 + j) * 4 + k], chunk[((i + 1) * 4 + j) * 8 + k + 2]) << i << j << k;
}

TEST(BatchTable, AnAbsoluteEntryReadsFromTheChunksOwnAddress) {
  // A chunk outside the staging (the device cache; host memory here) placed by the reference.
  std::vector<std::uint16_t> chunk(4 * 6);
  for (std::size_t i = 0; i < chunk.size(); ++i) chunk[i] = static_cast<std::uint16_t>(1000 + i);
  std::vector<std::uint16_t> out(3 * 3, 0);
  BatchTable table(1 << 16);
  ASSERT_TRUE(table.reserve(0, 1).has_value());
  const auto dest =
      DestinationLayout::contiguous(reinterpret_cast<std::byte*>(out.data()), std::vector<std::uint64_t>{3, 3}, 2);
  const ChunkBox box = test::make_box({4, 6}, {1, 2}, {3, 3}, {0, 0});
  const auto* base = reinterpret_cast<const std::byte*>(chunk.data());
  ASSERT_TRUE(table.add_copy_absolute(base, chunk.size() * 2, box, dest));
  EXPECT_EQ(table.entries()[0].src_absolute, 1);
  EXPECT_EQ(table.entries()[0].src_offset, reinterpret_cast<std::uintptr_t>(base) + 2 * (1 * 6 + 2));
  EXPECT_EQ(table.upload_bytes(), kEntry);  // nothing staged but the table
  place_batch_on_host(table.entries(), nullptr);
  for (std::size_t i = 0; i < 3; ++i)
    for (std::size_t j = 0; j < 3; ++j) EXPECT_EQ(out[i * 3 + j], chunk[(i + 1) * 6 + j + 2]);
  // A box past the chunk's end is an error.
  EXPECT_THROW(table.add_copy_absolute(base, 20, box, dest), Error);
}

TEST(BatchTable, FillEntryRepeatsTheFillValueInItsUnit) {
  BatchTable table(1 << 20);
  const auto dest = c_order({8, 8}, 2);
  const std::byte fill[2] = {std::byte{7}, std::byte{1}};
  ASSERT_EQ(table.add_fill(test::make_box({4, 8}, {0, 0}, {4, 8}, {4, 0}), dest, fill), BatchTable::Added::yes);
  const BatchEntry& e = table.entries()[0];
  EXPECT_EQ(e.fill, 1);
  EXPECT_EQ(e.rank, 1);  // four whole rows: one run
  EXPECT_EQ(e.unit, 16);
  EXPECT_EQ(e.count, 4u);
  for (int j = 0; j < 16; ++j) EXPECT_EQ(e.value[j], j % 2 == 0 ? 7 : 1) << j;
  EXPECT_EQ(e.dst, reinterpret_cast<std::uintptr_t>(kBase) + 2 * 32);
  EXPECT_EQ(table.upload_bytes(), kEntry);  // a table of fills alone
}

TEST(BatchTable, BoxesWithMoreDimsThanAnEntryAreLeftToTheCaller) {
  // A 2^5 chunk into a 3^5 destination: no dim merges, five dims after planning.
  BatchTable table(1 << 20);
  ASSERT_TRUE(table.reserve(32).has_value());
  const auto dest = c_order({3, 3, 3, 3, 3}, 1);
  EXPECT_FALSE(table.add_copy(0, 32, test::make_box({2, 2, 2, 2, 2}, {0, 0, 0, 0, 0}, {2, 2, 2, 2, 2}, {0, 0, 0, 0, 0}), dest));
  EXPECT_TRUE(table.entries().empty());
  // Its reservation is settled: the batch holds as many more chunks as before.
  EXPECT_EQ(table.reserve(32), std::optional<std::size_t>(4096));
}

TEST(BatchTable, HostPlacementWritesOnlyTheBoxes) {
  // Two chunks and a fill into a padded 2-d destination, applied on the host.
  std::vector<std::uint16_t> memory(6 * 9, 0xaaaa);  // 6 x 8 elements, rows 9 apart
  DestinationLayout dest;
  dest.data = reinterpret_cast<std::byte*>(memory.data());
  dest.rank = 2;
  dest.shape[0] = 6;
  dest.shape[1] = 8;
  dest.byte_strides[0] = 18;
  dest.byte_strides[1] = 2;
  dest.element_size = 2;
  std::vector<std::byte> staging(1 << 16);
  BatchTable table(staging.size());
  for (int c = 0; c < 2; ++c) {
    const std::size_t offset = *table.reserve(4 * 4 * 2);
    for (std::uint16_t k = 0; k < 16; ++k) {
      const std::uint16_t v = static_cast<std::uint16_t>(100 * (c + 1) + k);
      std::memcpy(staging.data() + offset + 2 * k, &v, 2);
    }
    // Chunk c: rows [0, 4) of the chunk into destination rows [0, 4), columns [4c, 4c + 4).
    ASSERT_TRUE(table.add_copy(offset, 32, test::make_box({4, 4}, {0, 0}, {4, 4}, {0, 4u * c}), dest));
  }
  const std::uint16_t fill = 0x0107;
  ASSERT_EQ(table.add_fill(test::make_box({2, 8}, {0, 0}, {2, 8}, {4, 0}), dest,
                           std::as_bytes(std::span<const std::uint16_t, 1>(&fill, 1))),
            BatchTable::Added::yes);
  table.write_table(staging);
  // The table as uploaded is the table as built.
  EXPECT_EQ(std::memcmp(staging.data() + table.table_offset(), table.entries().data(), 3 * kEntry), 0);
  place_batch_on_host(table.entries(), staging.data());
  for (std::size_t r = 0; r < 6; ++r) {
    for (std::size_t col = 0; col < 9; ++col) {
      std::uint16_t expected = 0xaaaa;
      if (col < 8 && r < 4) expected = static_cast<std::uint16_t>(100 * (col / 4 + 1) + r * 4 + col % 4);
      if (col < 8 && r >= 4) expected = fill;
      EXPECT_EQ(memory[r * 9 + col], expected) << r << ", " << col;
    }
  }
}

// A sink that batches the way the device sink does, with host memory for the device: chunks
// packed into per-worker staging, tables applied by place_batch_on_host when a batch is full and
// at finish(). What an entry cannot describe is placed alone, as the device sink does.
class HostBatchSink final : public ChunkSink {
 public:
  HostBatchSink(const DestinationLayout& dest, std::span<const std::byte> fill, std::size_t batch_bytes)
      : dest_(dest), fill_(fill.begin(), fill.end()), batch_bytes_(batch_bytes) {}
  std::string_view name() const override { return "host batch"; }
  void start(unsigned workers, std::size_t) override {
    for (unsigned w = 0; w < workers; ++w) workers_.push_back(std::make_unique<Worker>(batch_bytes_));
  }
  std::span<std::byte> staging(unsigned w, std::size_t nbytes) override {
    Worker& worker = *workers_[w];
    auto offset = worker.table.reserve(nbytes);
    if (!offset) {
      flush(worker);
      offset = worker.table.reserve(nbytes);
    }
    if (!offset) throw Error(ErrorKind::invalid_argument, "test sink: a chunk larger than a batch");
    worker.reserved = *offset;
    return {worker.staging() + *offset, nbytes};
  }
  void place(unsigned w, std::span<const std::byte> chunk, const ChunkBox& box) override {
    Worker& worker = *workers_[w];
    EXPECT_EQ(chunk.data(), worker.staging() + worker.reserved);
    ++chunks_;
    if (!worker.table.add_copy(worker.reserved, chunk.size(), box, dest_)) copy_box_to_host(chunk.data(), box, dest_);
  }
  void fill(unsigned w, const ChunkBox& box) override {
    Worker& worker = *workers_[w];
    auto added = worker.table.add_fill(box, dest_, fill_);
    if (added == BatchTable::Added::full) {
      flush(worker);
      added = worker.table.add_fill(box, dest_, fill_);
    }
    if (added == BatchTable::Added::alone) fill_box_on_host(fill_.data(), box, dest_);
  }
  void finish() override {
    for (auto& worker : workers_) flush(*worker);
  }
  std::size_t batches() const { return batches_; }
  std::size_t chunks() const { return chunks_; }

 private:
  struct Worker {
    explicit Worker(std::size_t bytes) : memory(bytes + 4096), table(bytes) {}
    std::byte* staging() {
      // Page-aligned, as the pinned staging is.
      auto p = reinterpret_cast<std::uintptr_t>(memory.data());
      return memory.data() + ((4096 - p % 4096) % 4096);
    }
    std::vector<std::byte> memory;
    BatchTable table;
    std::size_t reserved = 0;
  };
  void flush(Worker& worker) {
    if (worker.table.empty()) return;
    worker.table.write_table({worker.staging(), worker.table.capacity()});
    place_batch_on_host(worker.table.entries(), worker.staging());
    worker.table.clear();
    ++batches_;
  }
  DestinationLayout dest_;
  std::vector<std::byte> fill_;
  std::size_t batch_bytes_;
  std::vector<std::unique_ptr<Worker>> workers_;
  std::atomic<std::size_t> batches_{0};
  std::atomic<std::size_t> chunks_{0};
};

TEST(BatchTable, HostReferenceOfBatchedPlacementMatchesTheHostRead) {
  test::TempDir dir;
  const auto cases = test::batch_cases(dir.path());
  for (const auto& c : cases) {
    auto impl = Array::Impl::create(c.path, read_array_metadata(c.path));
    const std::size_t element = c.array.metadata().dtype.size;
    for (const Region& region : test::batch_regions(c.array.metadata().shape)) {
      for (const auto& shape : test::batch_destinations(region, element)) {
        SCOPED_TRACE(c.name + " " + shape.name + " region starting at " + std::to_string(region[0].start));
        std::vector<std::byte> expected(shape.nbytes, std::byte{0xab});
        std::vector<std::byte> got(shape.nbytes, std::byte{0xab});
        Destination host;
        host.data = expected.data();
        host.byte_strides = shape.byte_strides;
        Settings settings;
        settings.threads = 3;
        c.array.read_into(region, host, settings);

        DestinationLayout layout;
        layout.data = got.data();
        layout.rank = region.size();
        for (std::size_t d = 0; d < region.size(); ++d) {
          layout.shape[d] = region[d].size();
          layout.byte_strides[d] = shape.byte_strides[d];
        }
        layout.element_size = element;
        // Batches of three chunks (the fourth's entry does not fit), so each read spans many.
        const auto chunk_bytes = static_cast<std::size_t>(
            impl->sharding ? impl->sharding->inner_chain().decoded_spec().nbytes() : impl->metadata.chunk_nbytes());
        HostBatchSink sink(layout, impl->metadata.fill_value, 4 * ((chunk_bytes + 4095) / 4096 * 4096));
        run_read(*impl, region, sink, settings);
        EXPECT_GT(sink.batches(), 1u);
        EXPECT_LT(sink.batches(), sink.chunks());
        EXPECT_TRUE(got == expected);
      }
    }
  }
}

}  // namespace
}  // namespace zarrdirect::cuda

#include "engine/selection_read.hpp"

#include <fmt/format.h>

#include "engine/host_sink.hpp"

namespace zarrdirect {
namespace {

// Places the selected elements of each chunk; staging comes from a HostSink (its buffer reuse).
class SelectionHostSink final : public ChunkSink {
 public:
  SelectionHostSink(const SelectionGeometry& geometry, const DestinationLayout& destination,
                    std::span<const std::byte> fill_value)
      : geometry_(geometry), destination_(destination), fill_value_(fill_value.begin(), fill_value.end()),
        staging_(destination, fill_value) {}
  std::string_view name() const override { return "host"; }
  void start(unsigned workers, std::size_t max_chunk_bytes) override { staging_.start(workers, max_chunk_bytes); }
  std::span<std::byte> staging(unsigned worker, std::size_t nbytes) override { return staging_.staging(worker, nbytes); }
  void place(unsigned, std::span<const std::byte> chunk, const ChunkBox& box) override {
    place_selected_on_host(geometry_, chunk.data(), box, destination_);
  }
  void fill(unsigned, const ChunkBox& box) override {
    fill_selected_on_host(geometry_, fill_value_.data(), box, destination_);
  }
  void finish() override {}

 private:
  const SelectionGeometry& geometry_;
  DestinationLayout destination_;
  std::vector<std::byte> fill_value_;
  HostSink staging_;
};

// The output laid out with an axis for every array axis: those an index dropped get extent 1.
DestinationLayout full_rank_layout(const SelectionGeometry& geometry, void* data, std::size_t element_size,
                                   const std::vector<std::int64_t>& result_strides) {
  DestinationLayout layout = DestinationLayout::contiguous(
      static_cast<std::byte*>(data), std::span(geometry.out_shape.data(), geometry.rank), element_size);
  if (result_strides.empty()) return layout;
  if (result_strides.size() != geometry.result_axes.size())
    throw Error(ErrorKind::invalid_argument, fmt::format("read_selection_into: {} strides given for a {}-d result",
                                                         result_strides.size(), geometry.result_axes.size()));
  for (std::size_t d = 0; d < geometry.rank; ++d) layout.byte_strides[d] = 0;
  for (std::size_t r = 0; r < result_strides.size(); ++r) layout.byte_strides[geometry.result_axes[r]] = result_strides[r];
  return layout;
}

}  // namespace

ReadPicks selection_picks(const Array::Impl& array, const SelectionGeometry& geometry) {
  ReadPicks picks;
  picks.chunks = geometry.cells(to_extents(array.metadata.chunk_shape));
  if (array.sharding) picks.inner = geometry.cells(to_extents(array.sharding->inner_chunk_shape()));
  return picks;
}

ReadStats read_selection_to_host(const Array::Impl& array, const SelectionGeometry& geometry,
                                 const DestinationLayout& layout, const Settings& settings) {
  if (geometry.empty()) return ReadStats{.io_path = "host"};
  const ReadPicks picks = selection_picks(array, geometry);
  SelectionHostSink sink(geometry, layout, array.metadata.fill_value);
  return run_read(array, geometry.bounds, sink, settings, &picks);
}

NDArray Array::read_selection(const Selection& selection, const DeviceSpec& device, const Settings& settings) const {
  check_device(device);
  Region box;
  if (selection_is_box(selection, impl_->metadata.shape, box)) {
    // The box path, as fast as ever; the shape drops nothing (every axis is a slice).
    return read(box, device, settings);
  }
  const SelectionGeometry geometry = SelectionGeometry::build(selection, impl_->metadata.shape);
  Buffer buffer = Buffer::allocate(device, static_cast<std::size_t>(geometry.num_elements() * impl_->metadata.dtype.size));
  Destination destination{buffer.data(), {}, device.kind, nullptr, buffer.device_ordinal()};
  ReadStats stats = read_selection_into(selection, destination, settings);
  return NDArray(std::move(buffer), geometry.result_shape, impl_->metadata.dtype, std::move(stats));
}

ReadStats Array::read_selection_into(const Selection& selection, const Destination& destination,
                                     const Settings& settings) const {
  const auto& metadata = impl_->metadata;
  Region box;
  if (selection_is_box(selection, metadata.shape, box)) return read_into(box, destination, settings);
  const SelectionGeometry geometry = SelectionGeometry::build(selection, metadata.shape);
  if (!destination.data && !geometry.empty())
    throw Error(ErrorKind::invalid_argument, "read_selection_into: destination data is null");
  const DestinationLayout layout =
      full_rank_layout(geometry, destination.data, metadata.dtype.size, destination.byte_strides);
  ReadStats stats;
  if (destination.device == Device::cuda) {
    stats = read_selection_to_device(*impl_, geometry, layout, destination.cuda_stream, settings);
  } else {
    stats = read_selection_to_host(*impl_, geometry, layout, settings);
  }
  stats.bytes_out = geometry.num_elements() * metadata.dtype.size;
  return stats;
}

}  // namespace zarrdirect

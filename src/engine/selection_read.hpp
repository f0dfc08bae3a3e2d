// Reads of selections beyond boxes (zarrdirect/selection.hpp): the reader runs over the
// selection's bounding box, visiting only the cells that hold a selected element, into a sink
// that places the selected elements (host: a loop over the per-axis tables; device: a kernel
// taking them, src/cuda/selection_sink.cpp).
#pragma once

#include "engine/array_state.hpp"
#include "engine/reader.hpp"
#include "util/selection_geometry.hpp"

namespace zarrdirect {

// The chunks (shards) and inner chunks of `array` that hold a selected element.
ReadPicks selection_picks(const Array::Impl& array, const SelectionGeometry& geometry);

// Reads the selection into `layout`, a full-rank output of geometry.out_shape (an index's axis
// has extent 1) in host memory.
ReadStats read_selection_to_host(const Array::Impl& array, const SelectionGeometry& geometry,
                                 const DestinationLayout& layout, const Settings& settings);

// The same into device memory (src/cuda; an Error(unsupported) in builds without CUDA).
ReadStats read_selection_to_device(const Array::Impl& array, const SelectionGeometry& geometry,
                                   const DestinationLayout& layout, void* cuda_stream, const Settings& settings);

}  // namespace zarrdirect

// Writing OME-Zarr multiscale images (pyramids), NGFF 0.4 (Zarr v2) or 0.5 (Zarr v3).
//
//   zarrdirect::MultiscaleWriteOptions options;
//   options.levels = 4;                                   // level 0 and three halvings
//   options.downsample_dims = 3;                          // z, y and x
//   zarrdirect::Source volume{device_pointer, {}, zarrdirect::Device::cuda, stream, shape, dtype};
//   zarrdirect::write_multiscale("/data/out.ome.zarr", volume, options);
//
// Each level is computed from the level above it by halving the last 2 (yx) or 3 (zyx) axes
// over 2x2 or 2x2x2 blocks; leading axes (t, c) are kept. Levels get floor(n / 2) elements per
// halved axis, as ome-zarr-py's Scaler (shape // 2): an odd last row, column or plane is left
// out of the block below it. Device data is downsampled on the GPU, host data on the CPU
// (threads of the shared pool); both give the same bits (see src/engine/downsample_ops.hpp for
// the rules: integer means summed exactly and rounded half to even, NaN wins a max, nearest
// keeps each block's last pixel as ome-zarr-py's nearest does).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "zarrdirect/array.hpp"

namespace zarrdirect {

enum class DownsampleMethod { mean, nearest, max };
std::string_view to_string(DownsampleMethod method);
// "mean", "nearest" or "max"; anything else is Error(invalid_argument).
DownsampleMethod parse_downsample_method(std::string_view text);

struct MultiscaleWriteOptions {
  std::size_t levels = 4;                    // levels written, level 0 (full resolution) included
  DownsampleMethod method = DownsampleMethod::mean;
  unsigned downsample_dims = 2;              // 2: the last two axes (y, x); 3: the last three (z, y, x)
  std::string ngff = "0.4";                  // "0.4": Zarr v2 arrays; "0.5": Zarr v3
  std::vector<std::string> axes;             // one name per axis; empty: x, yx, zyx, czyx, tczyx by rank
  std::vector<std::string> units;            // one per axis ("" for none); empty: none
  std::vector<double> scale;                 // level 0's physical pixel size per axis; empty: all 1
  std::vector<double> translation;           // level 0's physical origin per axis; empty: all 0
  std::string name;                          // the multiscale's "name"; empty: left out
  std::vector<std::uint64_t> chunks;         // per axis; empty: 1 on leading axes, 128 (2-D: 256) on
                                             // halved ones; clamped to each level's shape
  std::vector<std::uint64_t> shards;         // NGFF 0.5 only; empty: none
  std::string codec = "zstd:3";              // as for ArrayLayout::codec (zarrdirect/codec_spec.hpp)
  std::optional<int> codec_level;
  bool overwrite = false;                    // replace what is at the path
  // Array sources are read in slabs along the slowest halved axis, each at most this many bytes
  // (rounded down to a whole number of level-0 chunks and of 2^(levels-1) rows, at least one of
  // those); 0: 512 MiB. With more than one slab, two are held: the next is read while the
  // previous one is downsampled and written.
  std::size_t slab_bytes = 0;
  WriteSettings write;
};

struct MultiscaleLevelWritten {
  std::string path;  // "0", "1", ...
  std::vector<std::uint64_t> shape;
  std::vector<double> scale;
  std::vector<double> translation;
};

struct MultiscaleWriteStats {
  std::vector<MultiscaleLevelWritten> levels;
  std::uint64_t bytes_written = 0;     // encoded bytes stored, all levels
  std::size_t chunks_merged = 0;       // chunks written in part and merged (0: slabs stayed aligned)
  std::size_t slabs = 0;               // slabs processed (1 for data in memory)
  std::uint64_t slab_rows = 0;         // rows of the slowest halved axis per slab
  std::size_t peak_buffer_bytes = 0;   // most memory the pyramid's own buffers held at once
                                       // (slab, downsampled parts, partial chunks of levels);
                                       // data given in memory and the writer's chunk buffers
                                       // not counted
  // Where the time went, from an array on storage read slab by slab (0 for data in memory):
  double read_seconds = 0;             // reading the slabs (each slab's read, summed; slab s+1
                                       // is read while slab s is written)
  double pyramid_seconds = 0;          // writing each slab's level 0 and downsampling and
                                       // writing the levels below, summed
  double read_wait_seconds = 0;        // the writes waiting for the next slab's read to end
};

// Writes `data` (host or device memory; shape and dtype required, C-contiguous: byte_strides
// empty) and its downsampled levels as an OME-Zarr image in folder `path`: a group with arrays
// "0" .. "levels-1" and the multiscales metadata, which is written last (a failed write leaves
// no image that claims to be complete). Settings::progress is called after each level is
// written (done, total = levels); returning false cancels (Error(cancelled)). Errors: invalid_argument for options that do not fit the data (axes or
// units of the wrong count, halved axes that are not "space" axes, a level with an axis of
// length 0, an unknown ngff version, shards with 0.4); unsupported for max of complex data or
// device data without CUDA; the writer's errors. Runs on the shared worker pool; safe to call
// from several threads for different paths.
MultiscaleWriteStats write_multiscale(const std::filesystem::path& path, const Source& data,
                                      const MultiscaleWriteOptions& options,
                                      const Settings& settings = Settings::from_environment());

// The same from an array on storage, read slab by slab (see slab_bytes) into memory on `device`
// and downsampled there: memory stays bounded by the slab, whatever the array's size.
// Settings::progress is called after each level of each slab (done, total = slabs x levels).
MultiscaleWriteStats write_multiscale(const std::filesystem::path& path, const Array& source,
                                      const MultiscaleWriteOptions& options, Device device = Device::cpu,
                                      const Settings& settings = Settings::from_environment());

}  // namespace zarrdirect

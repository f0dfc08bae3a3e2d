// write_multiscale (zarrdirect/multiscale_write.hpp): plans the pyramid, creates the group and
// its arrays, runs the data through PyramidPipeline, then writes the multiscales metadata.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <future>
#include <numeric>
#include <thread>

#include <fmt/format.h>

#include "engine/downsample.hpp"
#include "engine/multiscale_plan.hpp"
#include "engine/pyramid_pipeline.hpp"
#include "zarrdirect/error.hpp"
#include "zarrdirect/group.hpp"
#include "zarrdirect/multiscale_write.hpp"

namespace zarrdirect {
namespace {

constexpr std::size_t kDefaultSlabBytes = std::size_t{512} << 20;

struct Started {
  MultiscalePlan plan;
  Group group;
  std::vector<Array> arrays;
};

Started start(const std::filesystem::path& path, const std::vector<std::uint64_t>& shape, const DataType& dtype,
              const MultiscaleWriteOptions& options) {
  MultiscalePlan plan = plan_multiscale(shape, options);
  check_downsample_supported(dtype, options.method);
  std::vector<nlohmann::json> documents;  // all built (and checked) before anything is written
  for (std::size_t k = 0; k < plan.levels.size(); ++k) documents.push_back(level_array_metadata(plan, k, dtype, options));
  Group group = Group::create(path, plan.zarr_format, nlohmann::json::object(), options.overwrite);
  std::vector<Array> arrays;
  for (std::size_t k = 0; k < plan.levels.size(); ++k)
    arrays.push_back(Array::create(path / plan.levels[k].path, documents[k], false, options.write.durable));
  return {std::move(plan), std::move(group), std::move(arrays)};
}

MultiscaleWriteStats finish(Started& started, const PyramidPipeline& pipeline, const MultiscaleWriteOptions& options,
                            std::size_t slabs, std::uint64_t slab_rows) {
  started.group.set_attributes(multiscale_attributes(started.plan, options), options.write.durable);
  MultiscaleWriteStats stats;
  stats.levels = started.plan.levels;
  stats.bytes_written = pipeline.bytes_written();
  stats.chunks_merged = pipeline.chunks_merged();
  stats.slabs = slabs;
  stats.slab_rows = slab_rows;
  stats.peak_buffer_bytes = pipeline.peak_buffer_bytes();
  return stats;
}

PyramidPipeline::Config pipeline_config(const Started& started, const DataType& dtype, Device device,
                                        const MultiscaleWriteOptions& options, const Settings& settings, void* stream,
                                        std::uint64_t max_slab_rows, std::size_t total_steps) {
  PyramidPipeline::Config config;
  config.levels = started.arrays;
  config.dtype = dtype;
  config.device = device;
  config.halved_dims = options.downsample_dims;
  config.method = options.method;
  config.write = options.write;
  config.settings = settings;
  config.cuda_stream = stream;
  config.threads = settings.threads ? settings.threads : std::max(1u, std::thread::hardware_concurrency());
  config.max_slab_rows = max_slab_rows;
  if (settings.progress) {
    auto done = std::make_shared<std::size_t>(0);
    config.after_level = [progress = settings.progress, done, total_steps] {
      if (!progress(++*done, total_steps)) throw Error(ErrorKind::cancelled, "pyramid write cancelled");
    };
  }
  return config;
}

}  // namespace

MultiscaleWriteStats write_multiscale(const std::filesystem::path& path, const Source& data,
                                      const MultiscaleWriteOptions& options, const Settings& settings) {
  if (data.shape.empty() || !data.dtype)
    throw Error(ErrorKind::invalid_argument, "write_multiscale: the source needs its shape and dtype");
  const auto& shape = data.shape;
  if (!data.byte_strides.empty()) {
    std::int64_t stride = data.dtype->size;
    for (std::size_t d = shape.size(); d-- > 0;) {
      if (data.byte_strides.size() != shape.size() || (shape[d] > 1 && data.byte_strides[d] != stride))
        throw Error(ErrorKind::invalid_argument, "write_multiscale: the source must be C-contiguous");
      stride *= static_cast<std::int64_t>(shape[d]);
    }
  }
  Started started = start(path, shape, *data.dtype, options);
  const std::size_t axis = shape.size() - options.downsample_dims;
  PyramidPipeline pipeline(pipeline_config(started, *data.dtype, data.device, options, settings, data.cuda_stream,
                                           shape[axis], started.plan.levels.size()));
  pipeline.push(data.data, shape[axis], true);
  return finish(started, pipeline, options, 1, shape[axis]);
}

MultiscaleWriteStats write_multiscale(const std::filesystem::path& path, const Array& source,
                                      const MultiscaleWriteOptions& options, Device device, const Settings& settings) {
  const auto& metadata = source.metadata();
  const auto& shape = metadata.shape;
  Started started = start(path, shape, metadata.dtype, options);
  const std::size_t axis = shape.size() - options.downsample_dims;

  // Slab rows: a multiple of 2^(levels-1) (every level gets whole blocks) and of level 0's
  // storage unit (level 0 is written straight from the slab), as many as the budget allows.
  const std::uint64_t unit0 = started.arrays[0].metadata().chunk_shape[axis];
  const std::uint64_t step = std::lcm(unit0, std::uint64_t{1} << (started.plan.levels.size() - 1));
  std::uint64_t row_bytes = metadata.dtype.size;
  for (std::size_t d = 0; d < shape.size(); ++d)
    if (d != axis) row_bytes *= shape[d];
  const std::size_t budget = options.slab_bytes ? options.slab_bytes : kDefaultSlabBytes;
  std::uint64_t rows = std::max<std::uint64_t>(1, budget / std::max<std::uint64_t>(row_bytes * step, 1)) * step;
  rows = std::min(rows, (shape[axis] + step - 1) / step * step);
  const std::uint64_t slabs = (shape[axis] + rows - 1) / rows;

  PyramidPipeline pipeline(pipeline_config(started, metadata.dtype, device, options, settings, nullptr, rows,
                                           slabs * started.plan.levels.size()));
  // Two slabs when there are several: slab s+1 is read (its own reader threads: I/O and decoding)
  // while slab s is downsampled and written (the writer's threads: encoding and I/O), so the
  // pyramid costs about max(read, write) per slab rather than their sum.
  std::vector<Buffer> slab_buffers;
  for (int b = 0; b < (slabs > 1 ? 2 : 1); ++b) {
    slab_buffers.push_back(Buffer::allocate(device, rows * row_bytes));
    pipeline.count_buffer(rows * row_bytes);
  }
  Settings read_settings = settings;
  read_settings.progress = nullptr;
  using Clock = std::chrono::steady_clock;
  auto seconds_since = [](Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); };
  std::atomic<double> read_seconds = 0;  // added to by the reading thread
  auto read_slab = [&](std::uint64_t s) {
    const auto start = Clock::now();
    const std::uint64_t first = s * rows;
    const std::uint64_t count = std::min(rows, shape[axis] - first);
    Region region(shape.size());
    for (std::size_t d = 0; d < shape.size(); ++d) region[d] = d == axis ? Range{first, first + count} : Range{0, shape[d]};
    Destination destination;
    destination.data = slab_buffers[s % slab_buffers.size()].data();
    destination.device = device;
    source.read_into(region, destination, read_settings);
    read_seconds.fetch_add(seconds_since(start));
    return count;
  };
  // Declared after the buffers: if a push throws, the pending read is waited for (std::future's
  // destructor) before the buffer it reads into goes away.
  std::future<std::uint64_t> next;
  std::uint64_t count = read_slab(0);
  double pyramid_seconds = 0, read_wait_seconds = 0;
  for (std::uint64_t s = 0; s < slabs; ++s) {
    // The buffer read next was last pushed two slabs ago: that push returned only after its
    // writes (which wait for the downsampling that read the buffer) were done.
    if (s + 1 < slabs) next = std::async(std::launch::async, read_slab, s + 1);
    auto start = Clock::now();
    pipeline.push(slab_buffers[s % slab_buffers.size()].data(), count, s + 1 == slabs);
    pyramid_seconds += seconds_since(start);
    start = Clock::now();
    if (s + 1 < slabs) count = next.get();
    read_wait_seconds += seconds_since(start);
  }
  MultiscaleWriteStats stats = finish(started, pipeline, options, static_cast<std::size_t>(slabs), rows);
  stats.read_seconds = read_seconds.load();
  stats.pyramid_seconds = pyramid_seconds;
  stats.read_wait_seconds = read_wait_seconds;
  return stats;
}

}  // namespace zarrdirect

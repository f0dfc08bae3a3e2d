// zarrdirect pyramid SRC DST --levels N: an OME-Zarr multiscale image (NGFF 0.4 or 0.5) of any
// readable array or OME-Zarr level, read slab by slab (memory bounded by --slab-mb), downsampled
// level by level on the CPU (or the GPU with --gpu) and written with the array writer.
#include <unistd.h>

#include <chrono>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/open_target.hpp"
#include "cli/progress.hpp"
#include "cli/store_flags.hpp"
#include "zarrdirect/group.hpp"
#include "zarrdirect/multiscale_write.hpp"

namespace zarrdirect::cli {
namespace {

struct PyramidOptions {
  std::string source;
  std::string destination;
  std::size_t levels = 4;
  std::string method = "mean";
  std::string downsample = "yx";
  std::string ngff = "0.4";
  std::string codec = "zstd:3";
  std::optional<int> level;
  std::string chunks;
  std::string shards;
  std::string axes;
  std::string unit;
  std::optional<std::size_t> multiscale_level;
  std::size_t slab_mb = 512;
  unsigned threads = 0;
  bool gpu = false;
  bool overwrite = false;
  bool durable = false;
  bool quiet = false;
};

std::vector<std::uint64_t> extents(const std::string& text, std::string_view option) {
  std::vector<std::uint64_t> out;
  if (text.empty()) return out;
  std::size_t start = 0;
  while (start <= text.size()) {
    auto comma = std::min(text.find(',', start), text.size());
    const std::string part = text.substr(start, comma - start);
    if (part.empty() || part.size() > 18 || part.find_first_not_of("0123456789") != std::string::npos ||
        std::stoull(part) == 0)
      throw UsageError(fmt::format("{} \"{}\": expected positive integers separated by commas", option,
                                   text.substr(0, 80)));
    out.push_back(std::stoull(part));
    start = comma + 1;
  }
  return out;
}

int run_pyramid(const PyramidOptions& cli) {
  Array source = open_target(cli.source, cli.multiscale_level);
  MultiscaleWriteOptions options;
  options.levels = cli.levels;
  options.method = parse_downsample_method(cli.method);
  if (cli.downsample != "yx" && cli.downsample != "zyx")
    throw UsageError(fmt::format("--downsample must be yx or zyx, not \"{}\"", cli.downsample.substr(0, 20)));
  options.downsample_dims = cli.downsample == "zyx" ? 3 : 2;
  options.ngff = cli.ngff;
  options.codec = cli.codec;
  options.codec_level = cli.level;
  options.chunks = extents(cli.chunks, "--chunks");
  options.shards = extents(cli.shards, "--shards");
  options.overwrite = cli.overwrite;
  options.write.durable = cli.durable;
  options.slab_bytes = cli.slab_mb << 20;
  // A level of an OME-Zarr image keeps its axes and its place in physical space.
  if (cli.multiscale_level) {
    auto image = Multiscale::open(cli.source, store_flags());
    const auto& level = image.levels().at(*cli.multiscale_level);
    for (const auto& axis : image.axes()) {
      options.axes.push_back(axis.name);
      options.units.push_back(axis.unit);
    }
    options.scale = level.scale;
    options.translation = level.translation;
  }
  if (!cli.axes.empty()) {
    options.axes.clear();
    for (char c : cli.axes) options.axes.emplace_back(1, c);
    options.units.clear();
  }
  if (!cli.unit.empty()) {
    if (options.axes.empty())
      for (char c : std::string("tczyx").substr(5 - std::min<std::size_t>(5, source.metadata().rank())))
        options.axes.emplace_back(1, c);
    options.units.assign(options.axes.size(), "");
    for (std::size_t d = 0; d < options.axes.size(); ++d)
      if (options.axes[d] == "x" || options.axes[d] == "y" || options.axes[d] == "z") options.units[d] = cli.unit;
  }

  Settings settings = Settings::from_environment();
  if (cli.threads) settings.threads = cli.threads;
  ProgressBar bar(!cli.quiet && isatty(STDERR_FILENO));
  settings.progress = bar.callback();
  const auto start = std::chrono::steady_clock::now();
  auto stats = write_multiscale(cli.destination, source, options, cli.gpu ? Device::cuda : Device::cpu, settings);
  bar.clear();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (const auto& level : stats.levels)
    fmt::print(stderr, "  level {}: [{}] scale [{}]\n", level.path, fmt::join(level.shape, ", "),
               fmt::join(level.scale, ", "));
  fmt::print(stderr, "pyramid of {} levels ({} over {}) written to {} (NGFF {}, codec {}): {} slab(s) of {} rows, "
             "{:.1f} MiB stored, {:.2f} s\n",
             stats.levels.size(), cli.method, cli.downsample, cli.destination, cli.ngff, cli.codec, stats.slabs,
             stats.slab_rows, static_cast<double>(stats.bytes_written) / (1 << 20), seconds);
  return 0;
}

}  // namespace

Run add_pyramid_command(CLI::App& app) {
  auto options = std::make_shared<PyramidOptions>();
  auto* sub = app.add_subcommand("pyramid", "Write an OME-Zarr multiscale image (pyramid) of an array");
  sub->add_option("source", options->source, "Array folder (or OME-Zarr group with --multiscale-level)")->required();
  sub->add_option("destination", options->destination, "Folder of the new OME-Zarr image")->required();
  sub->add_option("--levels", options->levels, "Levels, level 0 included (default 4)")->check(CLI::Range(1, 32));
  sub->add_option("--method", options->method, "mean, nearest or max (default mean)")
      ->check(CLI::IsMember({"mean", "nearest", "max"}));
  sub->add_option("--downsample", options->downsample, "Axes halved: yx or zyx (default yx)")
      ->check(CLI::IsMember({"yx", "zyx"}));
  sub->add_option("--ngff", options->ngff, "0.4 (Zarr v2) or 0.5 (Zarr v3); default 0.4")
      ->check(CLI::IsMember({"0.4", "0.5"}));
  sub->add_option("--codec", options->codec, "raw, zstd[:L], blosc[:CNAME[:L[:SHUFFLE]]], gzip[:L], ... (default zstd:3)");
  sub->add_option("--level", options->level, "Compression level (replaces the one in --codec)");
  sub->add_option("--chunks", options->chunks, "Chunk shape a,b,... (default 128 per halved axis for zyx, 256 for yx)");
  sub->add_option("--shards", options->shards, "Shard shape a,b,... (NGFF 0.5)");
  sub->add_option("--axes", options->axes, "Axis names, one letter each, e.g. czyx (default by rank)");
  sub->add_option("--unit", options->unit, "Unit of the space axes, e.g. micrometer");
  sub->add_option("--multiscale-level", options->multiscale_level, "Level of an OME-Zarr multiscale source")
      ->check(level_number());
  sub->add_option("--slab-mb", options->slab_mb, "Most MiB of the source read at once (default 512)")
      ->check(CLI::Range(1, 1 << 20));
  sub->add_option("--threads", options->threads, "Threads (default: one per core)");
  sub->add_flag("--gpu", options->gpu, "Downsample on the GPU (slabs read into device memory)");
  sub->add_flag("--overwrite", options->overwrite, "Replace what is at the destination");
  sub->add_flag("--durable", options->durable, "fsync every file and folder written");
  sub->add_flag("--quiet,-q", options->quiet, "No progress display");
  return [options]() { return run_pyramid(*options); };
}

}  // namespace zarrdirect::cli

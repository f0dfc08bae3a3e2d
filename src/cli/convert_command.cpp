// zarrdirect convert SRC DST: copies any readable array (or a region of it) into a new array
// with another format, chunking, sharding or codec.
//
// The copy runs block by block, each block a whole number of the destination's storage units
// (shards, or chunks) of about 256 MiB, so memory stays bounded and no chunk is written twice.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/open_target.hpp"
#include "cli/progress.hpp"
#include "zarrdirect/array.hpp"
#include "zarrdirect/codec_spec.hpp"

namespace zarrdirect::cli {
namespace {

// Dimension names cross formats as xarray keeps them: v3's dimension_names, v2's
// _ARRAY_DIMENSIONS attribute (every name a string, one per dimension). Into v2 the names become
// that attribute (unless the source's attributes already hold one); into v3, the attribute of a v2
// source gives dimension_names.
void carry_dimension_names(const ArrayMetadata& source, ArrayLayout& layout) {
  const std::size_t rank = source.rank();
  if (layout.zarr_format == 3) {
    layout.dimension_names = source.dimension_names;
    const auto it = source.attributes.find("_ARRAY_DIMENSIONS");
    if (!layout.dimension_names.empty() || it == source.attributes.end() || !it->is_array() || it->size() != rank)
      return;
    for (const auto& name : *it) {
      if (!name.is_string()) {
        layout.dimension_names.clear();
        return;
      }
      layout.dimension_names.emplace_back(name.get<std::string>());
    }
    return;
  }
  if (source.dimension_names.size() != rank || layout.attributes.contains("_ARRAY_DIMENSIONS")) return;
  nlohmann::json names = nlohmann::json::array();
  for (const auto& name : source.dimension_names) {
    if (!name) return;  // xarray's attribute has no place for an unnamed dimension
    names.push_back(*name);
  }
  if (!layout.attributes.is_object()) layout.attributes = nlohmann::json::object();
  layout.attributes["_ARRAY_DIMENSIONS"] = names;
}


struct ConvertOptions {
  std::string source;
  std::string destination;
  std::optional<int> zarr_format;
  std::string chunks;
  std::string shards;
  std::string codec = "zstd:3";
  std::string region;
  std::optional<int> level;
  std::optional<std::size_t> multiscale_level;
  unsigned threads = 0;
  bool overwrite = false;
  bool durable = false;
  bool quiet = false;
};

std::vector<std::uint64_t> parse_extents(const std::string& text, std::string_view option, std::size_t rank) {
  std::vector<std::uint64_t> extents;
  if (text.empty()) return extents;
  std::size_t start = 0;
  while (start <= text.size()) {
    auto comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    std::string part = text.substr(start, comma - start);
    std::uint64_t value = 0;
    if (part.empty() || part.find_first_not_of("0123456789") != std::string::npos || part.size() > 18 ||
        (value = std::stoull(part)) == 0)
      throw Error(ErrorKind::invalid_argument,
                  fmt::format("{} \"{}\": expected positive integers separated by commas", option, text.substr(0, 80)));
    extents.push_back(value);
    start = comma + 1;
  }
  if (extents.size() != rank)
    throw Error(ErrorKind::invalid_argument,
                fmt::format("{} lists {} extents, the array has {} dimensions", option, extents.size(), rank));
  return extents;
}

// The source's fill value as metadata of either format writes it.
nlohmann::json portable_fill_value(const ArrayMetadata& metadata) {
  const auto& json = metadata.fill_value_json;
  if (json.is_number() || json.is_boolean()) return json;
  auto is_special = [](const nlohmann::json& value) {
    if (!value.is_string()) return false;
    const auto& text = value.get_ref<const std::string&>();
    return text == "NaN" || text == "Infinity" || text == "-Infinity";
  };
  if (is_special(json)) return json;
  // [re, im] of numbers and special strings as they are; hex components ("0x3f800000", v3 only)
  // from the bytes below: copied as they were, a v2 target refused them.
  if (json.is_array() && json.size() == 2 &&
      std::all_of(json.begin(), json.end(), [&](const auto& part) { return part.is_number() || is_special(part); }))
    return json;
  // Hex strings, null (v2 "no fill value"): from the decoded bytes.
  const auto& bytes = metadata.fill_value;
  const auto& dtype = metadata.dtype;
  auto as_number = [](double value) -> nlohmann::json {
    if (std::isnan(value)) return "NaN";
    if (std::isinf(value)) return value > 0 ? "Infinity" : "-Infinity";
    return value;
  };
  // One float of `size` bytes at `offset`, widened exactly to double (float16 included: its hex
  // fill values could not be converted at all).
  auto float_at = [&](std::size_t offset, std::size_t size) -> double {
    if (size == 2) {
      std::uint16_t half;
      std::memcpy(&half, bytes.data() + offset, 2);
      const int exponent = (half >> 10) & 0x1f;
      const double mantissa = half & 0x3ff;
      double magnitude = exponent == 0x1f ? (mantissa != 0 ? std::nan("") : HUGE_VAL)
                         : exponent == 0  ? std::ldexp(mantissa, -24)
                                          : std::ldexp(1024 + mantissa, exponent - 25);
      return (half & 0x8000) ? -magnitude : magnitude;
    }
    if (size == 4) {
      float value;
      std::memcpy(&value, bytes.data() + offset, 4);
      return value;
    }
    double value;
    std::memcpy(&value, bytes.data() + offset, 8);
    return value;
  };
  if (dtype.kind == ScalarKind::floating) return as_number(float_at(0, dtype.size));
  if (dtype.kind == ScalarKind::complex)
    return nlohmann::json::array({as_number(float_at(0, dtype.size / 2)), as_number(float_at(dtype.size / 2, dtype.size / 2))});
  if (std::all_of(bytes.begin(), bytes.end(), [](std::byte b) { return b == std::byte{0}; }))
    return dtype.kind == ScalarKind::complex ? nlohmann::json::array({0, 0})
           : dtype.kind == ScalarKind::boolean ? nlohmann::json(false)
                                                : nlohmann::json(0);
  throw Error(ErrorKind::unsupported,
              fmt::format("the source's fill value {} cannot be carried over; convert cannot write it", json.dump()));
}

int run_convert(const ConvertOptions& options) {
  Array source = open_target(options.source, options.multiscale_level);
  const auto& metadata = source.metadata();
  const std::size_t rank = metadata.rank();
  Region region = options.region.empty() ? full_region(metadata.shape)
                                        : resolve_region(parse_region(options.region, metadata.shape), metadata.shape);

  ArrayLayout layout;
  layout.shape = region_shape(region);
  layout.dtype = metadata.dtype;
  layout.zarr_format = options.zarr_format.value_or(metadata.zarr_format);
  layout.chunks = parse_extents(options.chunks, "--chunks", rank);
  if (layout.chunks.empty()) {
    const auto* inner = metadata.codecs.size() == 1 && metadata.codecs[0].value("name", "") == "sharding_indexed"
                            ? &metadata.codecs[0]["configuration"]["chunk_shape"]
                            : nullptr;
    layout.chunks = inner ? inner->get<std::vector<std::uint64_t>>() : metadata.chunk_shape;
    for (std::size_t d = 0; d < rank; ++d) layout.chunks[d] = std::max<std::uint64_t>(1, std::min(layout.chunks[d], layout.shape[d]));
  }
  layout.shards = parse_extents(options.shards, "--shards", rank);
  layout.codec = options.codec;
  layout.level = options.level;
  layout.fill_value = portable_fill_value(metadata);
  layout.attributes = metadata.attributes;
  carry_dimension_names(metadata, layout);

  Array destination = Array::create(options.destination, make_array_metadata(layout), options.overwrite);

  // Blocks of whole storage units, grown along the outer dimensions up to about 256 MiB.
  const auto& unit = destination.metadata().chunk_shape;
  const std::uint64_t element = metadata.dtype.size;
  std::vector<std::uint64_t> block = unit;
  for (std::size_t d = 0; d < rank; ++d) block[d] = std::min(block[d], std::max<std::uint64_t>(layout.shape[d], 1));
  constexpr std::uint64_t kBlockBytes = std::uint64_t{256} << 20;
  for (std::size_t d = 0; d < rank; ++d) {
    std::uint64_t bytes = element;
    for (auto e : block) bytes *= e;
    if (bytes * 2 > kBlockBytes) break;
    std::uint64_t grow = std::max<std::uint64_t>(1, kBlockBytes / bytes);
    std::uint64_t units = (layout.shape[d] + block[d] - 1) / block[d];
    block[d] *= std::min(grow, units);
  }
  std::vector<std::uint64_t> grid(rank);
  std::uint64_t total = 1;
  for (std::size_t d = 0; d < rank; ++d) {
    grid[d] = layout.shape[d] == 0 ? 0 : (layout.shape[d] + block[d] - 1) / block[d];
    total *= grid[d];
  }

  Settings settings = Settings::from_environment();
  if (options.threads) settings.threads = options.threads;
  WriteSettings write_settings;
  write_settings.durable = options.durable;
  ProgressBar bar(!options.quiet && isatty(STDERR_FILENO));
  auto progress = bar.callback();
  auto start = std::chrono::steady_clock::now();
  std::uint64_t bytes_written = 0;
  for (std::uint64_t b = 0; b < total; ++b) {
    Region target(rank), from(rank);
    std::uint64_t rest = b;
    for (std::size_t d = rank; d-- > 0;) {
      std::uint64_t index = rest % grid[d];
      rest /= grid[d];
      target[d] = {index * block[d], std::min(layout.shape[d], (index + 1) * block[d])};
      from[d] = {region[d].start + target[d].start, region[d].start + target[d].stop};
    }
    NDArray data = source.read(from, Device::cpu, settings);
    Source input;
    input.data = data.data();
    input.shape = data.shape();
    input.dtype = data.dtype();
    bytes_written += destination.write(target, input, write_settings, settings).bytes_written;
    if (progress && !progress(static_cast<std::size_t>(b + 1), static_cast<std::size_t>(total)))
      throw Error(ErrorKind::cancelled, "convert cancelled");
  }
  if (rank == 0) {
    NDArray data = source.read({}, Device::cpu, settings);
    Source input{data.data(), {}, Device::cpu, nullptr, {}, data.dtype()};
    bytes_written += destination.write({}, input, write_settings, settings).bytes_written;
  }
  bar.clear();
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::uint64_t nbytes = element;
  for (auto e : layout.shape) nbytes *= e;
  fmt::print(stderr, "converted [{}] {} to {} (zarr_format {}, codec {}): {:.1f} MiB in, {:.1f} MiB stored, {:.2f} s\n",
             fmt::join(layout.shape, ", "), metadata.dtype.name(), options.destination, layout.zarr_format,
             options.codec, static_cast<double>(nbytes) / (1 << 20), static_cast<double>(bytes_written) / (1 << 20),
             seconds);
  return 0;
}

}  // namespace

Run add_convert_command(CLI::App& app) {
  auto options = std::make_shared<ConvertOptions>();
  auto* sub = app.add_subcommand("convert", "Copy an array (or a region) into a new array: format, chunks, shards, codec");
  sub->add_option("source", options->source, "Array folder (or OME-Zarr group with --multiscale-level)")->required();
  sub->add_option("destination", options->destination, "Folder of the new array")->required();
  sub->add_option("--zarr-format", options->zarr_format, "2 or 3 (default: the source's)")->check(CLI::IsMember({2, 3}));
  sub->add_option("--chunks", options->chunks, "Chunk shape a,b,... (with --shards: the inner chunks)");
  sub->add_option("--shards", options->shards, "Shard shape a,b,... (zarr_format 3)");
  sub->add_option("--codec", options->codec,
                  "raw, zstd[:L], blosc[:CNAME[:L[:SHUFFLE]]], gzip[:L], zlib[:L], bz2[:L], lzma[:L], lz4, +crc32c (default zstd:3)");
  sub->add_option("--region", options->region, "NumPy-style region of the source to copy, e.g. 0:10,:,5");
  sub->add_option("--level", options->level, "Compression level (replaces the one in --codec)");
  sub->add_option("--multiscale-level", options->multiscale_level, "Level of an OME-Zarr multiscale source")
      ->check(level_number());
  sub->add_option("--threads", options->threads, "Threads (default: one per core, at least 4)");
  sub->add_flag("--overwrite", options->overwrite, "Replace an array or group at the destination");
  sub->add_flag("--durable", options->durable, "fsync every file and folder written");
  sub->add_flag("--quiet,-q", options->quiet, "No progress display");
  return [options]() { return run_convert(*options); };
}

}  // namespace zarrdirect::cli

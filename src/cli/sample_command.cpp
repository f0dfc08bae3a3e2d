// `zarrdirect sample PATH`: writes the built-in sample. Never over existing data unless
// --overwrite, and then the old array is removed completely first (cli/replace_folder.hpp).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/commands.hpp"
#include "cli/printable.hpp"
#include "cli/replace_folder.hpp"
#include "cli/sample.hpp"

namespace zarrdirect::cli {

// The sample is generated in memory whole: more than this many elements (4 GiB of uint16) is
// refused as a usage error rather than attempted.
constexpr std::uint64_t kMaxSampleElements = std::uint64_t{1} << 31;

Run add_sample_command(CLI::App& app) {
  struct Options {
    std::string path;
    std::vector<std::uint64_t> shape{256, 256, 256};
    std::vector<std::uint64_t> chunks{64, 64, 64};
    std::string codec = "none";
    bool overwrite = false;
  };
  auto options = std::make_shared<Options>();
  auto* sub = app.add_subcommand("sample", "Write the built-in sample array (3-d uint16, zarr v3)");
  sub->add_option("path", options->path, "Folder to create (absent or empty, or use --overwrite)")->required();
  sub->add_option("--shape", options->shape, "Three extents")->expected(3)->delimiter(',')->check(CLI::NonNegativeNumber);
  sub->add_option("--chunks", options->chunks, "Three extents, each at least 1")
      ->expected(3)
      ->delimiter(',')
      ->check(CLI::PositiveNumber);
  sub->add_option("--codec", options->codec, "none, zstd, gzip, blosc or sharded")
      ->check(CLI::IsMember({"none", "zstd", "gzip", "blosc", "sharded"}));
  sub->add_flag("--overwrite", options->overwrite, "Replace a Zarr array or group already at PATH (removed first)");
  return [options]() {
    std::uint64_t elements = 1;
    for (auto extent : options->shape)
      elements = extent == 0 || elements <= kMaxSampleElements / extent ? elements * extent : kMaxSampleElements + 1;
    if (elements > kMaxSampleElements)
      throw UsageError(fmt::format("--shape {}: the sample is at most {} elements", fmt::join(options->shape, ","),
                                   kMaxSampleElements));
    prepare_new_array(options->path, options->overwrite);
    write_sample(options->path, options->shape, options->chunks, options->codec);
    fmt::print("wrote {} ({}, chunks {}, {})\n", printable_line(options->path), fmt::join(options->shape, "x"),
               fmt::join(options->chunks, "x"), options->codec);
    return 0;
  };
}

}  // namespace zarrdirect::cli

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/commands.hpp"
#include "cli/sample.hpp"

namespace zarrdirect::cli {

Run add_sample_command(CLI::App& app) {
  struct Options {
    std::string path;
    std::vector<std::uint64_t> shape{256, 256, 256};
    std::vector<std::uint64_t> chunks{64, 64, 64};
    std::string codec = "none";
  };
  auto options = std::make_shared<Options>();
  auto* sub = app.add_subcommand("sample", "Write the built-in sample array (3-d uint16, zarr v3)");
  sub->add_option("path", options->path, "Folder to create")->required();
  sub->add_option("--shape", options->shape, "Three extents")->expected(3)->delimiter(',');
  sub->add_option("--chunks", options->chunks, "Three extents")->expected(3)->delimiter(',');
  sub->add_option("--codec", options->codec, "none, zstd, gzip, blosc or sharded")
      ->check(CLI::IsMember({"none", "zstd", "gzip", "blosc", "sharded"}));
  return [options]() {
    write_sample(options->path, options->shape, options->chunks, options->codec);
    fmt::print("wrote {} ({}, chunks {}, {})\n", options->path, fmt::join(options->shape, "x"),
               fmt::join(options->chunks, "x"), options->codec);
    return 0;
  };
}

}  // namespace zarrdirect::cli

// zarrdirect: inspect and read Zarr arrays into host or GPU memory.
//
// Exit codes: 0 success; 1 any data, metadata or I/O error ("error: ..." on stderr); 2 usage.
#include <cstdio>
#include <map>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "zarrdirect/error.hpp"

int main(int argc, char** argv) {
  CLI::App app{"zarrdirect: read Zarr v2/v3 arrays into CUDA device or host memory"};
  app.require_subcommand(1);
  std::map<CLI::App*, zarrdirect::cli::Run> runs;
  using AddCommand = zarrdirect::cli::Run (*)(CLI::App&);
  for (AddCommand add : {&zarrdirect::cli::add_info_command, &zarrdirect::cli::add_read_command,
                         &zarrdirect::cli::add_bench_command, &zarrdirect::cli::add_sample_command,
                         &zarrdirect::cli::add_demo_command, &zarrdirect::cli::add_convert_command}) {
    std::size_t before = app.get_subcommands({}).size();
    auto run = add(app);
    runs[app.get_subcommands({})[before]] = std::move(run);
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }
  try {
    for (auto* sub : app.get_subcommands()) return runs.at(sub)();
  } catch (const zarrdirect::Error& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return 1;
  }
  return 2;
}

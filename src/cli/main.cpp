// zarrdirect: inspect and read Zarr arrays into host or GPU memory.
//
// Exit codes: 0 success; 1 any data, metadata or I/O error; 2 usage. Either way one "error: ..."
// line on stderr.
// Every "error:" line is one line: what the library or the file system says is escaped and
// shortened first (cli/printable.hpp), since it quotes names and metadata from the data.
#include <csignal>
#include <cstdio>
#include <map>
#include <new>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/printable.hpp"
#include "cli/store_flags.hpp"
#include "zarrdirect/error.hpp"

#ifndef ZARRDIRECT_VERSION
#error "ZARRDIRECT_VERSION (the CMake project version) must be defined"
#endif

namespace {

int report(std::string_view message, int exit_code) {
  fmt::print(stderr, "error: {}\n", zarrdirect::cli::printable_line(message));
  return exit_code;
}

}  // namespace

int main(int argc, char** argv) {
  // A write past a file-size limit (SIGXFSZ) or into a closed pipe (SIGPIPE) then fails with an
  // error the output code reports, instead of killing the process before it can say why.
  std::signal(SIGXFSZ, SIG_IGN);
  std::signal(SIGPIPE, SIG_IGN);

  CLI::App app{"zarrdirect: read Zarr v2/v3 arrays into CUDA device or host memory"};
  app.set_version_flag("--version", "zarrdirect " ZARRDIRECT_VERSION, "Print the version and exit");
  app.require_subcommand(1);
  zarrdirect::cli::add_store_flags(app);
  std::map<CLI::App*, zarrdirect::cli::Run> runs;
  using AddCommand = zarrdirect::cli::Run (*)(CLI::App&);
  for (AddCommand add : {&zarrdirect::cli::add_info_command, &zarrdirect::cli::add_read_command,
                         &zarrdirect::cli::add_bench_command, &zarrdirect::cli::add_sample_command,
                         &zarrdirect::cli::add_demo_command, &zarrdirect::cli::add_convert_command,
                         &zarrdirect::cli::add_pyramid_command}) {
    std::size_t before = app.get_subcommands({}).size();
    auto run = add(app);
    runs[app.get_subcommands({})[before]] = std::move(run);
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version print what was asked and succeed; a mistake is one "error:" line
    // (CLI11 quotes the argument given, which may hold anything).
    if (e.get_exit_code() == static_cast<int>(CLI::ExitCodes::Success)) return app.exit(e);
    return report(fmt::format("{} (see zarrdirect --help)", e.what()), 2);
  }
  try {
    for (auto* sub : app.get_subcommands()) return runs.at(sub)();
  } catch (const zarrdirect::cli::UsageError& e) {
    return report(e.what(), 2);
  } catch (const zarrdirect::Error& e) {
    return report(e.what(), 1);
  } catch (const std::bad_alloc&) {
    return report("out of memory", 1);
  } catch (const std::exception& e) {
    return report(e.what(), 1);
  }
  return 2;
}

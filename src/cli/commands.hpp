// The zarrdirect command-line tool's subcommands. Each registers its options on the CLI11 app
// and returns the function that runs it.
#pragma once

#include <functional>
#include <stdexcept>
#include <string>

#include <CLI/CLI.hpp>

namespace zarrdirect::cli {

using Run = std::function<int()>;

// A command line that asks for something impossible (a malformed --region, a --level the image
// lacks, an output format not written): main prints "error: ..." and exits 2, not 1.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// For a --level or --multiscale-level: "-1" is refused as itself ("a level is 0 or more, not
// -1"), not wrapped into a size_t level of 18446744073709551615, nor with CLI11's range text.
inline CLI::Validator level_number() {
  return CLI::Validator(
      [](std::string& text) { return !text.empty() && text.front() == '-' ? "a level is 0 or more, not " + text : std::string(); },
      "LEVEL");
}

Run add_info_command(CLI::App& app);
Run add_read_command(CLI::App& app);
Run add_bench_command(CLI::App& app);
Run add_sample_command(CLI::App& app);
Run add_demo_command(CLI::App& app);
Run add_convert_command(CLI::App& app);  // convert_command.cpp
Run add_pyramid_command(CLI::App& app);  // pyramid_command.cpp

}  // namespace zarrdirect::cli

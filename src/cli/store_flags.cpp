#include "cli/store_flags.hpp"

namespace zarrdirect::cli {
namespace {

// One command runs per process: the parsed flags live as long as it does.
StoreOptions& parsed() {
  static StoreOptions options;
  return options;
}

}  // namespace

void add_store_flags(CLI::App& app) {
  app.fallthrough();
  app.add_option("--header", parsed().http_headers,
                 "Extra HTTP request header \"Name: value\" for URLs (repeatable; replaces a header of the same "
                 "name from ZARRDIRECT_HTTP_HEADERS; never printed)")
      ->take_all()
      ->allow_extra_args(false);
}

const StoreOptions& store_flags() { return parsed(); }

}  // namespace zarrdirect::cli

// The flags that say how a command reaches an HTTP(S) store, shared by every command that opens
// a path or URL: `--header "Name: value"` (repeatable). They are the tool's counterpart of
// StoreOptions (zarrdirect/store_options.hpp); a bearer token stays in the environment
// (ZARRDIRECT_HTTP_BEARER_TOKEN), since a command line is visible to every user of the machine.
#pragma once

#include <CLI/CLI.hpp>

#include "zarrdirect/store_options.hpp"

namespace zarrdirect::cli {

// Registers the flags on the top-level app; with fallthrough they are accepted after the
// subcommand too (`zarrdirect read URL --header ...`). Call before the subcommands are added.
void add_store_flags(CLI::App& app);

// What the flags said, once the command line is parsed (empty options before, or without flags).
const StoreOptions& store_flags();

}  // namespace zarrdirect::cli

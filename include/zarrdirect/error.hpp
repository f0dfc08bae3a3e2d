// Errors raised by zarrdirect.
//
// Every failure is a zarrdirect::Error carrying a kind, so callers (the CLI, the Python module)
// can map it to an exit code or an exception type without parsing messages. Messages name the
// file or chunk key and the metadata field involved, e.g.
//   "/data/img.zarr/c/0/1: zstd frame claims 9 GiB, chunk holds 4 MiB".
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace zarrdirect {

enum class ErrorKind {
  invalid_metadata,  // metadata that is malformed or contradicts the spec
  unsupported,       // well-formed but uses a feature zarrdirect does not implement
  corrupt_data,      // chunk or shard bytes that cannot be decoded to what the metadata promises
  io,                // the operating system refused or cut short a read
  cuda,              // the CUDA runtime or driver reported a failure
  invalid_argument,  // the caller asked for something impossible (a region out of bounds, ...)
  cancelled,         // the caller asked the read to stop
};

std::string_view to_string(ErrorKind kind);

class Error : public std::runtime_error {
 public:
  // The message is kept to one line of printable text whatever it holds: control bytes, invalid
  // UTF-8 and terminal controls are escaped (\n, \xNN), and past 16 KiB it is cut.
  Error(ErrorKind kind, const std::string& message);
  ErrorKind kind() const noexcept { return kind_; }

  // The same error with "<context>: " in front, for adding the file or chunk key on the way up.
  Error with_context(std::string_view context) const;

 private:
  ErrorKind kind_;
};

}  // namespace zarrdirect

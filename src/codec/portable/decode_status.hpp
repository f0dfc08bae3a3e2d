// What a portable decoder (src/codec/portable/) reports for one frame or block. Portable decoders
// run on the GPU too, where they cannot throw: they return a status, and the caller (host codec
// or GPU batch) turns anything but `ok` into an Error naming the chunk key.
#pragma once

#include <cstdint>

#include "util/host_device.hpp"

namespace zarrdirect::codec::portable {

enum class DecodeStatus : std::uint32_t {
  ok = 0,
  truncated,          // the input ends before the format says it does
  corrupt,            // a field, table, offset or length the format does not allow
  output_overflow,    // the decoded bytes would not fit the output
  size_mismatch,      // decoded fewer (or other) bytes than the header or caller expected
  checksum_mismatch,  // a stored checksum disagrees with the decoded bytes
  unsupported,        // valid, but uses what this decoder leaves to the CPU library (dictionary, ...)
};

struct DecodeOutcome {
  DecodeStatus status = DecodeStatus::ok;
  std::uint64_t written = 0;  // decoded bytes (valid when status is ok)
};

// A short, fixed description of a status for error messages.
ZD_HOST_DEVICE inline const char* describe(DecodeStatus status) {
  switch (status) {
    case DecodeStatus::ok: return "ok";
    case DecodeStatus::truncated: return "truncated input";
    case DecodeStatus::corrupt: return "corrupt data";
    case DecodeStatus::output_overflow: return "decoded data larger than expected";
    case DecodeStatus::size_mismatch: return "decoded size differs from the stored size";
    case DecodeStatus::checksum_mismatch: return "checksum mismatch";
    case DecodeStatus::unsupported: return "a feature the GPU decoder does not handle";
  }
  return "unknown status";
}

}  // namespace zarrdirect::codec::portable

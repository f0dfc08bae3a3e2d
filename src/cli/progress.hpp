// A one-line progress bar on stderr for long reads (only when stderr is a terminal): how far,
// how fast (MB/s) and how long is left.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "zarrdirect/settings.hpp"

namespace zarrdirect::cli {

// The bar's text for `done` of `total` chunks after `elapsed_seconds`, `total_bytes` being the
// read's size: "[##########          ]  50.0% 5/10 chunks, 12.3 MB/s, 4 s left". Rate and time
// left are estimated from the share of chunks done; they are left out before the first chunk,
// and the rate when the size is unknown (0).
std::string progress_line(std::size_t done, std::size_t total, std::uint64_t total_bytes, double elapsed_seconds);

// "<1 s", "42 s", "3 min 20 s", "2 h 05 min".
std::string duration_text(double seconds);

class ProgressBar {
 public:
  explicit ProgressBar(bool enabled, std::uint64_t total_bytes = 0) : enabled_(enabled), total_bytes_(total_bytes) {}
  // A callback for Settings::progress; null when disabled.
  ProgressCallback callback();
  // Blanks the line drawn, if any, and returns to its start.
  void clear();

 private:
  bool enabled_;
  std::uint64_t total_bytes_;
  std::size_t drawn_length_ = 0;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point last_draw_{};
};

}  // namespace zarrdirect::cli

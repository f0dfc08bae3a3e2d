// A one-line progress bar on stderr for long reads (only when stderr is a terminal).
#pragma once

#include <chrono>

#include "zarrdirect/settings.hpp"

namespace zarrdirect::cli {

class ProgressBar {
 public:
  explicit ProgressBar(bool enabled) : enabled_(enabled) {}
  // A callback for Settings::progress; null when disabled.
  ProgressCallback callback();
  void clear();

 private:
  bool enabled_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point last_draw_{};
};

}  // namespace zarrdirect::cli

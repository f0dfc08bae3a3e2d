#include "cli/progress.hpp"

#include <cstdio>

#include <fmt/format.h>

namespace zarrdirect::cli {

ProgressCallback ProgressBar::callback() {
  if (!enabled_) return {};
  return [this](std::size_t done, std::size_t total) {
    auto now = std::chrono::steady_clock::now();
    // Redraw at most ten times a second, and only once the read has taken half a second.
    if (now - start_ < std::chrono::milliseconds(500) || now - last_draw_ < std::chrono::milliseconds(100)) return true;
    last_draw_ = now;
    drawn_ = true;
    double fraction = total ? static_cast<double>(done) / static_cast<double>(total) : 1.0;
    int filled = static_cast<int>(fraction * 40);
    fmt::print(stderr, "\r[{:<40}] {:5.1f}% ({}/{} chunks)", std::string(static_cast<std::size_t>(filled), '#'),
               fraction * 100, done, total);
    std::fflush(stderr);
    return true;
  };
}

void ProgressBar::clear() {
  if (drawn_) fmt::print(stderr, "\r{:<80}\r", "");
}

}  // namespace zarrdirect::cli

#include "cli/progress.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include <fmt/format.h>

namespace zarrdirect::cli {

std::string duration_text(double seconds) {
  if (!(seconds >= 1)) return "<1 s";
  const auto whole = static_cast<std::uint64_t>(std::llround(std::min(seconds, 1e12)));
  if (whole < 60) return fmt::format("{} s", whole);
  if (whole < 3600) return fmt::format("{} min {:02} s", whole / 60, whole % 60);
  return fmt::format("{} h {:02} min", whole / 3600, whole / 60 % 60);
}

std::string progress_line(std::size_t done, std::size_t total, std::uint64_t total_bytes, double elapsed_seconds) {
  constexpr int kWidth = 20;
  const double fraction = total ? static_cast<double>(done) / static_cast<double>(total) : 1.0;
  const auto filled = static_cast<std::size_t>(fraction * kWidth);
  std::string line = fmt::format("[{:<{}}] {:5.1f}% {}/{} chunks", std::string(filled, '#'), kWidth, fraction * 100,
                                 done, total);
  if (done == 0 || total == 0 || !(elapsed_seconds > 0)) return line;
  if (total_bytes > 0)
    line += fmt::format(", {:.1f} MB/s", static_cast<double>(total_bytes) * fraction / elapsed_seconds / 1e6);
  if (done < total) line += fmt::format(", {} left", duration_text(elapsed_seconds * (1 - fraction) / fraction));
  return line;
}

ProgressCallback ProgressBar::callback() {
  if (!enabled_) return {};
  return [this](std::size_t done, std::size_t total) {
    auto now = std::chrono::steady_clock::now();
    // Redraw at most ten times a second, and only once the read has taken half a second.
    if (now - start_ < std::chrono::milliseconds(500) || now - last_draw_ < std::chrono::milliseconds(100)) return true;
    last_draw_ = now;
    std::string line =
        progress_line(done, total, total_bytes_, std::chrono::duration<double>(now - start_).count());
    // Spaces over whatever a longer earlier line left.
    const std::size_t length = line.size();
    if (length < drawn_length_) line.append(drawn_length_ - length, ' ');
    drawn_length_ = std::max(drawn_length_, length);
    fmt::print(stderr, "\r{}", line);
    std::fflush(stderr);
    return true;
  };
}

void ProgressBar::clear() {
  if (drawn_length_) fmt::print(stderr, "\r{:<{}}\r", "", drawn_length_);
}

}  // namespace zarrdirect::cli

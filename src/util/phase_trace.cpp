#include "util/phase_trace.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

namespace zarrdirect {

PhaseTrace::PhaseTrace(std::string name, bool enabled)
    : name_(std::move(name)), enabled_(enabled), start_(std::chrono::steady_clock::now()) {}

bool PhaseTrace::enabled_by_environment() {
  const char* text = std::getenv("ZARRDIRECT_TRACE");
  return text != nullptr && std::strcmp(text, "1") == 0;
}

void PhaseTrace::mark(std::string_view what, std::uint64_t value) {
  if (!enabled_) return;
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_).count();
  std::lock_guard lock(mutex_);
  moments_.push_back({ms, std::string(what), value});
}

void PhaseTrace::mark_first(std::string_view what, std::uint64_t value) {
  if (!enabled_) return;
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_).count();
  std::lock_guard lock(mutex_);
  for (const Moment& moment : moments_)
    if (moment.what == what) return;
  moments_.push_back({ms, std::string(what), value});
}

std::string PhaseTrace::report() const {
  std::lock_guard lock(mutex_);
  std::vector<Moment> sorted = moments_;
  // Marks from several threads may be appended out of order by a few microseconds.
  std::stable_sort(sorted.begin(), sorted.end(), [](const Moment& a, const Moment& b) { return a.ms < b.ms; });
  std::string text;
  for (const Moment& moment : sorted) text += fmt::format("{} +{:.3f} {} {}\n", name_, moment.ms, moment.what, moment.value);
  return text;
}

void PhaseTrace::print() {
  if (!enabled_ || printed_) return;
  printed_ = true;
  const std::string text = report();
  if (!text.empty()) std::fputs(text.c_str(), stderr);
}

void PhaseLaps::lap(std::size_t phase) {
  const auto now = std::chrono::steady_clock::now();
  if (started_ && phase < nanoseconds_.size())
    nanoseconds_[phase] += static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(now - last_).count());
  started_ = true;
  last_ = now;
}

}  // namespace zarrdirect

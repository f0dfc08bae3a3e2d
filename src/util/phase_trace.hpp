// A timeline of named moments in one operation, for finding where its time goes without a
// profiler (the GPU machine has none): with ZARRDIRECT_TRACE=1 in the environment, the GPU
// decoding sink marks its batches' launches and waits, and its workers' time split (PhaseLaps
// below), and prints the timeline to stderr when the read ends. Off (the default), mark() is one branch and nothing is stored or printed.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace zarrdirect {

class PhaseTrace {
 public:
  // Enabled when `enabled` is true; the clock starts now.
  PhaseTrace(std::string name, bool enabled);
  // Enabled by the environment: ZARRDIRECT_TRACE=1.
  explicit PhaseTrace(std::string name) : PhaseTrace(std::move(name), enabled_by_environment()) {}

  static bool enabled_by_environment();
  bool enabled() const { return enabled_; }

  // Records `what` (and a number that goes with it, such as a byte count) at the current time.
  // Safe from any thread.
  void mark(std::string_view what, std::uint64_t value = 0);
  // mark(), for the first call with this `what` only (a read's first chunk, whichever worker has
  // it). Safe from any thread.
  void mark_first(std::string_view what, std::uint64_t value = 0);

  // One line per mark, in time order: "<name> +<ms since start> <what> <value>".
  std::string report() const;
  // report() to stderr, once, when enabled and anything was marked.
  void print();

 private:
  struct Moment {
    double ms = 0;
    std::string what;
    std::uint64_t value = 0;
  };
  std::string name_;
  bool enabled_ = false;
  bool printed_ = false;
  std::chrono::steady_clock::time_point start_;
  mutable std::mutex mutex_;
  std::vector<Moment> moments_;
};

// One worker's time split into a few phases, lap by lap: lap(p) adds the time since the previous
// lap to phase p. The first lap only starts the clock (it has no previous one). Owned by one
// thread, unlocked; the owner of several sums them when the work is done. For traces: a worker's
// time between a sink's calls is its reading, inside them its listing, waiting and copying.
class PhaseLaps {
 public:
  explicit PhaseLaps(std::size_t phases = 0) : nanoseconds_(phases, 0) {}

  void lap(std::size_t phase);
  // Nanoseconds per phase so far.
  const std::vector<std::uint64_t>& nanoseconds() const { return nanoseconds_; }

 private:
  std::chrono::steady_clock::time_point last_{};
  bool started_ = false;
  std::vector<std::uint64_t> nanoseconds_;
};

}  // namespace zarrdirect

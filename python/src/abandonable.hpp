// Opening metadata so that Ctrl-C is honoured at once.
//
// Parsing a large metadata document (a consolidated .zmetadata of thousands of arrays, up to the
// library's 64 MiB limit) takes seconds and has no cancellation point. Unlike a read, an open
// writes into no memory the caller owns, so it can be abandoned: it runs on a detached helper
// thread, the calling thread waits in slices with the GIL released and checks Python's signals
// between them; on Ctrl-C it raises KeyboardInterrupt at once and the helper finishes (and throws
// its result away) on its own.
#pragma once

#include <chrono>
#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>

#include <pybind11/pybind11.h>

namespace zarrdirect::python {

// Runs `open()` (returning T) as described above. Call with the GIL held.
template <typename T, typename Open>
T open_abandoning_on_interrupt(Open open) {
  struct State {
    std::mutex mutex;
    std::condition_variable finished_cv;
    bool finished = false;
    std::optional<T> value;
    std::exception_ptr error;
  };
  auto state = std::make_shared<State>();
  std::thread([state, open = std::move(open)]() mutable {
    std::optional<T> value;
    std::exception_ptr error;
    try {
      value.emplace(open());
    } catch (...) {
      error = std::current_exception();
    }
    std::lock_guard lock(state->mutex);
    state->value = std::move(value);
    state->error = error;
    state->finished = true;
    state->finished_cv.notify_all();
  }).detach();

  for (;;) {
    {
      pybind11::gil_scoped_release release;
      std::unique_lock lock(state->mutex);
      if (state->finished_cv.wait_for(lock, std::chrono::milliseconds(50), [&] { return state->finished; })) break;
    }
    if (PyErr_CheckSignals() != 0) throw pybind11::error_already_set();
  }
  std::lock_guard lock(state->mutex);
  if (state->error) std::rethrow_exception(state->error);
  return std::move(*state->value);
}

}  // namespace zarrdirect::python

#include "interruptible.hpp"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>

#include "cuda_runtime.hpp"

namespace py = pybind11;

namespace zarrdirect::python {
namespace {

constexpr auto kPollInterval = std::chrono::milliseconds(50);

// What the helper thread and the waiting thread share. Held by shared_ptr so that neither side
// outlives it, whatever order they finish in.
struct ReadState {
  std::mutex mutex;
  std::condition_variable finished_cv;
  bool finished = false;
  std::exception_ptr error;
  std::atomic<bool> cancel{false};
  std::atomic<bool> reported{false};
  std::atomic<std::size_t> done{0};
  std::atomic<std::size_t> total{0};
};

// A Python exception taken out of the interpreter's error indicator, to raise later.
class PendingPythonError {
 public:
  PendingPythonError() = default;
  PendingPythonError(const PendingPythonError&) = delete;
  PendingPythonError& operator=(const PendingPythonError&) = delete;
  ~PendingPythonError() {  // with the GIL held: every exit of run_interruptible holds it
#if PY_VERSION_HEX >= 0x030C0000
    Py_XDECREF(exception_);
#else
    Py_XDECREF(type_);
    Py_XDECREF(value_);
    Py_XDECREF(traceback_);
#endif
  }
#if PY_VERSION_HEX >= 0x030C0000
  bool empty() const { return exception_ == nullptr; }
  void take_current() { exception_ = PyErr_GetRaisedException(); }
  [[noreturn]] void raise() {
    PyErr_SetRaisedException(exception_);
    exception_ = nullptr;
    throw py::error_already_set();
  }
#else
  bool empty() const { return type_ == nullptr; }
  void take_current() { PyErr_Fetch(&type_, &value_, &traceback_); }
  [[noreturn]] void raise() {
    PyErr_Restore(type_, value_, traceback_);
    type_ = value_ = traceback_ = nullptr;
    throw py::error_already_set();
  }
#endif

 private:
#if PY_VERSION_HEX >= 0x030C0000
  PyObject* exception_ = nullptr;
#else
  PyObject* type_ = nullptr;
  PyObject* value_ = nullptr;
  PyObject* traceback_ = nullptr;
#endif
};

// Stops and joins the helper thread on every way out of run_interruptible, exceptions included,
// so the read never outlives the memory it writes to.
class HelperThread {
 public:
  HelperThread(std::shared_ptr<ReadState> state, std::function<void()> run)
      : state_(std::move(state)), thread_(std::move(run)) {}
  HelperThread(const HelperThread&) = delete;
  HelperThread& operator=(const HelperThread&) = delete;
  ~HelperThread() { join(); }
  void join() {
    if (!thread_.joinable()) return;
    py::gil_scoped_release release;
    {
      std::unique_lock lock(state_->mutex);
      if (!state_->finished) state_->cancel = true;
    }
    thread_.join();
  }

 private:
  std::shared_ptr<ReadState> state_;
  std::thread thread_;
};

}  // namespace

void run_interruptible(const std::function<void(const ProgressCallback&)>& body, const py::object& callback,
                       int cuda_device) {
  auto state = std::make_shared<ReadState>();
  ProgressCallback progress = [state](std::size_t done, std::size_t total) {
    state->done.store(done, std::memory_order_relaxed);
    state->total.store(total, std::memory_order_relaxed);
    state->reported.store(true, std::memory_order_release);
    return !state->cancel.load(std::memory_order_relaxed);
  };
  HelperThread helper(state, [state, &body, progress, cuda_device] {
    try {
      set_current_device(cuda_device);
      body(progress);
    } catch (...) {
      state->error = std::current_exception();
    }
    {
      std::lock_guard lock(state->mutex);
      state->finished = true;
    }
    state->finished_cv.notify_all();
  });

  PendingPythonError python_error;
  const bool has_callback = !callback.is_none();
  auto wait_slice = [&] {
    py::gil_scoped_release release;
    std::unique_lock lock(state->mutex);
    return state->finished_cv.wait_for(lock, kPollInterval, [&] { return state->finished; });
  };
  while (!wait_slice()) {
    if (!python_error.empty()) continue;  // cancelled already: wait for the read to stop
    if (PyErr_CheckSignals() != 0) {
      python_error.take_current();
      state->cancel = true;
      continue;
    }
    if (!has_callback || !state->reported.load(std::memory_order_acquire)) continue;
    try {
      py::object keep_going = callback(state->done.load(), state->total.load());
      if (keep_going.ptr() == Py_False) state->cancel = true;
    } catch (py::error_already_set& e) {  // the callable raised: stop, then raise that
      e.restore();
      python_error.take_current();
      state->cancel = true;
    }
  }
  helper.join();

  if (!python_error.empty()) python_error.raise();
  if (state->error) std::rethrow_exception(state->error);
  // One last call, so a progress bar ends at 100 % however short the read was.
  if (has_callback && state->reported.load()) callback(state->total.load(), state->total.load());
}

}  // namespace zarrdirect::python

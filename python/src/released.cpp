#include "released.h"

#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <optional>
#include <thread>

namespace nb = nanobind;

namespace ltx::python {

GenerateResult generate_interruptible(Engine& engine, const GenerateRequest& request, PythonProgress& progress) {
  const CancellationToken cancel;
  std::optional<GenerateResult> result;
  std::exception_ptr failure;
  std::optional<nb::python_error> interrupt;  // what a signal handler raised
  std::mutex mutex;
  std::condition_variable finished;
  bool done = false;
  {
    nb::gil_scoped_release release;
    std::thread worker([&] {
      try {
        result.emplace(engine.generate(request, progress.callback(), cancel));
      } catch (...) {
        failure = std::current_exception();
      }
      const std::lock_guard lock(mutex);
      done = true;
      finished.notify_one();
    });
    std::unique_lock lock(mutex);
    while (!finished.wait_for(lock, std::chrono::milliseconds(50), [&] { return done; })) {
      if (interrupt) continue;  // cancelled: the call stops at its next step
      lock.unlock();
      {
        nb::gil_scoped_acquire gil;
        // Signal handlers run on the main thread only; elsewhere this returns 0.
        if (PyErr_CheckSignals() != 0) interrupt.emplace();  // takes the raised exception out of the error state
      }
      if (interrupt) cancel.cancel();
      lock.lock();
    }
    lock.unlock();
    worker.join();
  }
  // A result finished after the signal is dropped: the handler's exception is what the caller asked for.
  if (interrupt) {
    nb::python_error e = std::move(*interrupt);
    interrupt.reset();
    throw e;
  }
  progress.raise_if_callable_raised();
  if (failure) std::rethrow_exception(failure);
  return std::move(*result);
}

}  // namespace ltx::python

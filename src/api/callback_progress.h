// The stages' progress (stages::ProgressReporter) as the public API's ProgressEvent callbacks, with the
// cancellation checks: a cancelled token stops the call at the next stage begin, step or stage end by throwing
// ltx::Error (Cancelled). What the callback throws passes through unchanged, and is remembered so that the engine
// does not recategorize it.
#pragma once

#include <string_view>

#include "ltx/progress.hpp"
#include "stages/progress.h"

namespace ltx::api {

class CallbackProgress final : public stages::ProgressReporter {
 public:
  // `callback` may be empty; `cancel` may be null (nothing to check: loading).
  CallbackProgress(const ProgressCallback& callback, const CancellationToken* cancel)
      : callback_(callback), cancel_(cancel) {}

  void begin(std::string_view stage) override;
  void add_steps(int64_t n) override { state_.add_steps(n); }
  void step() override;
  void end() override;
  void note(std::string_view message) override;

  // Throws ltx::Error (Cancelled) when the token is cancelled.
  void check_cancelled() const;
  // Whether the exception in flight came from the callback.
  bool callback_threw() const { return callback_threw_; }
  double elapsed() const { return state_.elapsed(); }  // seconds since the current stage began

 private:
  void emit(ProgressEvent::Kind kind, std::string_view message = {});

  const ProgressCallback& callback_;
  const CancellationToken* cancel_;
  stages::ProgressState state_;
  bool callback_threw_ = false;
};

}  // namespace ltx::api

#include "api/callback_progress.h"

#include <string>

#include "ltx/error.hpp"

namespace ltx::api {

void CallbackProgress::check_cancelled() const {
  if (cancel_ != nullptr && cancel_->cancelled()) {
    const std::string where = state_.stage().empty() ? "before it began" : "in stage \"" + state_.stage() + "\"";
    throw Error("generate", "cancelled " + where, ErrorCategory::Cancelled);
  }
}

void CallbackProgress::emit(ProgressEvent::Kind kind, std::string_view message) {
  if (!callback_) return;
  ProgressEvent e;
  e.kind = kind;
  e.stage = state_.stage();
  e.step = state_.done();
  e.total = state_.total();
  e.elapsed = state_.elapsed();
  e.eta = kind == ProgressEvent::Kind::Step ? state_.eta() : -1.0;
  e.message = message;
  try {
    callback_(e);
  } catch (...) {
    callback_threw_ = true;
    throw;
  }
}

// Checked before a stage starts (no work begun for a call already cancelled) and after each event (a callback that
// cancels stops the call there).
void CallbackProgress::begin(std::string_view stage) {
  check_cancelled();
  state_.begin(stage);
  emit(ProgressEvent::Kind::Begin);
  check_cancelled();
}

void CallbackProgress::step() {
  state_.step();
  emit(ProgressEvent::Kind::Step);
  check_cancelled();
}

void CallbackProgress::end() {
  emit(ProgressEvent::Kind::End);
  check_cancelled();
}

void CallbackProgress::note(std::string_view message) { emit(ProgressEvent::Kind::Note, message); }

}  // namespace ltx::api

// Progress of a generation and its cancellation. A stage ("load models", "encode prompt", "denoise", "decode")
// begins, announces its steps (each denoising loop one per sigma interval, the decode one per part), reports each
// finished step and ends. Cancellation is checked at each of those points; a cancelled call throws ltx::Error with
// ErrorCategory::Cancelled, frees what it allocated and leaves the engine usable.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string_view>

namespace ltx {

struct ProgressEvent {
  enum class Kind { Begin, Step, End, Note };
  Kind kind = Kind::Note;
  std::string_view stage;    // the current stage
  int64_t step = 0;          // Step: steps done in this stage; End: steps the stage ran
  int64_t total = 0;         // steps announced for this stage so far
  double elapsed = 0;        // seconds since the stage began
  double eta = -1;           // Step: seconds left at the mean step time so far; negative while unknown
  std::string_view message;  // Note: a line of information (a model file made, LoRA layers fused)
};

// Called on the thread that runs generate(); it may throw, which ends the call with that exception.
using ProgressCallback = std::function<void(const ProgressEvent&)>;

// Shared between the caller (who may cancel from any thread, e.g. a signal handler's watcher or a server's DELETE)
// and the call that checks it. Copies share one flag.
class CancellationToken {
 public:
  CancellationToken() : flag_(std::make_shared<std::atomic<bool>>(false)) {}
  void cancel() const { flag_->store(true, std::memory_order_relaxed); }
  bool cancelled() const { return flag_->load(std::memory_order_relaxed); }
  void reset() const { flag_->store(false, std::memory_order_relaxed); }

 private:
  std::shared_ptr<std::atomic<bool>> flag_;
};

}  // namespace ltx

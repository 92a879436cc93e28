// The engine as a library: load a model set once, generate many times. Every failure is an ltx::Error
// (ltx/error.hpp) with a category; a failed or cancelled call leaves the engine usable.
//
//   ltx::Engine engine(ltx::embedded_default_model());
//   ltx::GenerateRequest request = ltx::embedded_default_request();
//   request.prompts = {"a red fox running through fresh snow"};
//   ltx::GenerateResult result = engine.generate(request);
//   ltx::write_mp4("fox.mp4", result.videos[0]);
#pragma once

#include <memory>
#include <string>

#include "ltx/error.hpp"
#include "ltx/options.hpp"
#include "ltx/progress.hpp"
#include "ltx/request.hpp"
#include "ltx/result.hpp"

namespace ltx {

// The engine's version ("0.1.0").
const char* version();

class Engine {
 public:
  // Checks the options (files exist, LoRAs fit the DiT) and loads every model; `progress` hears the "load models"
  // stage and its notes. Process-wide, it sets the pool's thread count (EngineOptions::threads) and has freed large
  // buffers returned to the system at once (so a long-lived engine does not keep each call's peak resident).
  explicit Engine(EngineOptions options, const ProgressCallback& progress = {});
  ~Engine();
  Engine(Engine&&) noexcept;
  Engine& operator=(Engine&&) noexcept;

  // Checks the request against the loaded models before any heavy work (ErrorCategory::InvalidRequest naming the
  // field, the value and the valid range), then generates. One call at a time per engine.
  GenerateResult generate(const GenerateRequest& request, const ProgressCallback& progress = {},
                          const CancellationToken& cancel = {});

  // `prompt` rewritten by the loaded text encoder (Gemma 3) into the detailed caption LTX-2 is trained on, as
  // generate() does with enhance_prompt. Needs a text encoder (ErrorCategory::InvalidRequest without one). One call
  // at a time per engine, generate() included.
  std::string enhance(const std::string& prompt, const EnhanceRequest& request = {});

  // The checks generate() makes before any work, alone. It reads only what loading fixed, so it may run on
  // another thread while generate() runs (a server checks a new request while the previous one generates).
  void check(const GenerateRequest& request) const;

  const EngineOptions& options() const;
  std::string model_version() const;  // "2.3", "2.0"
  double load_seconds() const;        // wall time the constructor spent loading

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ltx

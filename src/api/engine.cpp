// ltx::Engine (ltx/engine.hpp) over the stages: the constructor loads a stages::LoadedModels, generate() checks
// the request and runs stages::generate with the caller's progress and cancellation (api/callback_progress.h),
// mapping every failure to an ltx::Error with a category (api/error_phase.h).
#include "ltx/engine.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <mutex>
#include <optional>
#include <utility>

#include "api/callback_progress.h"
#include "api/convert.h"
#include "api/error_phase.h"
#include "api/request_checks.h"
#include "core/cpu_time.h"
#include "core/int8_activations.h"
#include "core/malloc_policy.h"
#include "core/system_memory.h"
#include "core/thread_pool.h"
#include "graph/compile.h"
#include "stages/generate.h"
#include "stages/loaded_models.h"
#include "stages/prompt_enhancer.h"

namespace ltx {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// What is wrong with the options themselves, before any file is looked at.
void check_options(const EngineOptions& o) {
  std::vector<std::string> problems;
  if (o.checkpoint.empty()) problems.push_back("checkpoint is required (EngineOptions::checkpoint, --checkpoint)");
  if (!o.dit_config.empty() && o.dit.empty()) problems.push_back("dit_config needs dit (--dit-config needs --dit)");
  if (o.threads < 0)
    problems.push_back("threads must be >= 0 (0: $LTX_THREADS or every core), got " + std::to_string(o.threads));
  if (const auto names = available_backends(); std::find(names.begin(), names.end(), o.backend) == names.end()) {
    std::string valid;
    for (const std::string& n : names) valid += (valid.empty() ? "" : ", ") + n;
    problems.push_back("backend '" + o.backend + "' is not one of this build's (valid: " + valid + ")");
  } else {
    try {
      backend_named(o.backend, o.xla_plugin);  // loads the xla backend's plugin: a bad one is named here
    } catch (const Error& e) {
      problems.push_back("backend '" + o.backend + "': " + e.what());
    }
  }
  if (o.precision != Precision::Production && o.precision != Precision::Validation)
    problems.push_back("precision " + std::to_string(static_cast<int>(o.precision)) +
                       " is neither Production nor Validation");
  for (const LoraFile& l : o.loras)
    if (!std::isfinite(l.strength)) problems.push_back("the strength of LoRA " + l.path + " is not a finite number");
  if (o.distilled_lora && !std::isfinite(o.distilled_lora->strength))
    problems.push_back("the strength of distilled LoRA " + o.distilled_lora->path + " is not a finite number");
  if (o.distilled_lora_stage1_strength && !o.distilled_lora)
    problems.push_back(
        "distilled_lora_stage1_strength needs distilled_lora (--distilled-lora-stage1 needs "
        "--distilled-lora)");
  if (o.distilled_lora_stage1_strength && !std::isfinite(*o.distilled_lora_stage1_strength))
    problems.push_back("distilled_lora_stage1_strength is not a finite number");
  if (problems.empty()) return;
  std::string joined;
  for (size_t i = 0; i < problems.size(); ++i) joined += (i ? "; " : "") + problems[i];
  throw Error("engine", joined, ErrorCategory::InvalidRequest);
}

// The engine's state; a moved-from engine has none, and a call on it is the caller's mistake, reported rather than
// crashing. (A template, so that it need not name the private Engine::Impl.)
template <class Pointer>
auto& need(const Pointer& impl) {
  if (!impl) throw Error("engine", "this engine was moved from", ErrorCategory::InvalidRequest);
  return *impl;
}

}  // namespace

struct Engine::Impl {
  EngineOptions options;
  std::unique_ptr<stages::LoadedModels> models;
  double load_seconds = 0;
  std::optional<StageTime> unreported_load;  // the load's time, for the first result
  std::mutex busy;                           // one generate() at a time
};

Engine::Engine(EngineOptions options, const ProgressCallback& progress) : impl_(std::make_unique<Impl>()) {
  impl_->options = std::move(options);
  const EngineOptions& o = impl_->options;
  check_options(o);
  // Process-wide, as the CLI's main does: freed large buffers go back to the system at once, so a long-lived
  // engine does not keep each call's peak resident (core/malloc_policy.h).
  return_large_buffers_to_system();
  api::in_phase(ErrorCategory::InvalidRequest, [&] { set_thread_count(o.threads); });
  set_int8_activations(o.int8_activations);
  api::CallbackProgress reporter(progress, nullptr);
  const auto t0 = Clock::now();
  const double cpu0 = process_cpu_seconds();
  try {
    reporter.begin("load models");
    impl_->models = stages::load_models(api::to_stages(o), &reporter);
    reporter.end();
  } catch (...) {
    if (reporter.callback_threw()) throw;
    api::rethrow_in_phase(ErrorCategory::InvalidModel, ErrorCategory::InvalidModel);
  }
  impl_->load_seconds = seconds_since(t0);
  impl_->unreported_load = StageTime{"load models", impl_->load_seconds, process_cpu_seconds() - cpu0};
}

Engine::~Engine() = default;
Engine::Engine(Engine&&) noexcept = default;
Engine& Engine::operator=(Engine&&) noexcept = default;

void Engine::check(const GenerateRequest& request) const {
  const Impl& impl = need(impl_);
  api::in_phase(
      ErrorCategory::InvalidRequest,
      [&] {
        std::vector<std::string> problems = api::request_problems(request);
        for (std::string& p : api::engine_problems(request, impl.options, *impl.models))
          problems.push_back(std::move(p));
        api::throw_if_any(problems);
      },
      ErrorCategory::InvalidRequest);
}

GenerateResult Engine::generate(const GenerateRequest& given, const ProgressCallback& progress,
                                const CancellationToken& cancel) {
  Impl& impl = need(impl_);
  std::unique_lock busy(impl.busy, std::try_to_lock);
  if (!busy.owns_lock())
    throw Error("generate", "this engine is already generating: one call at a time per engine",
                ErrorCategory::InvalidRequest);
  const auto t0 = Clock::now();
  // A retake's frames, size and rate are its file's: they replace the given ones before the checks.
  const GenerateRequest request =
      api::in_phase(ErrorCategory::InvalidRequest, [&] { return api::with_retake_source(given); });
  check(request);
  const size_t budget = impl.options.memory_budget_bytes > 0
                            ? static_cast<size_t>(impl.options.memory_budget_bytes)
                            : api::in_phase(ErrorCategory::Internal, [] { return available_memory_bytes(); });
  api::CallbackProgress reporter(progress, &cancel);
  stages::GenerateReport report;
  try {
    reporter.check_cancelled();
    report = stages::generate(*impl.models, api::to_stages(request, budget), &reporter);
  } catch (...) {
    if (reporter.callback_threw()) throw;
    api::rethrow_in_phase(ErrorCategory::Internal);
  }
  GenerateResult result = api::to_result(std::move(report), request, impl.options);
  result.seconds = seconds_since(t0);
  if (impl.unreported_load) {  // the first result carries the load it waited for
    result.stages.insert(result.stages.begin(), *impl.unreported_load);
    result.seconds += impl.unreported_load->seconds;
    impl.unreported_load.reset();
  }
  result.peak_rss_bytes = peak_rss_bytes();
  return result;
}

std::string Engine::enhance(const std::string& prompt, const EnhanceRequest& request) {
  Impl& impl = need(impl_);
  std::unique_lock busy(impl.busy, std::try_to_lock);
  if (!busy.owns_lock())
    throw Error("enhance", "this engine is already generating: one call at a time per engine",
                ErrorCategory::InvalidRequest);
  if (!impl.models->encoder)
    throw Error("enhance",
                "prompt enhancement needs a text encoder, and the engine has none (EngineOptions::text_encoder)",
                ErrorCategory::InvalidRequest);
  if (request.max_new_tokens < 1 || request.max_new_tokens > 8192)
    throw Error("enhance", "max_new_tokens must be in [1, 8192], got " + std::to_string(request.max_new_tokens),
                ErrorCategory::InvalidRequest);
  stages::EnhanceOptions o;
  o.seed = request.seed;
  o.greedy = request.greedy;
  o.max_new_tokens = request.max_new_tokens;
  o.system_prompt = request.system_prompt;
  stages::PromptEncoder& encoder = *impl.models->encoder;
  gemma3::VisionTower* vision = nullptr;
  if (!request.image.empty()) {
    o.image = api::in_phase(ErrorCategory::InvalidRequest, [&] { return io::read_image(request.image); });
    vision = api::in_phase(ErrorCategory::InvalidModel, [&] { return encoder.vision(); });
  }
  api::in_phase(ErrorCategory::InvalidRequest,
                [&] { stages::check_enhance_request(encoder.model(), encoder.tokenizer(), prompt, o, vision); });
  try {
    std::string out = stages::enhance_prompt(encoder.model(), encoder.tokenizer(), prompt, o, {}, vision).prompt;
    encoder.release_activations();  // the prefill plan's arena, until the next call
    return out;
  } catch (...) {
    encoder.release_activations();
    api::rethrow_in_phase(ErrorCategory::Internal);
  }
}

std::vector<std::string> available_backends() { return backend_names(); }

const EngineOptions& Engine::options() const { return need(impl_).options; }

std::string Engine::model_version() const { return need(impl_).models->models.model_version; }

double Engine::load_seconds() const { return need(impl_).load_seconds; }

}  // namespace ltx

// The C API (include/ltx/ltx.h) over the C++ API: each opaque handle owns the C++ object it names, and every entry
// point runs its body inside guard(), which turns any exception into an ltx_status and this thread's message, so
// none crosses into C.
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>

#include "ltx/ltx.h"
#include "ltx/ltx.hpp"

struct ltx_engine_options {
  ltx::EngineOptions options;
};
struct ltx_request {
  ltx::GenerateRequest request;
};
struct ltx_cancel {
  ltx::CancellationToken token;
};
struct ltx_engine {
  ltx::Engine engine;
};
struct ltx_result {
  ltx::GenerateResult result;
};

namespace {

thread_local std::string t_last_error;

void set_last_error(const char* message) noexcept {
  try {
    t_last_error = message;
  } catch (...) {  // no memory left for the message: an empty one beats an exception into C
    t_last_error.clear();
  }
}

ltx_status status_of(ltx::ErrorCategory category) {
  switch (category) {
    case ltx::ErrorCategory::InvalidRequest:
      return LTX_ERROR_INVALID_REQUEST;
    case ltx::ErrorCategory::InvalidModel:
      return LTX_ERROR_INVALID_MODEL;
    case ltx::ErrorCategory::Io:
      return LTX_ERROR_IO;
    case ltx::ErrorCategory::OutOfMemory:
      return LTX_ERROR_OUT_OF_MEMORY;
    case ltx::ErrorCategory::Cancelled:
      return LTX_ERROR_CANCELLED;
    // The engine names the phase's category before throwing; an Unspecified one reaching here is a bug.
    case ltx::ErrorCategory::Unspecified:
    case ltx::ErrorCategory::Internal:
      break;
  }
  return LTX_ERROR_INTERNAL;
}

[[noreturn]] void reject(const char* function, const std::string& message) {
  throw ltx::Error(function, message, ltx::ErrorCategory::InvalidRequest);
}

template <class T>
T& need(T* pointer, const char* function, const char* argument) {
  if (pointer == nullptr) reject(function, std::string(argument) + " is NULL");
  return *pointer;
}

const char* need(const char* text, const char* function, const char* argument) {
  if (text == nullptr) reject(function, std::string(argument) + " is NULL");
  return text;
}

// Runs body(function) and maps what it throws; the message of a success is "".
template <class Body>
ltx_status guard(const char* function, Body&& body) noexcept {
  t_last_error.clear();
  try {
    body(function);
    return LTX_OK;
  } catch (const ltx::Error& e) {
    set_last_error(e.what());
    return status_of(e.category());
  } catch (const std::bad_alloc&) {
    set_last_error("out of memory (an allocation failed)");
    return LTX_ERROR_OUT_OF_MEMORY;
  } catch (const std::exception& e) {
    set_last_error(e.what());
    return LTX_ERROR_INTERNAL;
  } catch (...) {
    set_last_error("an unknown exception (a bug: please report it)");
    return LTX_ERROR_INTERNAL;
  }
}

// For the constructors that return a handle: NULL on failure, with the message in ltx_last_error().
template <class Make>
auto make_or_null(const char* function, Make&& make) noexcept -> decltype(make()) {
  decltype(make()) made = nullptr;
  guard(function, [&](const char*) { made = make(); });
  return made;
}

int parse_count(const char* function, const char* key, std::string_view value) {
  int count = 0;
  const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), count);
  if (value.empty() || error != std::errc() || end != value.data() + value.size() || count < 0)
    reject(function, std::string(key) + " must be a count >= 0 (0: every core), got \"" + std::string(value) + "\"");
  return count;
}

void set_option(const char* function, ltx::EngineOptions& o, std::string_view key, const char* value_text) {
  const std::string value = value_text;
  if (key == "checkpoint") {
    o.checkpoint = value;
  } else if (key == "dit") {
    o.dit = value;
  } else if (key == "dit_config") {
    o.dit_config = value;
  } else if (key == "text_encoder") {
    o.text_encoder = value;
  } else if (key == "text_encoder_mmproj") {
    o.text_encoder_mmproj = value;
  } else if (key == "upsampler") {
    o.upsampler = value;
  } else if (key == "lora") {
    o.loras.push_back(ltx::parse_lora_file(value, "lora"));
  } else if (key == "distilled_lora") {
    o.distilled_lora = ltx::parse_lora_file(value, "distilled_lora");
  } else if (key == "distilled_lora_stage1_strength") {
    float strength = 0;  // std::from_chars: no locale, no leading '+' or spaces
    const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), strength);
    if (value.empty() || error != std::errc() || end != value.data() + value.size() || !std::isfinite(strength))
      reject(function, "distilled_lora_stage1_strength must be a finite number, got \"" + value + "\"");
    o.distilled_lora_stage1_strength = strength;
  } else if (key == "lora_allow_partial") {
    if (value != "0" && value != "1")
      reject(function, R"(lora_allow_partial must be "0" or "1", got ")" + value + "\"");
    o.lora_allow_partial = value == "1";
  } else if (key == "int8_activations") {
    if (value != "0" && value != "1") reject(function, R"(int8_activations must be "0" or "1", got ")" + value + "\"");
    o.int8_activations = value == "1";
  } else if (key == "precision") {
    if (value == "production")
      o.precision = ltx::Precision::Production;
    else if (value == "validation")
      o.precision = ltx::Precision::Validation;
    else
      reject(function, R"(precision must be "production" or "validation", got ")" + value + "\"");
  } else if (key == "backend") {
    o.backend = value;
  } else if (key == "xla_plugin") {
    o.xla_plugin = value;
  } else if (key == "threads") {
    o.threads = parse_count(function, "threads", value);
  } else if (key == "memory_budget") {
    o.memory_budget_bytes = ltx::parse_size(value, "memory_budget");
  } else {
    reject(function, "unknown option key \"" + std::string(key) +
                         "\"; valid keys: checkpoint, dit, dit_config, text_encoder, text_encoder_mmproj, upsampler, "
                         "lora, distilled_lora, distilled_lora_stage1_strength, lora_allow_partial, int8_activations, "
                         "precision, threads, memory_budget, backend");
  }
}

void reject_nan(const char* function, const char* what, double value) {
  if (std::isnan(value)) reject(function, std::string(what) + " is NaN");
}

ltx::Guidance& guidance_of(const char* function, ltx::GenerateRequest& r, ltx_stream stream) {
  if (stream == LTX_VIDEO) return r.video_guidance;
  if (stream == LTX_AUDIO) return r.audio_guidance;
  reject(function, "stream must be LTX_VIDEO or LTX_AUDIO, got " + std::to_string(static_cast<int>(stream)));
}

ltx_progress_kind kind_of(ltx::ProgressEvent::Kind kind) {
  switch (kind) {
    case ltx::ProgressEvent::Kind::Begin:
      return LTX_PROGRESS_BEGIN;
    case ltx::ProgressEvent::Kind::Step:
      return LTX_PROGRESS_STEP;
    case ltx::ProgressEvent::Kind::End:
      return LTX_PROGRESS_END;
    case ltx::ProgressEvent::Kind::Note:
      break;
  }
  return LTX_PROGRESS_NOTE;
}

// The C callback as a ProgressCallback; `on_stop` runs when it returns nonzero. The event's strings are copied
// because a string_view need not end in NUL.
template <class OnStop>
ltx::ProgressCallback wrap_progress(ltx_progress_fn progress, void* user, OnStop on_stop) {
  if (progress == nullptr) return {};
  return [progress, user, on_stop](const ltx::ProgressEvent& e) {
    const std::string stage(e.stage), message(e.message);
    const ltx_progress_event event{kind_of(e.kind), stage.c_str(), e.step, e.total, e.elapsed, e.eta, message.c_str()};
    if (progress(&event, user) != 0) on_stop();
  };
}

}  // namespace

extern "C" {

const char* ltx_version(void) { return ltx::version(); }

const char* ltx_last_error(void) { return t_last_error.c_str(); }

const char* ltx_status_name(ltx_status status) {
  switch (status) {
    case LTX_OK:
      return "ok";
    case LTX_ERROR_INVALID_REQUEST:
      return "invalid_request";
    case LTX_ERROR_INVALID_MODEL:
      return "invalid_model";
    case LTX_ERROR_IO:
      return "io";
    case LTX_ERROR_OUT_OF_MEMORY:
      return "out_of_memory";
    case LTX_ERROR_CANCELLED:
      return "cancelled";
    case LTX_ERROR_INTERNAL:
      return "internal";
  }
  return "unknown";  // a value outside the enum, from a cast
}

// ---- what an engine loads ----

ltx_engine_options* ltx_engine_options_new(void) {
  return make_or_null(__func__, [] { return new ltx_engine_options{}; });
}

ltx_status ltx_engine_options_default_model(ltx_engine_options** out) {
  return guard(__func__, [&](const char* fn) {
    need(out, fn, "out") = nullptr;
    *out = new ltx_engine_options{ltx::embedded_default_model()};
  });
}

ltx_status ltx_engine_options_set(ltx_engine_options* options, const char* key, const char* value) {
  return guard(__func__, [&](const char* fn) {
    set_option(fn, need(options, fn, "options").options, need(key, fn, "key"), need(value, fn, "value"));
  });
}

void ltx_engine_options_free(ltx_engine_options* options) { delete options; }

// ---- one request ----

ltx_request* ltx_request_new(void) {
  return make_or_null(__func__, [] { return new ltx_request{}; });
}

ltx_request* ltx_request_new_default_model(void) {
  return make_or_null(__func__, [] { return new ltx_request{ltx::embedded_default_request()}; });
}

ltx_status ltx_request_add_prompt(ltx_request* request, const char* prompt) {
  return guard(__func__, [&](const char* fn) {
    need(request, fn, "request").request.prompts.emplace_back(need(prompt, fn, "prompt"));
  });
}

ltx_status ltx_request_set_negative_prompt(ltx_request* request, const char* prompt) {
  return guard(__func__, [&](const char* fn) {
    need(request, fn, "request").request.negative_prompt = need(prompt, fn, "prompt");
  });
}

ltx_status ltx_request_set_text_embeddings(ltx_request* request, const char* path) {
  return guard(__func__,
               [&](const char* fn) { need(request, fn, "request").request.text_embeddings = need(path, fn, "path"); });
}

ltx_status ltx_request_set_size(ltx_request* request, int64_t width, int64_t height, int64_t frames) {
  return guard(__func__, [&](const char* fn) {
    ltx::GenerateRequest& r = need(request, fn, "request").request;
    r.width = width;
    r.height = height;
    r.frames = frames;
  });
}

ltx_status ltx_request_set_fps(ltx_request* request, double fps) {
  return guard(__func__, [&](const char* fn) {
    ltx::GenerateRequest& r = need(request, fn, "request").request;
    reject_nan(fn, "fps", fps);  // NaN passes every range comparison the engine makes
    r.fps = fps;
  });
}

ltx_status ltx_request_set_steps(ltx_request* request, int steps) {
  return guard(__func__, [&](const char* fn) { need(request, fn, "request").request.steps = steps; });
}

ltx_status ltx_request_set_seed(ltx_request* request, uint64_t seed) {
  return guard(__func__, [&](const char* fn) { need(request, fn, "request").request.seed = seed; });
}

ltx_status ltx_request_set_batch(ltx_request* request, int64_t samples_per_prompt) {
  return guard(__func__, [&](const char* fn) { need(request, fn, "request").request.batch = samples_per_prompt; });
}

ltx_status ltx_request_set_guidance(ltx_request* request, ltx_stream stream, const char* name, double value) {
  return guard(__func__, [&](const char* fn) {
    ltx::Guidance& g = guidance_of(fn, need(request, fn, "request").request, stream);
    const std::string_view n = need(name, fn, "name");
    reject_nan(fn, "guidance value", value);
    const auto v = static_cast<float>(value);
    if (n == "cfg")
      g.cfg = v;
    else if (n == "stg")
      g.stg = v;
    else if (n == "rescale")
      g.rescale = v;
    else if (n == "modality")
      g.modality = v;
    else if (n == "skip_step") {
      if (value != std::floor(value) || value < 0 || value > 1e6)
        reject(fn, "skip_step must be a whole number in [0, 1000000], got " + std::to_string(value));
      g.skip_step = static_cast<int>(value);
    } else
      reject(fn, "unknown guidance \"" + std::string(n) + "\"; valid names: cfg, stg, rescale, modality, skip_step");
  });
}

ltx_status ltx_request_set_audio(ltx_request* request, const char* path, double start, double max_duration) {
  return guard(__func__, [&](const char* fn) {
    ltx::GenerateRequest& r = need(request, fn, "request").request;
    const char* p = need(path, fn, "path");
    reject_nan(fn, "audio start", start);
    reject_nan(fn, "audio max_duration", max_duration);
    ltx::AudioInput a{p, start, std::nullopt};
    if (max_duration > 0) a.max_duration = max_duration;
    r.audio = a;
  });
}

ltx_status ltx_request_set_retake(ltx_request* request, const char* path, double start, double end, int keep_video,
                                  int keep_audio) {
  return guard(__func__, [&](const char* fn) {
    ltx::GenerateRequest& r = need(request, fn, "request").request;
    const char* p = need(path, fn, "path");
    reject_nan(fn, "retake start", start);
    reject_nan(fn, "retake end", end);
    r.retake = ltx::RetakeInput{p, start, end, keep_video != 0, keep_audio != 0};
  });
}

ltx_status ltx_request_add_reference_video(ltx_request* request, const char* path, double strength) {
  return guard(__func__, [&](const char* fn) {
    ltx::GenerateRequest& r = need(request, fn, "request").request;
    const char* p = need(path, fn, "path");
    reject_nan(fn, "reference video strength", strength);
    r.reference_videos.push_back(ltx::ReferenceVideo{p, strength});
  });
}

ltx_status ltx_request_set_conditioning(ltx_request* request, double strength, const char* mask_path) {
  return guard(__func__, [&](const char* fn) {
    ltx::GenerateRequest& r = need(request, fn, "request").request;
    reject_nan(fn, "conditioning strength", strength);
    r.conditioning_strength = strength;
    r.conditioning_mask = mask_path != nullptr ? mask_path : "";
  });
}

ltx_status ltx_request_add_image(ltx_request* request, const char* path, int64_t frame, double strength, int crf) {
  return guard(__func__, [&](const char* fn) {
    ltx::GenerateRequest& r = need(request, fn, "request").request;
    const char* p = need(path, fn, "path");
    reject_nan(fn, "image strength", strength);
    r.images.push_back(ltx::ImageCondition{p, frame, strength, crf});
  });
}

ltx_status ltx_request_set_mode(ltx_request* request, ltx_mode mode) {
  return guard(__func__, [&](const char* fn) {
    ltx::GenerateRequest& r = need(request, fn, "request").request;
    if (mode == LTX_ONE_STAGE)
      r.mode = ltx::Mode::OneStage;
    else if (mode == LTX_TWO_STAGE)
      r.mode = ltx::Mode::TwoStage;
    else
      reject(fn, "mode must be LTX_ONE_STAGE or LTX_TWO_STAGE, got " + std::to_string(static_cast<int>(mode)));
  });
}

ltx_status ltx_request_set_sampler(ltx_request* request, ltx_sampler sampler) {
  return guard(__func__, [&](const char* fn) {
    ltx::GenerateRequest& r = need(request, fn, "request").request;
    if (sampler == LTX_EULER)
      r.sampler = ltx::Sampler::Euler;
    else if (sampler == LTX_RES2S)
      r.sampler = ltx::Sampler::Res2s;
    else
      reject(fn, "sampler must be LTX_EULER or LTX_RES2S, got " + std::to_string(static_cast<int>(sampler)));
  });
}

ltx_status ltx_request_set_distilled(ltx_request* request, int distilled) {
  return guard(__func__, [&](const char* fn) { need(request, fn, "request").request.distilled = distilled != 0; });
}

ltx_status ltx_request_set_keyframe_interpolation(ltx_request* request, int on) {
  return guard(__func__,
               [&](const char* fn) { need(request, fn, "request").request.keyframe_interpolation = on != 0; });
}

ltx_status ltx_request_set_enhance_prompt(ltx_request* request, int on, const char* system_prompt,
                                          int64_t max_new_tokens) {
  return guard(__func__, [&](const char* fn) {
    ltx::GenerateRequest& r = need(request, fn, "request").request;
    r.enhance_prompt = on != 0;
    r.enhance_system_prompt = system_prompt != nullptr ? system_prompt : "";
    r.enhance_max_new_tokens = max_new_tokens;
  });
}

void ltx_request_free(ltx_request* request) { delete request; }

// ---- progress and cancellation ----

ltx_cancel* ltx_cancel_new(void) {
  return make_or_null(__func__, [] { return new ltx_cancel{}; });
}

void ltx_cancel_request(ltx_cancel* cancel) {
  if (cancel != nullptr) cancel->token.cancel();
}

void ltx_cancel_free(ltx_cancel* cancel) { delete cancel; }

// ---- the engine ----

ltx_status ltx_engine_new(const ltx_engine_options* options, ltx_progress_fn progress, void* user, ltx_engine** out) {
  return guard(__func__, [&](const char* fn) {
    need(out, fn, "out") = nullptr;
    const ltx::EngineOptions& o = need(options, fn, "options").options;
    // Loading takes no CancellationToken: a nonzero return stops it by throwing out of the callback, which
    // progress.hpp allows.
    const ltx::ProgressCallback on_load = wrap_progress(progress, user, [] {
      throw ltx::Error("ltx_engine_new", "cancelled by the progress callback", ltx::ErrorCategory::Cancelled);
    });
    *out = new ltx_engine{ltx::Engine(o, on_load)};
  });
}

void ltx_engine_free(ltx_engine* engine) { delete engine; }

ltx_status ltx_generate(ltx_engine* engine, const ltx_request* request, ltx_progress_fn progress, void* user,
                        ltx_cancel* cancel, ltx_result** out) {
  return guard(__func__, [&](const char* fn) {
    need(out, fn, "out") = nullptr;
    ltx::Engine& e = need(engine, fn, "engine").engine;
    const ltx::GenerateRequest& r = need(request, fn, "request").request;
    // Copies of a token share its flag, so the caller's ltx_cancel and the callback stop the same call.
    const ltx::CancellationToken token = cancel != nullptr ? cancel->token : ltx::CancellationToken();
    const ltx::ProgressCallback on_progress = wrap_progress(progress, user, [token] { token.cancel(); });
    ltx::GenerateResult result = e.generate(r, on_progress, token);
    *out = new ltx_result{std::move(result)};
  });
}

ltx_status ltx_enhance(ltx_engine* engine, const char* prompt, const char* image, uint64_t seed, int greedy,
                       int64_t max_new_tokens, char** out) {
  return guard(__func__, [&](const char* fn) {
    need(out, fn, "out") = nullptr;
    ltx::Engine& e = need(engine, fn, "engine").engine;
    ltx::EnhanceRequest r;
    r.seed = seed;
    r.greedy = greedy != 0;
    r.max_new_tokens = max_new_tokens;
    r.image = image != nullptr ? image : "";
    const std::string text = e.enhance(need(prompt, fn, "prompt"), r);
    char* copy = static_cast<char*>(std::malloc(text.size() + 1));
    if (copy == nullptr) throw std::bad_alloc();
    std::memcpy(copy, text.c_str(), text.size() + 1);
    *out = copy;
  });
}

void ltx_string_free(char* text) { std::free(text); }

size_t ltx_result_count(const ltx_result* result) { return result != nullptr ? result->result.videos.size() : 0; }

ltx_status ltx_result_video(const ltx_result* result, size_t item, ltx_video* out) {
  return guard(__func__, [&](const char* fn) {
    const ltx::GenerateResult& r = need(result, fn, "result").result;
    ltx_video& v = need(out, fn, "out");
    if (item >= r.videos.size())
      reject(fn,
             "item " + std::to_string(item) + " is out of range: the result holds " + std::to_string(r.videos.size()));
    const ltx::Video& video = r.videos[item];
    v.frames = video.frames;
    v.height = video.height;
    v.width = video.width;
    v.fps = video.fps;
    v.rgb = video.rgb.data();
    v.sample_rate = video.sample_rate;
    v.channels = video.channels;
    v.samples = video.audio_samples();
    v.audio = video.audio.data();
  });
}

ltx_status ltx_result_save(const ltx_result* result, const char* mp4, const char* wav, const char* frames_dir,
                           const char* sidecar) {
  return guard(__func__, [&](const char* fn) {
    const auto path = [](const char* p) { return p != nullptr ? std::string(p) : std::string(); };
    ltx::save(need(result, fn, "result").result,
              ltx::OutputFiles{path(mp4), path(wav), path(frames_dir), path(sidecar), std::string()});
  });
}

void ltx_result_free(ltx_result* result) { delete result; }

}  // extern "C"

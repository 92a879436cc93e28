#include "api/request_checks.h"

#include <cmath>
#include <filesystem>
#include <sstream>

#include "api/convert.h"
#include "api/error_phase.h"
#include "io/media_read.h"
#include "pipeline/params.h"
#include "stages/ic_lora_input.h"
#include "stages/image_conditioning.h"
#include "stages/prompt_enhancer.h"
#include "stages/retake_input.h"

namespace ltx::api {
namespace {

namespace fs = std::filesystem;

std::string number(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

bool any(const Guidance& g) { return g.cfg || g.stg || g.rescale || g.modality || g.stg_blocks || g.skip_step; }

void guidance_problems(const Guidance& g, const std::string& name, std::vector<std::string>& problems) {
  const auto finite = [&](const std::optional<float>& v, const char* field) {
    if (v && !std::isfinite(*v)) problems.push_back(name + "." + field + " must be a finite number, got " + number(*v));
  };
  finite(g.cfg, "cfg");
  finite(g.stg, "stg");
  finite(g.rescale, "rescale");
  finite(g.modality, "modality");
  if (g.stg_blocks)
    for (const int64_t b : *g.stg_blocks)
      if (b < 0) problems.push_back(name + ".stg_blocks holds " + std::to_string(b) + ": block indices are >= 0");
  if (g.skip_step && *g.skip_step < 0)
    problems.push_back(name + ".skip_step is " + std::to_string(*g.skip_step) + ": it must be >= 0 (0: never skip)");
}

// The frame grid and the size (pipeline/params.h check_generation_request's words: the nearest valid values).
void size_problems(const GenerateRequest& r, std::vector<std::string>& problems) {
  const bool fps_ok = std::isfinite(r.fps) && r.fps > 0;
  if (!fps_ok) problems.push_back("fps must be > 0 and finite, got " + number(r.fps));
  try {
    check_generation_request(r.frames, r.height, r.width, fps_ok ? r.fps : 24.0, r.mode == Mode::TwoStage);
  } catch (const Error& e) {
    std::string m = e.what();
    const std::string prefix = "[" + e.component() + "] ";
    if (m.rfind(prefix, 0) == 0) m = m.substr(prefix.size());
    problems.push_back(m);
  }
}

// Retake: the window, the modes it does not combine with, and the file itself (read here, before any heavy work).
void retake_problems(const GenerateRequest& r, std::vector<std::string>& problems) {
  const RetakeInput& t = *r.retake;
  if (!(std::isfinite(t.start) && std::isfinite(t.end) && t.start >= 0 && t.start < t.end))
    problems.push_back("retake start and end must be finite seconds with 0 <= start < end, got " + number(t.start) +
                       " and " + number(t.end));
  if (t.keep_video && t.keep_audio) problems.push_back("retake with keep_video and keep_audio regenerates nothing");
  if (!r.images.empty()) problems.push_back("retake takes no images (the source video is the conditioning)");
  if (r.audio) problems.push_back("retake takes no audio input (the source video's audio is kept or retaken)");
  if (r.mode == Mode::TwoStage) problems.push_back("retake runs one stage at the source's size: not with TwoStage");
  if (!fs::is_regular_file(t.path)) {
    problems.push_back("retake video " + t.path + " does not exist or is not a file");
    return;
  }
  try {
    const stages::RetakeSource s = stages::probe_retake_source(t.path);
    if (std::isfinite(t.start) && t.start >= s.seconds())
      problems.push_back("retake start " + number(t.start) + " s is outside the clip (" + t.path + " lasts " +
                         number(s.seconds()) + " s)");
  } catch (const std::exception& e) {
    problems.push_back(e.what());
  }
}

// IC-LoRA inputs (ic_lora.py): the reference videos and the mask readable, strengths in [0, 1], the mask's frame
// count fitting each reference's latent frames (_downsample_mask_to_latent), modes that do not combine.
void reference_problems(const GenerateRequest& r, std::vector<std::string>& problems) {
  const auto unit = [](double v) { return std::isfinite(v) && v >= 0.0 && v <= 1.0; };
  if (!unit(r.conditioning_strength))
    problems.push_back("conditioning_strength must be in [0, 1], got " + number(r.conditioning_strength));
  if (r.reference_videos.empty()) {
    if (!r.conditioning_mask.empty())
      problems.push_back("conditioning_mask needs reference_videos (--video FILE): it weighs their tokens");
    else if (unit(r.conditioning_strength) && r.conditioning_strength != 1.0)
      problems.push_back("conditioning_strength needs reference_videos (--video FILE): it weighs their tokens");
    return;
  }
  if (r.audio) problems.push_back("reference_videos (IC-LoRA) do not combine with an audio input");
  if (r.retake) problems.push_back("reference_videos (IC-LoRA) do not combine with retake");
  if (r.keyframe_interpolation)
    problems.push_back("reference_videos (IC-LoRA) do not combine with keyframe_interpolation");
  if (r.sampler == Sampler::Res2s)
    problems.push_back(
        "reference_videos (IC-LoRA) with the Res2s sampler are not checked against the reference (ic_lora.py runs "
        "Euler): use the Euler sampler");
  // Frame counts and sizes from the containers (io::probe_video); the decode checks the counts again.
  const auto probe = [&](const std::string& path, const std::string& what) -> std::optional<io::VideoInfo> {
    if (!fs::is_regular_file(path)) {
      problems.push_back(what + " " + path + " does not exist or is not a file");
      return std::nullopt;
    }
    try {
      std::optional<io::VideoInfo> v = io::probe_video(path);
      if (!v || v->frames < 1) {
        problems.push_back(what + " " + path + " holds no video frames");
        return std::nullopt;
      }
      v->frames = std::min(v->frames, r.frames);  // load_video_conditioning's frame cap
      return v;
    } catch (const Error& e) {
      problems.push_back(e.what());
      return std::nullopt;
    }
  };
  std::optional<io::VideoInfo> mask;
  if (!r.conditioning_mask.empty()) mask = probe(r.conditioning_mask, "conditioning_mask");
  for (size_t i = 0; i < r.reference_videos.size(); ++i) {
    const ReferenceVideo& v = r.reference_videos[i];
    const std::string name = "reference video " + std::to_string(i + 1);
    if (!unit(v.strength)) problems.push_back(name + " strength must be in [0, 1], got " + number(v.strength));
    const std::optional<io::VideoInfo> video = probe(v.path, name);
    if (!video || !mask) continue;
    const int64_t latent = stages::reference_latent_frames(video->frames);
    if (!stages::mask_frames_fit(mask->frames, latent))
      problems.push_back("conditioning_mask " + r.conditioning_mask + " gives " + std::to_string(mask->frames) +
                         " frames, but " + name + " (" + std::to_string(video->frames) + " frames used) encodes to " +
                         std::to_string(latent) + " latent frames: the mask needs 1 + k*" + std::to_string(latent - 1) +
                         " frames, such as " + std::to_string(1 + (latent - 1) * 8));
    // Both are resized to cover the stage-1 size and centre-cropped: only equal aspect ratios keep them aligned.
    const double a = static_cast<double>(mask->width) * static_cast<double>(video->height);
    const double b = static_cast<double>(video->width) * static_cast<double>(mask->height);
    if (std::abs(a - b) > 0.01 * std::max(a, b))
      problems.push_back("conditioning_mask " + r.conditioning_mask + " is " + std::to_string(mask->width) + "x" +
                         std::to_string(mask->height) + " but " + name + " is " + std::to_string(video->width) + "x" +
                         std::to_string(video->height) +
                         ": both are cropped to the output's shape, so the mask needs the reference's aspect ratio");
  }
}
}  // namespace

GenerateRequest with_retake_source(const GenerateRequest& r) {
  if (!r.retake || !fs::is_regular_file(r.retake->path)) return r;
  stages::RetakeSource s;
  try {
    s = stages::probe_retake_source(r.retake->path);
  } catch (const std::exception&) {
    return r;  // request_problems names what is wrong with the file
  }
  GenerateRequest out = r;
  out.frames = s.frames;
  out.height = s.height;
  out.width = s.width;
  out.fps = s.fps;
  return out;
}

std::vector<std::string> request_problems(const GenerateRequest& r) {
  std::vector<std::string> problems;
  const bool embeddings = !r.text_embeddings.empty();
  if (r.prompts.empty() && !embeddings) problems.push_back("give at least one prompt (prompts) or text_embeddings");
  for (size_t i = 0; i < r.prompts.size(); ++i)
    if (r.prompts[i].empty()) problems.push_back("prompt " + std::to_string(i + 1) + " is empty");
  if (embeddings && r.prompts.size() > 1)
    problems.push_back(
        "several prompts need a text encoder (text_embeddings holds one prompt's contexts; batch N makes N samples "
        "of it)");
  if (embeddings && !fs::is_regular_file(r.text_embeddings))
    problems.push_back("text_embeddings " + r.text_embeddings + " does not exist");
  if (r.batch < 1) problems.push_back("batch must be at least 1, got " + std::to_string(r.batch));
  if (r.steps < 0)
    problems.push_back("steps must be at least 1 (or 0: the model's default), got " + std::to_string(r.steps));
  if (r.mode != Mode::OneStage && r.mode != Mode::TwoStage)
    problems.push_back("mode " + std::to_string(static_cast<int>(r.mode)) + " is neither OneStage nor TwoStage");
  size_problems(r, problems);
  guidance_problems(r.video_guidance, "video_guidance", problems);
  guidance_problems(r.audio_guidance, "audio_guidance", problems);
  if (r.distilled && r.steps > 0)
    problems.push_back("steps (" + std::to_string(r.steps) +
                       ") does not apply with distilled (the distilled sigma lists fix the steps)");
  if (r.distilled && (any(r.video_guidance) || any(r.audio_guidance)))
    problems.push_back("guidance does not apply with distilled (one positive pass per step)");
  for (const std::string& p : stages::image_condition_problems(to_stages(r.images), r.frames)) problems.push_back(p);
  if (r.keyframe_interpolation && r.images.empty())
    problems.push_back("keyframe_interpolation needs images (--image FILE:FRAME, at least one)");
  if (r.audio) {
    const AudioInput& a = *r.audio;
    if (!fs::is_regular_file(a.path)) problems.push_back("audio " + a.path + " does not exist or is not a file");
    if (!(std::isfinite(a.start) && a.start >= 0))
      problems.push_back("audio start must be a finite number of seconds >= 0, got " + number(a.start));
    if (a.max_duration && !(std::isfinite(*a.max_duration) && *a.max_duration > 0))
      problems.push_back("audio max_duration must be a finite number of seconds > 0, got " + number(*a.max_duration));
    if (a.max_duration && std::isfinite(r.fps) && r.fps > 0 && *a.max_duration < static_cast<double>(r.frames) / r.fps)
      problems.push_back("audio max_duration " + number(*a.max_duration) + " s is shorter than the video (" +
                         number(static_cast<double>(r.frames) / r.fps) + " s)");
    if (any(r.audio_guidance))
      problems.push_back("audio_guidance does not apply with an audio input (the given audio is held, not denoised)");
  }
  if (r.retake) retake_problems(r, problems);
  reference_problems(r, problems);
  if (!r.replay_noise.empty() && !fs::is_regular_file(r.replay_noise))
    problems.push_back("replay_noise " + r.replay_noise + " does not exist");
  if (r.record_noise && !r.replay_noise.empty()) problems.push_back("record_noise and replay_noise exclude each other");
  if (r.enhance_max_new_tokens < 1 || r.enhance_max_new_tokens > 8192)
    problems.push_back("enhance_max_new_tokens must be in [1, 8192], got " + std::to_string(r.enhance_max_new_tokens));
  if (r.enhance_prompt && embeddings)
    problems.push_back("enhance_prompt rewrites prompts with the text encoder: not with text_embeddings");
  return problems;
}

std::vector<std::string> engine_problems(const GenerateRequest& r, const EngineOptions& o,
                                         const stages::LoadedModels& m) {
  std::vector<std::string> problems;
  if (r.mode == Mode::TwoStage && !m.upsampler)
    problems.push_back(
        "mode TwoStage needs an upsampler, and the engine has none (EngineOptions::upsampler, --upsampler)");
  if (r.text_embeddings.empty() && !m.encoder)
    problems.push_back(
        "prompts need a text encoder, and the engine has none (EngineOptions::text_encoder): give text_embeddings");
  if (r.enhance_prompt && !r.images.empty() && m.encoder && m.encoder->vision_file().empty())
    problems.push_back("enhance_prompt shows Gemma the first image (the official enhance_i2v): " +
                       stages::no_vision_tower_message(o.text_encoder));
  if (r.distilled && o.distilled_lora)
    problems.push_back(
        "distilled runs a distilled checkpoint on both stages; the engine's distilled_lora is for the base model's "
        "two-stage refine: use one of them");
  if (!r.reference_videos.empty() && o.loras.empty())
    problems.push_back("reference_videos need the IC-LoRA they condition (EngineOptions::loras, --lora FILE)");
  if (r.reference_videos.empty() && !m.ic_lora.ic_loras.empty())
    problems.push_back(m.ic_lora.ic_loras.front() +
                       " is an IC-LoRA (its metadata states a reference_downscale_factor): give the reference video "
                       "it follows (reference_videos, --video FILE)");
  const bool two = r.mode == Mode::TwoStage;
  if (!r.reference_videos.empty())
    if (std::string p = stages::reference_size_problem(two ? r.height / 2 : r.height, two ? r.width / 2 : r.width,
                                                       m.ic_lora.downscale_factor);
        !p.empty())
      problems.push_back(std::move(p));
  const int64_t n_blocks = m.models.dit->config().n_layers;
  for (const auto& [g, name] : {std::pair<const Guidance&, const char*>{r.video_guidance, "video_guidance"},
                                {r.audio_guidance, "audio_guidance"}})
    if (g.stg_blocks)
      for (const int64_t b : *g.stg_blocks)
        if (b >= n_blocks)
          problems.push_back(std::string(name) + ".stg_blocks holds " + std::to_string(b) +
                             ": the DiT's blocks are 0.." + std::to_string(n_blocks - 1));
  return problems;
}

void throw_if_any(const std::vector<std::string>& problems) {
  if (problems.empty()) return;
  std::string joined;
  for (size_t i = 0; i < problems.size(); ++i) joined += (i ? "; " : "") + problems[i];
  throw Error("generate", joined, ErrorCategory::InvalidRequest);
}

}  // namespace ltx::api

namespace ltx {

void check_request(const GenerateRequest& request) {
  api::in_phase(
      ErrorCategory::InvalidRequest, [&] { api::throw_if_any(api::request_problems(request)); },
      ErrorCategory::InvalidRequest);
}

}  // namespace ltx

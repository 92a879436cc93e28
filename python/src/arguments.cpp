#include "arguments.h"

#include <nanobind/stl/filesystem.h>
#include <nanobind/stl/string.h>

#include <utility>

#include "ltx/error.hpp"

namespace nb = nanobind;

namespace ltx::python {
namespace {

[[noreturn]] void invalid(const std::string& message) { throw Error("python", message, ErrorCategory::InvalidRequest); }

std::string path_of(nb::handle h, const std::string& what) {
  std::filesystem::path p;
  if (!nb::try_cast(h, p)) throw nb::type_error((what + " must be a path (str or os.PathLike)").c_str());
  return p.string();
}

// The items of a tuple, borrowed from it.
std::vector<nb::handle> items_of(nb::handle tuple) {
  std::vector<nb::handle> items;
  for (nb::handle h : nb::borrow<nb::tuple>(tuple)) items.push_back(h);
  return items;
}

template <class T>
T number_of(nb::handle h, const std::string& what) {
  T v{};
  if (!nb::try_cast(h, v)) throw nb::type_error((what + " must be a number, got " + nb::repr(h).c_str()).c_str());
  return v;
}

// A path (strength 1) or a (path, strength) tuple. Plain strings are paths: no "FILE:STRENGTH" parsing.
template <class Strength>
std::pair<std::string, Strength> path_and_strength(nb::handle h, const std::string& what) {
  if (!nb::isinstance<nb::tuple>(h)) return {path_of(h, what), Strength{1}};
  const std::vector<nb::handle> t = items_of(h);
  if (t.size() != 2) throw nb::type_error((what + " must be a path or a (path, strength) tuple").c_str());
  return {path_of(t[0], what + " path"), number_of<Strength>(t[1], what + " strength")};
}

LoraFile lora_of(nb::handle h, const std::string& what) {
  auto [path, strength] = path_and_strength<float>(h, what);
  return {std::move(path), strength};
}

// retake={"path": ..., "start": s, "end": s, "keep_video": bool, "keep_audio": bool} (path, start and end required).
RetakeInput retake_of(nb::handle h) {
  if (!nb::isinstance<nb::dict>(h))
    throw nb::type_error("retake must be a dict with path, start, end (and optionally keep_video, keep_audio)");
  RetakeInput r;
  int required = 0;
  for (auto [key, value] : nb::borrow<nb::dict>(h)) {
    std::string k;
    if (!nb::try_cast(key, k)) k = nb::repr(key).c_str();
    if (k == "path") {
      r.path = path_of(value, "retake['path']");
      ++required;
    } else if (k == "start") {
      r.start = number_of<double>(value, "retake['start']");
      ++required;
    } else if (k == "end") {
      r.end = number_of<double>(value, "retake['end']");
      ++required;
    } else if (k == "keep_video" || k == "keep_audio") {
      bool keep = false;
      if (!nb::try_cast(value, keep)) throw nb::type_error(("retake['" + k + "'] must be a bool").c_str());
      (k == "keep_video" ? r.keep_video : r.keep_audio) = keep;
    } else {
      throw nb::type_error(
          ("retake has the key '" + k + "': the keys are path, start, end, keep_video, keep_audio").c_str());
    }
  }
  if (required != 3) throw nb::type_error("retake needs the keys path, start and end");
  return r;
}

// A path, a (path, frame, strength, crf) tuple with the last three optional, or a dict of those keys.
ImageCondition image_of(nb::handle h, const std::string& what) {
  ImageCondition c;
  if (nb::isinstance<nb::tuple>(h)) {
    const std::vector<nb::handle> t = items_of(h);
    if (t.size() < 1 || t.size() > 4)
      throw nb::type_error((what + " must be (path, frame, strength, crf), the last three optional").c_str());
    c.path = path_of(t[0], what + " path");
    if (t.size() > 1) c.frame = number_of<int64_t>(t[1], what + " frame");
    if (t.size() > 2) c.strength = number_of<double>(t[2], what + " strength");
    if (t.size() > 3) c.crf = number_of<int>(t[3], what + " crf");
  } else if (nb::isinstance<nb::dict>(h)) {
    bool has_path = false;
    for (auto [key, value] : nb::borrow<nb::dict>(h)) {
      std::string k;
      if (!nb::try_cast(key, k)) k = nb::repr(key).c_str();
      if (k == "path") {
        c.path = path_of(value, what + "['path']");
        has_path = true;
      } else if (k == "frame") {
        c.frame = number_of<int64_t>(value, what + "['frame']");
      } else if (k == "strength") {
        c.strength = number_of<double>(value, what + "['strength']");
      } else if (k == "crf") {
        c.crf = number_of<int>(value, what + "['crf']");
      } else {
        throw nb::type_error((what + " has the key '" + k + "': the keys are path, frame, strength, crf").c_str());
      }
    }
    if (!has_path) throw nb::type_error((what + " needs the key 'path'").c_str());
  } else {
    c.path = path_of(h, what);
  }
  return c;
}

uint64_t memory_budget_of(nb::handle h) {
  if (h.is_none()) return 0;  // the API's default: what the machine has available
  if (nb::isinstance<nb::str>(h)) return parse_size(nb::borrow<nb::str>(h).c_str(), "memory_budget");
  if (!PyLong_Check(h.ptr()) || PyBool_Check(h.ptr()))
    throw nb::type_error("memory_budget must be None, a count of bytes (int) or a size like '8G' (str)");
  uint64_t bytes = 0;
  if (!nb::try_cast(h, bytes) || bytes == 0)
    invalid(std::string("memory_budget must be at least 1 byte and below 2^64, got ") + nb::repr(h).c_str());
  return bytes;
}

Precision precision_of(const std::string& name) {
  if (name == "production") return Precision::Production;
  if (name == "validation") return Precision::Validation;
  invalid("precision is 'production' or 'validation', got '" + name + "'");
}

}  // namespace

EngineOptions to_engine_options(const EngineArgs& a) {
  EngineOptions o;
  const auto path = [](const Path& p) { return p ? p->string() : std::string(); };
  o.checkpoint = path(a.checkpoint);
  o.text_encoder = path(a.text_encoder);
  o.text_encoder_mmproj = path(a.mmproj);
  o.dit = path(a.dit);
  o.dit_config = path(a.dit_config);
  o.upsampler = path(a.upsampler);
  if (!a.loras.is_none()) {
    if (!nb::isinstance<nb::list>(a.loras))
      throw nb::type_error("loras must be a list of paths and (path, strength) tuples");
    size_t i = 0;
    for (nb::handle h : nb::borrow<nb::list>(a.loras))
      o.loras.push_back(lora_of(h, "loras[" + std::to_string(i++) + "]"));
  }
  if (!a.distilled_lora.is_none()) o.distilled_lora = lora_of(a.distilled_lora, "distilled_lora");
  o.distilled_lora_stage1_strength = a.distilled_lora_stage1;
  o.lora_allow_partial = a.lora_allow_partial;
  o.precision = precision_of(a.precision);
  o.backend = a.backend;
  o.xla_plugin = a.xla_plugin;
  o.threads = a.threads;
  o.memory_budget_bytes = memory_budget_of(a.memory_budget);
  return o;
}

bool names_no_model(const EngineOptions& o) { return o.checkpoint.empty() && o.dit.empty() && o.text_encoder.empty(); }

GenerateRequest to_request(std::vector<std::string> prompts, int64_t batch, const RequestArgs& a, bool default_model) {
  GenerateRequest r;
  if (default_model) {
    const GenerateRequest d = embedded_default_request();
    r.frames = d.frames;
    r.height = d.height;
    r.width = d.width;
    r.steps = d.steps;
  }
  r.prompts = std::move(prompts);
  r.batch = batch;
  r.negative_prompt = a.negative_prompt;
  if (a.width) r.width = *a.width;
  if (a.height) r.height = *a.height;
  if (a.frames) r.frames = *a.frames;
  if (a.fps) r.fps = *a.fps;
  if (a.steps) r.steps = *a.steps;
  if (a.seed) r.seed = *a.seed;
  if (!a.images.is_none()) {
    if (!nb::isinstance<nb::list>(a.images))
      throw nb::type_error("images must be a list of paths, (path, frame, strength, crf) tuples or dicts");
    size_t i = 0;
    for (nb::handle h : nb::borrow<nb::list>(a.images))
      r.images.push_back(image_of(h, "images[" + std::to_string(i++) + "]"));
  }
  r.mode = a.two_stage ? Mode::TwoStage : Mode::OneStage;
  r.distilled = a.distilled;
  r.video_guidance.cfg = a.cfg;
  r.video_guidance.stg = a.stg;
  r.video_guidance.rescale = a.rescale;
  r.video_guidance.modality = a.modality;
  r.video_guidance.stg_blocks = a.stg_blocks;
  r.audio_guidance.cfg = a.audio_cfg;
  r.audio_guidance.stg = a.audio_stg;
  r.audio_guidance.rescale = a.audio_rescale;
  r.audio_guidance.modality = a.audio_modality;
  r.audio_guidance.stg_blocks = a.stg_blocks;
  r.video_guidance.skip_step = a.video_skip_step;
  r.audio_guidance.skip_step = a.audio_skip_step;
  if (a.sampler != "euler" && a.sampler != "res2s") invalid("sampler is 'euler' or 'res2s', got '" + a.sampler + "'");
  r.sampler = a.sampler == "res2s" ? Sampler::Res2s : Sampler::Euler;
  r.keyframe_interpolation = a.keyframe_interpolation;
  r.enhance_prompt = a.enhance_prompt;
  if (a.audio) r.audio = AudioInput{*a.audio, a.audio_start, a.audio_max_duration};
  if (!a.retake.is_none()) r.retake = retake_of(a.retake);
  if (!a.reference_videos.is_none()) {
    if (!nb::isinstance<nb::list>(a.reference_videos))
      throw nb::type_error("reference_videos must be a list of paths or (path, strength) tuples");
    size_t i = 0;
    for (nb::handle h : nb::borrow<nb::list>(a.reference_videos)) {
      auto [path, strength] = path_and_strength<double>(h, "reference_videos[" + std::to_string(i++) + "]");
      r.reference_videos.push_back({std::move(path), strength});
    }
  }
  r.conditioning_strength = a.conditioning_strength;
  if (a.conditioning_mask) r.conditioning_mask = a.conditioning_mask->string();
  return r;
}

}  // namespace ltx::python

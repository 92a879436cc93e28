// ltx::sidecar_json (ltx/outputs.hpp): the keys `ltx generate --sidecar` has always written (tests/pipeline/
// generate_outputs_test.cpp reads them), now from a GenerateResult.
#include <filesystem>

#include "io/json.h"
#include "ltx/engine.hpp"
#include "ltx/outputs.hpp"

namespace ltx {
namespace {

Json guider_json(const GuidanceValues& g) {
  return Json{{"cfg", g.cfg},         {"stg", g.stg},           {"stg_blocks", g.stg_blocks},
              {"rescale", g.rescale}, {"modality", g.modality}, {"skip_step", g.skip_step}};
}

// A model or input file: its path and size; null when not used.
Json file_json(const std::string& path) {
  if (path.empty()) return nullptr;
  std::error_code ec;
  const auto bytes = std::filesystem::file_size(path, ec);
  return Json{{"path", path}, {"bytes", ec ? Json(nullptr) : Json(static_cast<int64_t>(bytes))}};
}

Json optional_string(const std::string& s) { return s.empty() ? Json(nullptr) : Json(s); }

Json lora_json(const LoraFile& l) {
  Json j = file_json(l.path);
  j["strength"] = l.strength;
  return j;
}

Json models_json(const GenerateResult& r) {
  const EngineOptions& m = r.model;
  Json loras = Json::array();
  for (const LoraFile& l : m.loras) loras.push_back(lora_json(l));
  return Json{{"checkpoint", file_json(m.checkpoint)},
              {"model_version", r.model_version},
              {"text_encoder", file_json(m.text_encoder)},
              {"text_encoder_mmproj", file_json(m.text_encoder_mmproj)},
              {"text_embeddings", file_json(r.request.text_embeddings)},
              {"upsampler", file_json(m.upsampler)},
              {"dit", file_json(m.dit)},
              {"dit_config", file_json(m.dit_config)},
              {"loras", loras},
              {"distilled_lora", m.distilled_lora ? lora_json(*m.distilled_lora) : Json(nullptr)},
              {"distilled_lora_stage1_strength",
               m.distilled_lora_stage1_strength ? Json(*m.distilled_lora_stage1_strength) : Json(nullptr)},
              {"lora_allow_partial", m.lora_allow_partial}};
}

// IC-LoRA: the reference videos, the attention strength and mask; null without references.
Json ic_lora_json(const GenerateRequest& q) {
  if (q.reference_videos.empty()) return Json(nullptr);
  Json videos = Json::array();
  for (const ReferenceVideo& v : q.reference_videos)
    videos.push_back(Json{{"file", file_json(v.path)}, {"strength", v.strength}});
  return Json{{"reference_videos", videos},
              {"conditioning_strength", q.conditioning_strength},
              {"conditioning_mask", file_json(q.conditioning_mask)}};
}

Json parameters_json(const GenerateResult& r, const OutputFiles& files) {
  const GenerateRequest& q = r.request;
  return Json{{"frames", q.frames},
              {"height", q.height},
              {"width", q.width},
              {"fps", q.fps},
              {"steps", q.steps},
              {"two_stage", q.mode == Mode::TwoStage},
              {"distilled", q.distilled},
              {"sampler", q.sampler == Sampler::Res2s ? "res2s" : "euler"},
              {"keyframe_interpolation", q.keyframe_interpolation},
              {"precision", r.model.precision == Precision::Validation ? "validation" : "production"},
              {"int8_activations", r.model.int8_activations},
              {"backend", r.model.backend},
              {"guidance", {{"video", guider_json(r.video_guidance)}, {"audio", guider_json(r.audio_guidance)}}},
              {"audio_input",
               q.audio ? Json{{"file", file_json(q.audio->path)},
                              {"start", q.audio->start},
                              {"max_duration", q.audio->max_duration ? Json(*q.audio->max_duration) : Json(nullptr)}}
                       : Json(nullptr)},
              {"retake", q.retake ? Json{{"file", file_json(q.retake->path)},
                                         {"start", q.retake->start},
                                         {"end", q.retake->end},
                                         {"keep_video", q.retake->keep_video},
                                         {"keep_audio", q.retake->keep_audio}}
                                  : Json(nullptr)},
              {"ic_lora", ic_lora_json(q)},
              {"enhance_prompt", q.enhance_prompt},
              {"record_noise", optional_string(q.record_noise ? files.noise_recording : std::string())},
              {"replay_noise", file_json(q.replay_noise)}};
}

}  // namespace

std::string sidecar_json(const GenerateResult& r, size_t item, const OutputFiles& files) {
  if (item >= r.videos.size())
    throw Error(
        "output",
        "item " + std::to_string(item) + " is out of range: the result holds " + std::to_string(r.videos.size()),
        ErrorCategory::InvalidRequest);
  const Video& v = r.videos[item];
  const size_t items = r.videos.size();
  const bool from_text = r.request.text_embeddings.empty();
  Json timings = Json::array();
  for (const StageTime& s : r.stages) timings.push_back(Json{{"stage", s.stage}, {"seconds", s.seconds}});
  const Json json{
      {"ltx_version", version()},
      {"prompt", from_text ? Json(v.prompt) : Json(nullptr)},
      {"original_prompt", v.original_prompt.empty() ? Json(nullptr) : Json(v.original_prompt)},
      {"negative_prompt", from_text ? Json(r.negative_prompt) : Json(nullptr)},
      {"seed", r.request.seed},
      {"models", models_json(r)},
      {"parameters", parameters_json(r, files)},
      {"result",
       {{"frames", v.frames},
        {"height", v.height},
        {"width", v.width},
        {"fps", v.fps},
        {"audio_sample_rate", v.sample_rate},
        {"audio_samples", v.audio_samples()}}},
      {"outputs",
       {{"video", optional_string(item_path(files.mp4, item, items))},
        {"wav", optional_string(item_path(files.wav, item, items))},
        {"frames_dir", optional_string(item_path(files.frames_dir, item, items))},
        {"sidecar", optional_string(item_path(files.sidecar, item, items))}}},
      {"timings", timings},
      {"total_seconds", r.seconds},
      {"peak_rss_bytes", r.peak_rss_bytes},
      {"batch", {{"item", item}, {"items", items}, {"samples_per_prompt", r.request.batch}}},
  };
  return json.dump(2) + "\n";
}

}  // namespace ltx

#include "stages/sidecar.h"

#include <sys/resource.h>

#include <filesystem>

#ifndef LTX_VERSION
#define LTX_VERSION "unknown"
#endif

namespace ltx::stages {
namespace {

Json guider_json(const GuiderParams& g) {
  return Json{{"cfg", g.cfg_scale},         {"stg", g.stg_scale},           {"stg_blocks", g.stg_blocks},
              {"rescale", g.rescale_scale}, {"modality", g.modality_scale}, {"skip_step", g.skip_step}};
}

// A model or input file: its path and size; null when not used.
Json file_json(const std::string& path) {
  if (path.empty()) return nullptr;
  std::error_code ec;
  const auto bytes = std::filesystem::file_size(path, ec);
  return Json{{"path", path}, {"bytes", ec ? Json(nullptr) : Json(static_cast<int64_t>(bytes))}};
}

Json optional_string(const std::string& s) { return s.empty() ? Json(nullptr) : Json(s); }

Json lora_json(const ltxm::LoraSpec& l) {
  Json j = file_json(l.path);
  j["strength"] = l.strength;
  return j;
}

}  // namespace

const char* ltx_version() { return LTX_VERSION; }

int64_t peak_rss_bytes() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<int64_t>(u.ru_maxrss) * 1024;  // Linux reports KiB
}

Json sidecar_json(const GenerateRequest& r, const GenerateReport& rep, double total_seconds) {
  Json timings = Json::array();
  for (const auto& [stage, s] : rep.stage_seconds) timings.push_back(Json{{"stage", stage}, {"seconds", s}});
  const bool from_text = r.text_embeddings.empty();
  Json loras = Json::array();
  for (const auto& l : r.loras) loras.push_back(lora_json(l));
  return Json{
      {"ltx_version", ltx_version()},
      {"prompt", from_text ? Json(r.prompt) : Json(nullptr)},
      {"negative_prompt", from_text ? Json(rep.negative_prompt) : Json(nullptr)},
      {"seed", r.seed},
      {"models",
       {{"checkpoint", file_json(r.checkpoint)},
        {"model_version", rep.model_version},
        {"text_encoder", file_json(r.text_encoder)},
        {"text_embeddings", file_json(r.text_embeddings)},
        {"upsampler", file_json(r.upsampler)},
        {"dit", file_json(r.dit)},
        {"dit_config", file_json(r.dit_config)},
        {"loras", loras},
        {"distilled_lora", r.distilled_lora ? lora_json(*r.distilled_lora) : Json(nullptr)},
        {"lora_allow_partial", r.lora_allow_partial}}},
      {"parameters",
       {{"frames", r.frames},
        {"height", r.height},
        {"width", r.width},
        {"fps", r.fps},
        {"steps", rep.steps},
        {"two_stage", r.two_stage},
        {"distilled", r.distilled},
        {"precision", r.compute == DType::F32 ? "validation" : "production"},
        {"guidance", {{"video", guider_json(rep.guidance.video)}, {"audio", guider_json(rep.guidance.audio)}}},
        {"record_noise", optional_string(r.record_noise)},
        {"replay_noise", file_json(r.replay_noise)}}},
      {"result",
       {{"frames", rep.frames},
        {"height", rep.height},
        {"width", rep.width},
        {"fps", r.fps},
        {"audio_sample_rate", rep.audio_sample_rate},
        {"audio_samples", rep.audio_samples}}},
      {"outputs",
       {{"video", r.output},
        {"wav", optional_string(r.wav)},
        {"frames_dir", optional_string(r.frames_dir)},
        {"sidecar", optional_string(r.sidecar)}}},
      {"timings", timings},
      {"total_seconds", total_seconds},
      {"peak_rss_bytes", peak_rss_bytes()},
  };
}

}  // namespace ltx::stages

#include "api/convert.h"

#include <memory>
#include <utility>

#include "api/noise_recording.h"

namespace ltx::api {
namespace {

ltxm::LoraSpec to_stages(const LoraFile& l) { return {l.path, l.strength}; }

stages::GuiderOverrides to_stages(const Guidance& g) {
  return {g.cfg, g.stg, g.rescale, g.modality, g.stg_blocks, g.skip_step};
}

GuidanceValues to_values(const GuiderParams& g) {
  GuidanceValues v;
  v.cfg = g.cfg_scale;
  v.stg = g.stg_scale;
  v.rescale = g.rescale_scale;
  v.modality = g.modality_scale;
  v.stg_blocks = g.stg_blocks;
  v.skip_step = g.skip_step;
  return v;
}

}  // namespace

stages::ModelFiles to_stages(const EngineOptions& o) {
  stages::ModelFiles f;
  f.checkpoint = o.checkpoint;
  f.dit = o.dit;
  f.dit_config = o.dit_config;
  f.text_encoder = o.text_encoder;
  f.text_encoder_mmproj = o.text_encoder_mmproj;
  f.upsampler = o.upsampler;
  for (const LoraFile& l : o.loras) f.loras.push_back(to_stages(l));
  if (o.distilled_lora) f.distilled_lora = to_stages(*o.distilled_lora);
  f.distilled_lora_stage1_strength = o.distilled_lora_stage1_strength;
  f.lora_allow_partial = o.lora_allow_partial;
  f.memory_budget_bytes = o.memory_budget_bytes;
  f.compute = o.precision == Precision::Validation ? DType::F32 : DType::BF16;
  f.backend = o.backend;
  f.xla_plugin = o.xla_plugin;
  return f;
}

std::vector<stages::ImageConditionInput> to_stages(const std::vector<ImageCondition>& images) {
  std::vector<stages::ImageConditionInput> out;
  for (const ImageCondition& i : images) out.push_back({i.path, i.frame, i.strength, i.crf});
  return out;
}

stages::GenerateRequest to_stages(const GenerateRequest& r, size_t memory_budget_bytes) {
  stages::GenerateRequest s;
  if (r.text_embeddings.empty()) s.prompts = r.prompts;  // with embeddings the prompts name nothing the run uses
  s.batch = r.batch;
  s.negative_prompt = r.negative_prompt;
  s.text_embeddings = r.text_embeddings;
  s.images = to_stages(r.images);
  s.keyframe_interpolation = r.keyframe_interpolation;
  s.enhance_prompt = r.enhance_prompt;
  s.enhance_system_prompt = r.enhance_system_prompt;
  s.enhance_max_new_tokens = r.enhance_max_new_tokens;
  for (const ReferenceVideo& v : r.reference_videos) s.references.push_back({v.path, v.strength});
  s.conditioning_strength = r.conditioning_strength;
  s.conditioning_mask = r.conditioning_mask;
  if (r.retake) {
    s.retake = r.retake->path;
    s.retake_start = r.retake->start;
    s.retake_end = r.retake->end;
    s.retake_keep_video = r.retake->keep_video;
    s.retake_keep_audio = r.retake->keep_audio;
  }
  if (r.audio) {
    s.audio = r.audio->path;
    s.audio_start = r.audio->start;
    s.audio_max_duration = r.audio->max_duration;
  }
  s.two_stage = r.mode == Mode::TwoStage;
  s.distilled = r.distilled;
  s.sampler = r.sampler == Sampler::Res2s ? stages::Sampler::Res2s : stages::Sampler::Euler;
  s.frames = r.frames;
  s.height = r.height;
  s.width = r.width;
  s.fps = r.fps;
  s.steps = r.steps;
  s.seed = r.seed;
  s.video_guidance = to_stages(r.video_guidance);
  s.audio_guidance = to_stages(r.audio_guidance);
  s.replay_noise = r.replay_noise;
  s.record_noise = r.record_noise;
  s.memory_budget_bytes = memory_budget_bytes;
  return s;
}

GenerateResult to_result(stages::GenerateReport report, const GenerateRequest& request, const EngineOptions& options) {
  GenerateResult result;
  for (stages::GeneratedItem& item : report.items) {
    Video v;
    v.prompt = std::move(item.prompt);
    v.original_prompt = std::move(item.original_prompt);
    v.frames = report.frames;
    v.height = report.height;
    v.width = report.width;
    v.fps = request.fps;
    v.rgb = std::move(item.rgb);
    v.sample_rate = report.audio_sample_rate;
    v.channels = report.audio_channels;
    v.audio = std::move(item.audio);
    result.videos.push_back(std::move(v));
  }
  result.model = options;
  result.request = request;
  result.request.steps = report.steps;
  if (result.request.audio) result.request.audio->max_duration = report.audio_max_duration;
  result.model_version = report.model_version;
  result.negative_prompt = report.negative_prompt;
  result.video_guidance = to_values(report.guidance.video);
  result.audio_guidance = to_values(report.guidance.audio);
  result.decode_strategy = report.decode_strategy;
  for (size_t i = 0; i < report.stage_seconds.size(); ++i)
    result.stages.push_back(
        {report.stage_seconds[i].first, report.stage_seconds[i].second, report.stage_cpu_seconds[i].second});
  if (request.record_noise)
    result.noise_recording = std::make_shared<const NoiseRecording>(std::move(report.noise), request.seed);
  return result;
}

}  // namespace ltx::api

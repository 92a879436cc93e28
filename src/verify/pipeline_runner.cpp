// Golden-case runners for whole pipelines (components "pipeline_one_stage" and "pipeline_two_stage",
// tests/golden/pipeline/, made by tools/reference/make_pipeline_goldens.py): the recorded noise is replayed in
// draw order, and every observed latent, x0, position and sigma is returned under the case's names, so each step
// is compared. The one-stage case also decodes video (frames) and audio (mel, waveform).
#include "core/error.h"
#include "io/safetensors.h"
#include "stages/av_models.h"
#include "stages/media.h"
#include "stages/pipelines.h"
#include "verify/components.h"
#include "verify/ltx_runner_util.h"

namespace ltx {
namespace {

using namespace stages;

GuiderParams guider_from_json(const nlohmann::json& j) {
  GuiderParams g;
  g.cfg_scale = j.at("cfg_scale").get<float>();
  g.stg_scale = j.at("stg_scale").get<float>();
  g.stg_blocks = j.at("stg_blocks").get<std::vector<int64_t>>();
  g.rescale_scale = j.at("rescale_scale").get<float>();
  g.modality_scale = j.at("modality_scale").get<float>();
  g.skip_step = j.at("skip_step").get<int>();
  return g;
}

AvGuidance guidance_from_json(const nlohmann::json& j) {
  return {guider_from_json(j.at("video")), guider_from_json(j.at("audio"))};
}

TextContexts contexts(const SafetensorsFile& in) {
  return {in.get("context.video.positive"), in.get("context.audio.positive"), in.get("context.video.negative"),
          in.get("context.audio.negative")};
}

// The case's noise.NNNN tensors, in draw order.
NoiseReplayer recorded_noise(const SafetensorsFile& in) {
  std::vector<std::pair<std::string, Tensor>> entries;
  for (const TensorInfo& t : in.tensors())
    if (t.name.rfind("noise.", 0) == 0) entries.emplace_back(t.name, in.get(t.name));
  return NoiseReplayer(entries);
}

GenerationSpec spec_from_params(const nlohmann::json& p) {
  GenerationSpec s;
  s.frames = p.at("num_frames").get<int64_t>();
  s.height = p.at("height").get<int64_t>();
  s.width = p.at("width").get<int64_t>();
  s.fps = p.at("fps").get<double>();
  s.steps = p.at("num_inference_steps").get<int>();
  return s;
}

Observer collect_into(std::map<std::string, Tensor>& out) {
  return [&out](const std::string& name, const Tensor& t) { out[name] = t.clone(); };
}

void check_replayed_all(const NoiseReplayer& noise) {
  LTX_CHECK(noise.remaining() == 0, "verify", noise.remaining(), " recorded noise tensors were not drawn");
}

std::map<std::string, Tensor> run_one_stage_case(const GoldenCase& c, Precision p) {
  const nlohmann::json& params = c.params();
  AvModels models = load_av_models(open_safetensors(c.weights_path()), compute_dtype(p));
  const SafetensorsFile in = SafetensorsFile::open(c.inputs_path());
  NoiseReplayer noise = recorded_noise(in);
  GenerationSpec spec = spec_from_params(params);
  spec.guidance = guidance_from_json(params.at("guidance"));
  std::map<std::string, Tensor> out;
  const AvLatents latents = run_one_stage(*models.dit, spec, contexts(in), noise, collect_into(out));
  out["video.decoded"] = decode_video(*models.video_decoder, latents.video, &noise);
  const Tensor mel = decode_audio_mel(*models.audio_decoder, latents.audio);
  out["audio.mel"] = mel;
  const Tensor wave = models.vocoder->run(mel);  // [1, 2, N]
  out["audio.waveform"] = wave.reshape({wave.dim(1), wave.dim(2)});
  check_replayed_all(noise);
  return out;
}

std::map<std::string, Tensor> run_two_stage_case(const GoldenCase& c, Precision p) {
  const nlohmann::json& params = c.params();
  const auto source = open_safetensors(c.weights_path());
  AvModels models = load_av_models(source, compute_dtype(p), {.video_decoder = false, .audio_decoder = false});
  // The case stores the upsampler file's tensors under a prefix, its config under `upsampler_config`.
  const auto up = load_upsampler(source, compute_dtype(p), "spatial_upsampler.", "upsampler_config");
  const SafetensorsFile in = SafetensorsFile::open(c.inputs_path());
  NoiseReplayer noise = recorded_noise(in);
  GenerationSpec spec = spec_from_params(params);
  spec.guidance = guidance_from_json(params.at("guidance").at("stage_1"));
  std::map<std::string, Tensor> out;
  run_two_stage({*models.dit, *models.dit, up, models.video_stats}, spec, contexts(in), noise, collect_into(out));
  check_replayed_all(noise);
  return out;
}

}  // namespace

void register_pipeline_runners(ComponentRegistry& registry) {
  registry.add("pipeline_one_stage", run_one_stage_case);
  registry.add("pipeline_two_stage", run_two_stage_case);
}

}  // namespace ltx

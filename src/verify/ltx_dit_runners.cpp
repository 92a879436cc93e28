// Golden-case runner for the LTX DiT (component "dit", tests/golden/dit/, made by
// tools/reference/make_dit_goldens.py): the case's params say the model type, the perturbations per batch item
// and the A<->V timestep semantics of the ltx-core version that made it.
#include "core/error.h"
#include "io/safetensors.h"
#include "models/ltx/dit/dit.h"
#include "verify/components.h"
#include "verify/ltx_runner_util.h"

namespace ltx {
namespace {

using namespace ltxm;

Perturbation perturbation_from_name(const std::string& s) {
  if (s == "skip_video_self_attn") return Perturbation::SkipVideoSelfAttn;
  if (s == "skip_audio_self_attn") return Perturbation::SkipAudioSelfAttn;
  if (s == "skip_a2v_cross_attn") return Perturbation::SkipA2V;
  if (s == "skip_v2a_cross_attn") return Perturbation::SkipV2A;
  fail("verify", "unknown perturbation '" + s + "'");
}

AvTimestepSemantics semantics_from_params(const nlohmann::json& params) {
  if (!params.contains("av_timestep_semantics")) return AvTimestepSemantics::OtherSigma;
  const std::string s = params.at("av_timestep_semantics").get<std::string>();
  // make_dit_goldens.py states the version; 1.0.0 drives both A<->V AdaLNs with the other stream's sigma.
  LTX_CHECK(s.rfind("ltx-core 1.0.0", 0) == 0, "verify", "unknown av_timestep_semantics: ", s);
  return AvTimestepSemantics::OtherSigma;
}

DitStreamInput stream_input(const SafetensorsFile& in, const std::string& stream) {
  DitStreamInput s;
  s.latent = in.get(stream + ".latent");
  s.sigma = in.get(stream + ".sigma");
  s.timesteps = in.get(stream + ".timesteps");
  s.positions = in.get(stream + ".positions");
  s.context = in.get(stream + ".context");
  if (in.contains(stream + ".attention_mask")) s.attention_mask = in.get(stream + ".attention_mask");
  return s;
}

std::map<std::string, Tensor> run_dit(const GoldenCase& c, Precision p) {
  const nlohmann::json& params = c.params();
  auto source = open_safetensors(c.weights_path());
  const nlohmann::json tc = checkpoint_transformer_config(*source);
  const std::string type = params.at("model_type").get<std::string>();
  LTX_CHECK(type == "audio_video" || type == "video_only", "verify", "unknown model_type ", type);
  const DitModelType model_type = type == "audio_video" ? DitModelType::AudioVideo : DitModelType::VideoOnly;
  DitConfig config = DitConfig::from_metadata(tc, model_type);
  config.av_semantics = semantics_from_params(params);
  WeightLoader loader(source, params.at("weights_prefix").get<std::string>());
  Dit dit = Dit::load(loader, config, compute_dtype(p), golden_backend());

  const SafetensorsFile in = SafetensorsFile::open(c.inputs_path());
  DitCall call;
  call.video = stream_input(in, "video");
  if (config.has_audio()) call.audio = stream_input(in, "audio");
  for (const auto& sample : params.at("perturbations")) {
    SamplePerturbations sp;
    for (const auto& item : sample) {
      PerturbationSpec spec{perturbation_from_name(item.at(0).get<std::string>()), std::nullopt};
      if (!item.at(1).is_null()) spec.blocks = item.at(1).get<std::vector<int64_t>>();
      sp.push_back(spec);
    }
    call.perturbations.push_back(sp);
  }
  // params.enabled: {"video": bool, "audio": bool} (Modality.enabled; absent: both): a disabled stream is the DiT's
  // Disable* perturbation on every sample.
  if (params.contains("enabled"))
    for (const auto& [stream, kind] :
         {std::pair{"video", Perturbation::DisableVideo}, std::pair{"audio", Perturbation::DisableAudio}})
      if (!params.at("enabled").value(stream, true))
        for (SamplePerturbations& sp : call.perturbations) sp.push_back({kind, std::nullopt});
  DitOutput out = dit.run(call, true);
  std::map<std::string, Tensor> r = std::move(out.intermediates);
  r["video.velocity"] = out.video_velocity;
  r["video.denoised"] = out.video_denoised;
  if (out.audio_velocity.defined()) {
    r["audio.velocity"] = out.audio_velocity;
    r["audio.denoised"] = out.audio_denoised;
  }
  return r;
}

}  // namespace

void register_ltx_dit_runners(ComponentRegistry& registry) { registry.add("dit", run_dit); }

}  // namespace ltx

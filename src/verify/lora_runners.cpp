// Golden-case runner for LoRA fusion (component "dit_lora", tests/golden/dit/lora_official, made by
// tools/reference/make_lora_goldens.py): the base DiT and the LoRA file share the case's weights (the LoRA under
// params.lora_prefix); the LoRA is fused into bf16 resident weights as ltx-core does for bf16 checkpoints, in
// either precision (activations are f32 in both), and the fused model runs one x0 call.
#include "io/safetensors.h"
#include "models/ltx/dit/dit.h"
#include "models/ltx/dit/lora_fuse.h"
#include "verify/components.h"
#include "verify/ltx_runner_util.h"

namespace ltx {
namespace {

using namespace ltxm;

DitStreamInput stream_input(const SafetensorsFile& in, const std::string& stream) {
  DitStreamInput s;
  s.latent = in.get(stream + ".latent");
  s.sigma = in.get(stream + ".sigma");
  s.timesteps = in.get(stream + ".timesteps");
  s.positions = in.get(stream + ".positions");
  s.context = in.get(stream + ".context");
  return s;
}

std::map<std::string, Tensor> run_dit_lora(const GoldenCase& c, Precision) {
  const nlohmann::json& params = c.params();
  LTX_CHECK(params.at("resident_dtype").get<std::string>() == "bf16", "verify", "dit_lora: unknown resident_dtype");
  auto source = open_safetensors(c.weights_path());
  const std::string prefix = params.at("weights_prefix").get<std::string>();
  DitConfig config = DitConfig::from_metadata(checkpoint_transformer_config(*source), DitModelType::AudioVideo);
  config.av_semantics = AvTimestepSemantics::OtherSigma;  // ltx-core 1.0.0 (make_dit_goldens.py AV_TIMESTEP_SEMANTICS)
  Dit dit = Dit::load(WeightLoader(source, prefix), config, DType::BF16);

  DitLoraFuser fuser(dit, source, DType::BF16, prefix);
  const LoraAdapter lora = read_lora(*source, fuser.targets(), false, params.at("lora_prefix").get<std::string>());
  const WeightedLora weighted{&lora, params.at("lora_strength").get<float>()};
  fuser.apply({&weighted, 1});

  const SafetensorsFile in = SafetensorsFile::open(c.inputs_path());
  DitCall call;
  call.video = stream_input(in, "video");
  call.audio = stream_input(in, "audio");
  call.perturbations.push_back({});
  DitOutput out = dit.run(call);
  std::map<std::string, Tensor> r;
  r["video.velocity"] = out.video_velocity;
  r["video.denoised"] = out.video_denoised;
  r["audio.velocity"] = out.audio_velocity;
  r["audio.denoised"] = out.audio_denoised;
  for (const std::string& module : fuser.targets().modules)
    r["fused." + module + ".weight"] = fuser.weight(module).to(DType::F32);
  return r;
}

}  // namespace

void register_lora_runners(ComponentRegistry& registry) { registry.add("dit_lora", run_dit_lora); }

}  // namespace ltx

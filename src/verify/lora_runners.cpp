// Golden-case runner for LoRA fusion (component "dit_lora", tests/golden/dit/lora_official, made by
// tools/reference/make_lora_goldens.py): the base DiT and the LoRA files share the case's weights (each LoRA under
// its prefix); the LoRAs are fused into bf16 resident weights as ltx-core does for bf16 checkpoints, in either
// precision (activations are f32 in both), and the fused model runs one x0 call when the case has inputs.
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
  Dit dit = Dit::load(WeightLoader(source, prefix), config, DType::BF16, golden_backend());

  DitLoraFuser fuser(dit, source, DType::BF16, prefix);
  // params.loras: [{prefix, strength}] (or one LoRA as lora_prefix, lora_strength); lora_dtype "bf16": the case
  // stores the LoRA files' bf16 values widened to f32, narrowed back here so the fuser sees what the files hold.
  std::vector<std::pair<std::string, float>> wanted;
  if (params.contains("loras"))
    for (const auto& l : params.at("loras")) wanted.emplace_back(l.at("prefix"), l.at("strength").get<float>());
  else
    wanted.emplace_back(params.at("lora_prefix"), params.at("lora_strength").get<float>());
  const bool bf16_files = params.value("lora_dtype", "f32") == "bf16";
  std::vector<LoraAdapter> adapters;
  for (const auto& [lora_prefix, strength] : wanted) {
    adapters.push_back(read_lora(*source, fuser.targets(), false, lora_prefix));
    if (bf16_files)
      for (LoraLayer& layer : adapters.back().layers) {
        layer.up = layer.up.to(DType::BF16);
        layer.down = layer.down.to(DType::BF16);
      }
  }
  std::vector<WeightedLora> weighted;
  for (size_t i = 0; i < adapters.size(); ++i) weighted.push_back({&adapters[i], wanted[i].second});
  fuser.apply(weighted);

  std::map<std::string, Tensor> r;
  for (const std::string& module : fuser.targets().modules)
    r["fused." + module + ".weight"] = fuser.weight(module).to(DType::F32);
  if (c.outputs.size() == r.size()) return r;  // a case of fused weights only
  const SafetensorsFile in = SafetensorsFile::open(c.inputs_path());
  DitCall call;
  call.video = stream_input(in, "video");
  call.audio = stream_input(in, "audio");
  call.perturbations.push_back({});
  DitOutput out = dit.run(call);
  r["video.velocity"] = out.video_velocity;
  r["video.denoised"] = out.video_denoised;
  r["audio.velocity"] = out.audio_velocity;
  r["audio.denoised"] = out.audio_denoised;
  return r;
}

}  // namespace

void register_lora_runners(ComponentRegistry& registry) { registry.add("dit_lora", run_dit_lora); }

}  // namespace ltx

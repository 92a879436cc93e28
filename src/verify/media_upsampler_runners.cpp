// Golden-case runner for the latent upsamplers (component "latent_upsampler").
#include "models/ltx/upsampler/upsampler.h"
#include "verify/components.h"
#include "verify/media_runner_util.h"

namespace ltx {
namespace {

std::map<std::string, Tensor> run_latent_upsampler(const GoldenCase& c, Precision p) {
  const auto source = open_safetensors(c.weights_path());
  const auto config = upsampler::UpsamplerConfig::from_metadata(media_runner::weights_config(*source));
  const WeightLoader root(source);
  const auto up = upsampler::LatentUpsampler::load(root, config, compute_dtype(p));
  root.finish();
  // The VAE statistics belong to the main checkpoint; the case carries them as inputs under their names there.
  const SafetensorsFile inputs = SafetensorsFile::open(c.inputs_path());
  const video_vae::LatentStats stats{inputs.get("vae.per_channel_statistics.mean-of-means"),
                                     inputs.get("vae.per_channel_statistics.std-of-means")};
  const Tensor latent = inputs.get("latent");
  Graph g;
  video_vae::Taps taps;
  const Value out = upsampler::upsample_video(up, stats, g.input("latent", DType::F32, latent.shape()), &taps);
  return media_runner::run(g, {{"latent", out}}, taps, {latent});
}

}  // namespace

void register_media_upsampler_runners(ComponentRegistry& registry) {
  registry.add("latent_upsampler", run_latent_upsampler);
}

}  // namespace ltx

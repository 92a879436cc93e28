// Golden-case runners for the video VAE (components "video_vae_encoder" and "video_vae_decoder").
#include "models/ltx/video_vae/video_vae.h"
#include "nn/weight_loader.h"
#include "verify/components.h"
#include "verify/media_runner_util.h"

namespace ltx {
namespace {

using namespace video_vae;

std::map<std::string, Tensor> run_video_vae_encoder(const GoldenCase& c, Precision p) {
  const auto source = open_safetensors(c.weights_path());
  const VideoVaeConfig config = VideoVaeConfig::from_metadata(media_runner::weights_config(*source));
  const WeightLoader root(source, "vae.");
  const VideoEncoder enc = VideoEncoder::load(root, config, compute_dtype(p));
  root.finish();
  const SafetensorsFile inputs = SafetensorsFile::open(c.inputs_path());
  Tensor video = inputs.get("video");
  const int64_t crop = VideoEncoder::frames_to_crop(video.dim(2));  // the official encoder drops tail frames
  video = video.slice(2, 0, video.dim(2) - crop).contiguous();
  Graph g;
  Taps taps;
  const Value latent = enc.forward(g.input("video", DType::F32, video.shape()), &taps);
  return media_runner::run(g, {{"latent", latent}}, taps, {video});
}

std::map<std::string, Tensor> run_video_vae_decoder(const GoldenCase& c, Precision p) {
  const auto source = open_safetensors(c.weights_path());
  const VideoVaeConfig config = VideoVaeConfig::from_metadata(media_runner::weights_config(*source));
  const WeightLoader root(source, "vae.");
  VideoDecoder dec = VideoDecoder::load(root, config, compute_dtype(p));
  root.finish();
  const nlohmann::json& params = c.params();
  if (params.contains("timestep")) dec.decode_timestep = params.at("timestep").get<float>();
  if (params.contains("decode_noise_scale")) dec.decode_noise_scale = params.at("decode_noise_scale").get<float>();
  const SafetensorsFile inputs = SafetensorsFile::open(c.inputs_path());
  const Tensor latent = inputs.get("latent");
  Graph g;
  std::vector<Tensor> bound{latent};
  const Value x = g.input("latent", DType::F32, latent.shape());
  DecoderNoise noise;
  for (const auto& [name, shape] : dec.noise_inputs(latent.shape())) {
    const Tensor t = inputs.get(name);
    const Value v = g.input(name, DType::F32, t.shape());
    if (name == "noise.latent") {
      noise.latent = v;
    } else {
      noise.spatial[name] = v;
    }
    bound.push_back(t);
  }
  Taps taps;
  const Value video = dec.forward(x, noise, &taps);
  return media_runner::run(g, {{"video", video}}, taps, bound);
}

}  // namespace

void register_media_vae_runners(ComponentRegistry& registry) {
  registry.add("video_vae_encoder", run_video_vae_encoder);
  registry.add("video_vae_decoder", run_video_vae_decoder);
}

}  // namespace ltx

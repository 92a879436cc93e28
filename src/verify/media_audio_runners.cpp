// Golden-case runners for the audio path: audio VAE encoder/decoder (components "audio_vae_encoder",
// "audio_vae_decoder").
#include "models/ltx/audio_vae.h"
#include "models/ltx/vocoder.h"
#include "verify/components.h"
#include "verify/media_runner_util.h"

namespace ltx {
namespace {

using namespace audio_vae;

std::map<std::string, Tensor> run_audio_vae_encoder(const GoldenCase& c, Precision p) {
  const auto source = open_safetensors(c.weights_path());
  const AudioVaeConfig config = AudioVaeConfig::from_metadata(media_runner::weights_config(*source));
  const WeightLoader root(source, "audio_vae.");
  const AudioEncoder enc = AudioEncoder::load(root, config, media_runner::compute_dtype(p));
  root.finish();
  const Tensor mel = SafetensorsFile::open(c.inputs_path()).get("mel");
  Graph g;
  video_vae::Taps taps;
  const Value latent = enc.forward(g.input("mel", DType::F32, mel.shape()), &taps);
  return media_runner::run(g, {{"latent", latent}}, taps, {mel});
}

std::map<std::string, Tensor> run_audio_vae_decoder(const GoldenCase& c, Precision p) {
  const auto source = open_safetensors(c.weights_path());
  const AudioVaeConfig config = AudioVaeConfig::from_metadata(media_runner::weights_config(*source));
  const WeightLoader root(source, "audio_vae.");
  const AudioDecoder dec = AudioDecoder::load(root, config, media_runner::compute_dtype(p));
  root.finish();
  const Tensor latent = SafetensorsFile::open(c.inputs_path()).get("latent");
  Graph g;
  video_vae::Taps taps;
  const Value mel = dec.forward(g.input("latent", DType::F32, latent.shape()), &taps);
  return media_runner::run(g, {{"mel", mel}}, taps, {latent});
}

// params.variant: "hifigan" | "bigvgan_bwe" (the config decides; the param is informational).
std::map<std::string, Tensor> run_vocoder(const GoldenCase& c, Precision p) {
  const auto source = open_safetensors(c.weights_path());
  const WeightLoader root(source, "vocoder.");
  const auto voc = vocoder::Vocoder::load(root, media_runner::weights_config(*source), media_runner::compute_dtype(p));
  root.finish();
  const Tensor mel = SafetensorsFile::open(c.inputs_path()).get("mel");
  std::map<std::string, Tensor> out;
  out["waveform"] = voc.run(mel, &out);
  return out;
}

}  // namespace

void register_media_audio_runners(ComponentRegistry& registry) {
  registry.add("audio_vae_encoder", run_audio_vae_encoder);
  registry.add("audio_vae_decoder", run_audio_vae_decoder);
  registry.add("vocoder", run_vocoder);
}

}  // namespace ltx

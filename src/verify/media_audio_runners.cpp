// Golden-case runners for the audio path: audio VAE encoder/decoder (components "audio_vae_encoder",
// "audio_vae_decoder").
#include "models/ltx/audio_vae/audio_vae.h"
#include "models/ltx/audio_vae/mel_frontend.h"
#include "models/ltx/vocoder/vocoder.h"
#include "verify/components.h"
#include "verify/media_runner_util.h"

namespace ltx {
namespace {

using namespace audio_vae;

std::map<std::string, Tensor> run_audio_vae_encoder(const GoldenCase& c, Precision p) {
  const auto source = open_safetensors(c.weights_path());
  const AudioVaeConfig config = AudioVaeConfig::from_metadata(media_runner::weights_config(*source));
  const WeightLoader root(source, "audio_vae.");
  const AudioEncoder enc = AudioEncoder::load(root, config, compute_dtype(p));
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
  const AudioDecoder dec = AudioDecoder::load(root, config, compute_dtype(p));
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
  const auto voc = vocoder::Vocoder::load(root, media_runner::weights_config(*source), compute_dtype(p));
  root.finish();
  const Tensor mel = SafetensorsFile::open(c.inputs_path()).get("mel");
  std::map<std::string, Tensor> out;
  out["waveform"] = voc.run(golden_backend(), mel, &out);
  return out;
}

// params.input_sampling_rate / target_sampling_rate; outputs the log-mel and the front end's stages.
std::map<std::string, Tensor> run_mel_frontend(const GoldenCase& c, Precision) {
  const Tensor wave = SafetensorsFile::open(c.inputs_path()).get("waveform");
  mel::MelFrontendConfig cfg;
  cfg.target_sample_rate = c.params().at("target_sampling_rate").get<int64_t>();
  const auto out = mel::waveform_to_mel(wave, c.params().at("input_sampling_rate").get<int64_t>(), cfg);
  const int64_t nf = cfg.n_fft / 2 + 1;
  const std::vector<double> fb = mel::slaney_mel_filterbank(nf, static_cast<double>(cfg.target_sample_rate) / 2.0,
                                                            cfg.n_mels, cfg.target_sample_rate);
  return {{"mel", out.mel},
          {"resampled", out.resampled},
          {"mel_transform.spectrogram.out", out.spectrogram},
          {"mel_transform.mel_scale.out", out.mel_scale},
          {"mel_transform.mel_scale.fb",
           Tensor::from_floats(DType::F32, {nf, cfg.n_mels}, std::vector<float>(fb.begin(), fb.end()))}};
}

}  // namespace

void register_media_audio_runners(ComponentRegistry& registry) {
  registry.add("audio_vae_encoder", run_audio_vae_encoder);
  registry.add("audio_vae_decoder", run_audio_vae_decoder);
  registry.add("vocoder", run_vocoder);
  registry.add("audio_mel_frontend", run_mel_frontend);
}

}  // namespace ltx

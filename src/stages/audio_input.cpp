#include "stages/audio_input.h"

#include <cmath>

#include "core/error.h"
#include "graph/compile.h"
#include "io/media_read.h"
#include "models/ltx/audio_vae/audio_vae.h"
#include "models/ltx/audio_vae/mel_frontend.h"
#include "nn/weight_loader.h"

namespace ltx::stages {

AudioClip read_audio_clip(const std::string& path, double start, std::optional<double> max_duration) {
  // Decoded no further than the clip's end (decode_audio_from_file stops there too).
  const std::optional<io::DecodedAudio> decoded =
      io::read_audio(path, max_duration ? std::optional<double>(start + *max_duration) : std::nullopt);
  LTX_CHECK(decoded.has_value(), "audio", path, " has no audio stream");
  return cut_audio_clip(*decoded, path, start, max_duration);
}

double a2v_audio_max_duration(std::optional<double> requested, int64_t frames, double fps) {
  return requested.value_or(static_cast<double>(frames) / fps);
}

AudioClip cut_audio_clip(const io::DecodedAudio& decoded, const std::string& path, double start,
                         std::optional<double> max_duration) {
  LTX_CHECK(std::isfinite(start) && start >= 0, "audio",
            "the audio start must be a finite number of seconds >= 0, got ", start);
  LTX_CHECK(!max_duration || (std::isfinite(*max_duration) && *max_duration > 0), "audio",
            "the audio's maximum duration must be a finite number of seconds > 0, got ", max_duration.value_or(0));
  LTX_CHECK(decoded.channels <= 2, "audio", path, " has ", decoded.channels,
            " audio channels; the audio VAE takes mono (duplicated) or stereo");
  const int64_t n = decoded.length(), sr = decoded.sample_rate;
  const auto first = static_cast<int64_t>(std::llround(start * static_cast<double>(sr)));
  LTX_CHECK(first < n, "audio", path, " is ", static_cast<double>(n) / static_cast<double>(sr),
            " s long: nothing is left after the start at ", start, " s");
  int64_t count = n - first;
  if (max_duration)
    count = std::min(count, static_cast<int64_t>(std::llround(*max_duration * static_cast<double>(sr))));
  AudioClip clip;
  clip.sample_rate = sr;
  clip.channels = 2;
  for (int64_t c = 0; c < 2; ++c) {
    const float* src = decoded.samples.data() + (decoded.channels == 1 ? 0 : c) * n + first;
    clip.samples.insert(clip.samples.end(), src, src + count);
  }
  return clip;
}

Tensor encode_audio_clip(const Backend& backend, const std::shared_ptr<const WeightSource>& checkpoint, DType compute,
                         const AudioClip& clip) {
  const Json config = metadata_json(*checkpoint, "config");
  LTX_CHECK(config.contains("audio_vae"), "audio", checkpoint->describe(), ": `config` has no \"audio_vae\" section");
  const audio_vae::AudioVaeConfig vae_config = audio_vae::AudioVaeConfig::from_metadata(config);
  const WeightLoader audio(checkpoint, "audio_vae.");
  const audio_vae::AudioEncoder encoder = audio_vae::AudioEncoder::load(audio, vae_config, compute);
  audio.ignore("decoder.");
  audio.finish();
  // ops.py AudioProcessor(target_sample_rate, mel_bins, mel_hop_length, n_fft) as encode_audio builds it.
  mel::MelFrontendConfig mel_config;
  mel_config.target_sample_rate = vae_config.sample_rate;
  mel_config.n_fft = vae_config.n_fft;
  mel_config.hop_length = vae_config.hop_length;
  mel_config.n_mels = vae_config.mel_bins;
  // The STFT's reflect padding of n_fft/2 needs more samples than that at the encoder's rate.
  const double shortest = static_cast<double>(mel_config.n_fft / 2 + 1) / static_cast<double>(vae_config.sample_rate);
  LTX_CHECK(clip.seconds() > shortest, "audio", "the audio clip lasts ", clip.seconds(),
            " s, too short to encode: the audio VAE's mel front end needs more than ", shortest, " s");
  const Tensor wave = Tensor::from_floats(DType::F32, {1, clip.channels, clip.length()}, clip.samples);
  const Tensor mel = mel::waveform_to_mel(wave, clip.sample_rate, mel_config).mel.contiguous();
  Graph g;
  g.output(encoder.forward(g.input("mel", DType::F32, mel.shape())), "latent");
  auto plan = compile(g, backend);
  return plan->run(std::span<const Tensor>(&mel, 1))[0].clone();
}

Tensor held_audio_latent(const Tensor& encoded, const AudioLatentShape& want, const AudioClip& clip,
                         double video_seconds) {
  LTX_CHECK(encoded.rank() == 4 && encoded.dim(1) == want.channels && encoded.dim(3) == want.mel_bins, "audio",
            "the audio VAE encodes ", encoded.shape().str(), " but the DiT takes ", want.shape().str());
  LTX_CHECK(encoded.dim(2) >= want.frames, "audio", "the audio clip (", clip.seconds(),
            " s) is shorter than the video (", video_seconds, " s); give a longer clip or an earlier audio start");
  const Tensor one = encoded.slice(0, 0, 1).slice(2, 0, want.frames).to(DType::F32);
  Tensor all = Tensor::empty(DType::F32, want.shape());
  for (int64_t i = 0; i < want.batch; ++i) all.slice(0, i, i + 1).copy_from(one);
  return all;
}

}  // namespace ltx::stages

#include "stages/av_models.h"

#include "core/error.h"
#include "stages/default_model.h"

namespace ltx::stages {
AvModels load_av_models(const std::shared_ptr<const WeightSource>& checkpoint, DType compute, const Backend& backend,
                        const AvModelParts& parts) {
  AvModels m;
  m.backend = &backend;
  m.config = metadata_json(*checkpoint, "config");
  if (auto it = checkpoint->metadata().find("model_version"); it != checkpoint->metadata().end())
    m.model_version = it->second;
  if (auto it = checkpoint->metadata().find("ltx_default_model"); it != checkpoint->metadata().end())
    m.embedded_default = it->second == kDefaultModelName;
  LTX_CHECK(m.config.contains("transformer"), "pipeline", checkpoint->describe(),
            ": `config` has no \"transformer\" section");
  if (parts.dit) {
    const ltxm::DitConfig dit_config =
        ltxm::DitConfig::from_metadata(m.config.at("transformer"), ltxm::DitModelType::AudioVideo);
    m.dit = std::make_unique<ltxm::Dit>(
        ltxm::Dit::load(WeightLoader(checkpoint, "model.diffusion_model."), dit_config, compute, backend));
  }

  LTX_CHECK(m.config.contains("vae"), "pipeline", checkpoint->describe(), ": `config` has no \"vae\" section");
  const video_vae::VideoVaeConfig vae_config = video_vae::VideoVaeConfig::from_metadata(m.config);
  const WeightLoader vae(checkpoint, "vae.");
  m.video_stats = video_vae::LatentStats::load(vae, vae_config.latent_channels);
  if (parts.video_decoder) {
    m.video_decoder = video_vae::VideoDecoder::load(vae, vae_config, compute);
    vae.ignore("encoder.");
    vae.finish();
  }
  if (parts.audio_decoder) {
    LTX_CHECK(m.config.contains("audio_vae") && m.config.contains("vocoder"), "pipeline", checkpoint->describe(),
              ": `config` lacks the \"audio_vae\" or \"vocoder\" section needed to decode audio");
    const WeightLoader audio(checkpoint, "audio_vae.");
    m.audio_decoder = audio_vae::AudioDecoder::load(audio, audio_vae::AudioVaeConfig::from_metadata(m.config), compute);
    audio.ignore("encoder.");
    audio.finish();
    const WeightLoader voc(checkpoint, "vocoder.");
    m.vocoder = vocoder::Vocoder::load(voc, m.config, compute);
    voc.finish();
  }
  return m;
}

upsampler::LatentUpsampler load_upsampler(const std::shared_ptr<const WeightSource>& source, DType compute,
                                          const std::string& prefix, const std::string& config_key) {
  const auto config = upsampler::UpsamplerConfig::from_metadata(metadata_json(*source, config_key));
  const WeightLoader root(source, prefix);
  auto up = upsampler::LatentUpsampler::load(root, config, compute);
  root.finish();
  return up;
}

}  // namespace ltx::stages

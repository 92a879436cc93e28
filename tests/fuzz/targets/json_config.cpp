// The JSON configurations the engine reads: a checkpoint's `config` metadata (the DiT, connectors, VAEs, vocoder,
// upsampler parse theirs from it) and a Hugging Face Gemma 3 config.json (text and vision). Any JSON text in; a
// parse error or a configuration error is a refusal.
#include <string_view>

#include "core/error.h"
#include "fuzz_target.h"
#include "io/json.h"
#include "models/gemma3/config.h"
#include "models/gemma3/vision_config.h"
#include "models/ltx/audio_vae/audio_vae.h"
#include "models/ltx/dit/dit_config.h"
#include "models/ltx/text/text_conditioning.h"
#include "models/ltx/upsampler/upsampler.h"
#include "models/ltx/video_vae/video_vae.h"
#include "models/ltx/vocoder/vocoder.h"

namespace {

template <typename Parse>
void refused_or_parsed(Parse&& parse) {
  try {
    parse();
  } catch (const ltx::Error&) {
  }
}

}  // namespace

LTX_FUZZ_TARGET(json_config) {
  using ltx::Json;
  Json j;
  try {  // as the engine parses every configuration: io/json.h parse_json
    j = ltx::parse_json(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz input");
  } catch (const ltx::Error&) {
    return 0;
  }
  namespace m = ltx::ltxm;
  refused_or_parsed([&] { (void)ltx::gemma3::Config::from_hf_json(j); });
  refused_or_parsed([&] { (void)ltx::gemma3::VisionConfig::from_hf_json(j); });
  const Json& t = j.is_object() && j.contains("transformer") ? j.at("transformer") : j;
  refused_or_parsed([&] { (void)m::DitConfig::from_metadata(t, m::DitModelType::AudioVideo); });
  refused_or_parsed([&] { (void)m::DitConfig::from_metadata(t, m::DitModelType::VideoOnly); });
  refused_or_parsed([&] { (void)m::DitConfig::from_diffusers(j); });
  refused_or_parsed([&] { (void)m::ConnectorConfig::from_metadata(t, false); });
  refused_or_parsed([&] { (void)m::ConnectorConfig::from_metadata(t, true); });
  refused_or_parsed([&] { (void)ltx::video_vae::VideoVaeConfig::from_metadata(j); });
  refused_or_parsed([&] { (void)ltx::audio_vae::AudioVaeConfig::from_metadata(j); });
  refused_or_parsed([&] { (void)ltx::upsampler::UpsamplerConfig::from_metadata(j); });
  refused_or_parsed([&] { (void)ltx::vocoder::GeneratorConfig::from_json(j); });
  return 0;
}

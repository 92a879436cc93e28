#include "verify/components.h"

namespace ltx {

void register_builtin_components(ComponentRegistry& registry) {
  // Model components (text encoder, DiT, VAEs, vocoders, upsamplers) add their runners here as they land.
  register_schedule_runners(registry);
  register_rope_grid_runners(registry);
  register_ltx_text_runners(registry);
  register_ltx_dit_runners(registry);
  register_lora_runners(registry);
  register_media_vae_runners(registry);
  register_gemma3_runners(registry);
  register_media_upsampler_runners(registry);
  register_media_audio_runners(registry);
  register_pipeline_runners(registry);
}

}  // namespace ltx

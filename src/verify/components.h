// The engine components `ltx verify` can run, registered by name (the manifest's "component").
#pragma once

#include "verify/runner.h"

namespace ltx {

// Adds a runner for every component the engine implements. Components not listed here count as
// "not implemented" in verify's summary, never as passed.
void register_builtin_components(ComponentRegistry& registry);

// Per-family registrations, one file each (called by register_builtin_components).
void register_schedule_runners(ComponentRegistry& registry);         // schedule_runners.cpp
void register_ltx_text_runners(ComponentRegistry& registry);         // ltx_text_runners.cpp
void register_ltx_dit_runners(ComponentRegistry& registry);          // ltx_dit_runners.cpp
void register_media_vae_runners(ComponentRegistry& registry);        // media_vae_runners.cpp
void register_gemma3_runners(ComponentRegistry& registry);           // gemma3_runner.cpp
void register_pipeline_runners(ComponentRegistry& registry);         // pipeline_runner.cpp
void register_media_upsampler_runners(ComponentRegistry& registry);  // media_upsampler_runners.cpp
void register_media_audio_runners(ComponentRegistry& registry);      // media_audio_runners.cpp
void register_lora_runners(ComponentRegistry& registry);             // lora_runners.cpp
void register_rope_grid_runners(ComponentRegistry& registry);        // rope_grid_runners.cpp

}  // namespace ltx

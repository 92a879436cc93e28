// The LTX-2 / LTX-2.3 DiT configuration, read from the checkpoint's `config` metadata ("transformer" dict) with
// ltx_core's fallbacks (ltx_core/model/transformer/model_configurator.py). Variants are fields, not versions.
#pragma once

#include <string>
#include <vector>

#include "core/dtype.h"
#include "io/json.h"
#include "ops/op.h"

namespace ltx::ltxm {

enum class DitModelType { AudioVideo, VideoOnly };

// Which timesteps drive the A<->V cross-attention AdaLNs (scale/shift and gate) of a stream; they changed
// between official releases (spec §3.6). t = that stream's per-token timesteps, σ_other = the other stream's
// scalar sigma; f = av_ca_timestep_scale_multiplier / timestep_scale_multiplier applies to the gate only.
enum class AvTimestepSemantics {
  OtherSigma,          // ltx-core 1.0.0 (the pinned reference, 2026-03): scale/shift σ_other, gate σ_other·f
  OwnTokensOtherGate,  // ltx-core ≥ 2026-05-28 (HEAD): scale/shift own t, gate σ_other·f
  OwnTokens,           // first release (2026-01): scale/shift own t, gate own t·f
};

struct DitConfig {
  DitModelType type = DitModelType::AudioVideo;
  int64_t n_heads = 32, head_dim = 128;
  int64_t in_channels = 128, out_channels = 128;
  int64_t n_layers = 48;
  int64_t cross_attention_dim = 4096;
  float norm_eps = 1e-6f;
  double theta = 10000.0;
  std::vector<double> max_pos{20, 2048, 2048};
  float timestep_scale_multiplier = 1000.0f;
  int64_t audio_n_heads = 32, audio_head_dim = 64;
  int64_t audio_in_channels = 128, audio_out_channels = 128;
  int64_t audio_cross_attention_dim = 2048;
  std::vector<double> audio_max_pos{20};
  float av_ca_timestep_scale_multiplier = 1.0f;  // ltx-core's fallback when the key is absent
  RopeMode rope_mode = RopeMode::Interleaved;
  bool float64_grid = false;
  bool gated_attention = false;
  bool cross_attention_adaln = false;
  // LTX-2.0 keeps the caption projection inside the DiT (caption_proj_before_connector absent or false).
  bool caption_projection = true;
  int64_t caption_channels = 3840;
  // Issue 5: default to the current official behaviour; golden runners set the one their manifest records.
  AvTimestepSemantics av_semantics = AvTimestepSemantics::OwnTokensOtherGate;

  int64_t inner() const { return n_heads * head_dim; }
  int64_t audio_inner() const { return audio_n_heads * audio_head_dim; }
  bool has_audio() const { return type == DitModelType::AudioVideo; }
  int64_t adaln_coef() const { return cross_attention_adaln ? 9 : 6; }

  // `transformer_config` is the "transformer" dict; checks the values ltx_core checks and fails naming them.
  static DitConfig from_metadata(const nlohmann::json& transformer_config, DitModelType type);
  // A Diffusers transformer/config.json (LTX2VideoTransformer3DModel, always audio-video), translated to the
  // official keys and checked as from_metadata checks them (dit_config_diffusers.cpp).
  static DitConfig from_diffusers(const nlohmann::json& diffusers_config);
};

}  // namespace ltx::ltxm

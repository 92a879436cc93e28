// Diffusers' LTX2VideoTransformer3DModel config (diffusers 0.42.1, models/transformers/transformer_ltx2.py,
// __init__'s register_to_config arguments; the defaults below are its defaults, used when an older config.json
// lacks a key) translated to the official `config` metadata keys of ltx_core's model_configurator.py.
#include "core/error.h"
#include "models/ltx/dit/dit_config.h"

namespace ltx::ltxm {
namespace {

const nlohmann::json& diffusers_defaults() {
  static const nlohmann::json d = {
      {"in_channels", 128},
      {"out_channels", 128},
      {"patch_size", 1},
      {"patch_size_t", 1},
      {"num_attention_heads", 32},
      {"attention_head_dim", 128},
      {"cross_attention_dim", 4096},
      {"pos_embed_max_pos", 20},
      {"base_height", 2048},
      {"base_width", 2048},
      {"gated_attn", false},
      {"cross_attn_mod", false},
      {"audio_in_channels", 128},
      {"audio_out_channels", 128},
      {"audio_patch_size", 1},
      {"audio_patch_size_t", 1},
      {"audio_num_attention_heads", 32},
      {"audio_attention_head_dim", 64},
      {"audio_cross_attention_dim", 2048},
      {"audio_pos_embed_max_pos", 20},
      {"audio_gated_attn", false},
      {"audio_cross_attn_mod", false},
      {"num_layers", 48},
      {"activation_fn", "gelu-approximate"},
      {"qk_norm", "rms_norm_across_heads"},
      {"norm_elementwise_affine", false},
      {"norm_eps", 1e-6},
      {"caption_channels", 3840},
      {"attention_bias", true},
      {"attention_out_bias", true},
      {"rope_theta", 10000.0},
      {"rope_double_precision", true},
      {"timestep_scale_multiplier", 1000},
      {"cross_attn_timestep_scale_multiplier", 1000},
      {"rope_type", "interleaved"},
      {"use_prompt_embeddings", true},
      {"ff_bias", true},
      {"audio_ff_bias", true},
      {"use_prompt_adaln_single", true},
      {"use_keyframes_abs_pos_embedding", false},
  };
  return d;
}

}  // namespace

DitConfig DitConfig::from_diffusers(const nlohmann::json& dc) {
  return read_json_fields("dit", "the Diffusers config.json", [&] {
    LTX_CHECK(dc.is_object(), "ltx.dit", "the Diffusers config is not a JSON object");
    const std::string cls = dc.value("_class_name", std::string());
    LTX_CHECK(cls.empty() || cls == "LTX2VideoTransformer3DModel", "ltx.dit", "Diffusers config of a ", cls,
              ", expected LTX2VideoTransformer3DModel");
    const auto get = [&](const char* key) -> nlohmann::json {
      if (dc.contains(key) && !dc.at(key).is_null()) return dc.at(key);
      return diffusers_defaults().at(key);
    };
    // Choices the official model has no counterpart for, or makes per model where Diffusers makes them per stream.
    std::string bad;
    const auto require = [&](const char* key, const nlohmann::json& want) {
      if (get(key) != want)
        bad += std::string(bad.empty() ? "" : "; ") + key + " is " + get(key).dump() + ", expected " + want.dump();
    };
    for (const char* key : {"patch_size", "patch_size_t", "audio_patch_size", "audio_patch_size_t"}) require(key, 1);
    for (const char* key : {"attention_out_bias", "ff_bias", "audio_ff_bias", "use_prompt_adaln_single"})
      require(key, true);
    require("use_keyframes_abs_pos_embedding", false);
    require("audio_gated_attn", get("gated_attn"));
    require("audio_cross_attn_mod", get("cross_attn_mod"));
    require("qk_norm", "rms_norm_across_heads");
    LTX_CHECK(bad.empty(), "ltx.dit", "unsupported Diffusers transformer config: ", bad);

    // The official keys; the fixed ones are what LTX2VideoTransformer3DModel hard-codes.
    nlohmann::json tc = {
        {"dropout", 0.0},
        {"attention_bias", get("attention_bias")},
        {"num_vector_embeds", nullptr},
        {"activation_fn", get("activation_fn")},
        {"num_embeds_ada_norm", 1000},
        {"use_linear_projection", false},
        {"only_cross_attention", false},
        {"cross_attention_norm", true},
        {"double_self_attention", false},
        {"upcast_attention", false},
        {"standardization_norm", "rms_norm"},
        {"norm_elementwise_affine", get("norm_elementwise_affine")},
        {"qk_norm", "rms_norm"},  // Diffusers' rms_norm_across_heads: RMSNorm over all heads, as ltx-core's
        {"positional_embedding_type", "rope"},
        {"use_middle_indices_grid", true},
        {"use_audio_video_cross_attention", true},
        {"share_ff", false},
        {"av_cross_ada_norm", true},
        {"num_attention_heads", get("num_attention_heads")},
        {"attention_head_dim", get("attention_head_dim")},
        {"in_channels", get("in_channels")},
        {"out_channels", get("out_channels")},
        {"num_layers", get("num_layers")},
        {"cross_attention_dim", get("cross_attention_dim")},
        {"norm_eps", get("norm_eps")},
        {"positional_embedding_theta", get("rope_theta")},
        // LTX2AudioVideoRotaryPosEmbed(base_num_frames, base_height, base_width) normalise like max_pos.
        {"positional_embedding_max_pos", {get("pos_embed_max_pos"), get("base_height"), get("base_width")}},
        {"timestep_scale_multiplier", get("timestep_scale_multiplier")},
        {"audio_num_attention_heads", get("audio_num_attention_heads")},
        {"audio_attention_head_dim", get("audio_attention_head_dim")},
        {"audio_in_channels", get("audio_in_channels")},
        {"audio_out_channels", get("audio_out_channels")},
        {"audio_cross_attention_dim", get("audio_cross_attention_dim")},
        {"audio_positional_embedding_max_pos", {get("audio_pos_embed_max_pos")}},
        // transformer_ltx2.py forward: the A<->V gate timestep is scaled by this / timestep_scale_multiplier.
        {"av_ca_timestep_scale_multiplier", get("cross_attn_timestep_scale_multiplier")},
        {"rope_type", get("rope_type")},
        {"frequencies_precision", get("rope_double_precision").get<bool>() ? "float64" : "float32"},
        {"apply_gated_attention", get("gated_attn")},
        {"cross_attention_adaln", get("cross_attn_mod")},
        {"caption_proj_before_connector", !get("use_prompt_embeddings").get<bool>()},
        {"caption_channels", get("caption_channels")},
    };
    return from_metadata(tc, DitModelType::AudioVideo);
  });
}

}  // namespace ltx::ltxm

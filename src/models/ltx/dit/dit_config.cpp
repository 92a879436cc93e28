#include "models/ltx/dit/dit_config.h"

#include "core/error.h"

namespace ltx::ltxm {
namespace {

std::vector<double> doubles(const nlohmann::json& j) {
  std::vector<double> v;
  for (const auto& x : j) v.push_back(x.get<double>());
  return v;
}

}  // namespace

DitConfig DitConfig::from_metadata(const nlohmann::json& tc, DitModelType type) {
  return read_json_fields("dit", "the checkpoint's transformer config", [&] {
    // model_configurator.py:check_config_value: these must hold exactly (a missing key reads as null).
    const std::vector<std::pair<const char*, nlohmann::json>> fixed = {
        {"dropout", 0.0},
        {"attention_bias", true},
        {"num_vector_embeds", nullptr},
        {"activation_fn", "gelu-approximate"},
        {"num_embeds_ada_norm", 1000},
        {"use_linear_projection", false},
        {"only_cross_attention", false},
        {"cross_attention_norm", true},
        {"double_self_attention", false},
        {"upcast_attention", false},
        {"standardization_norm", "rms_norm"},
        {"norm_elementwise_affine", false},
        {"qk_norm", "rms_norm"},
        {"positional_embedding_type", "rope"},
        {"use_middle_indices_grid", true},
    };
    std::string bad;
    const auto check = [&](const char* key, const nlohmann::json& want) {
      const nlohmann::json have = tc.contains(key) ? tc.at(key) : nlohmann::json(nullptr);
      if (have == want) return;
      bad += std::string(bad.empty() ? "" : "; ") + key + " is " + have.dump() + ", expected " + want.dump();
    };
    for (const auto& [k, v] : fixed) check(k, v);
    if (type == DitModelType::AudioVideo) {
      check("use_audio_video_cross_attention", true);
      check("share_ff", false);
      check("av_cross_ada_norm", true);
    }
    LTX_CHECK(bad.empty(), "ltx.dit", "unsupported transformer config: ", bad);

    DitConfig c;
    c.type = type;
    c.n_heads = tc.value("num_attention_heads", c.n_heads);
    c.head_dim = tc.value("attention_head_dim", c.head_dim);
    c.in_channels = tc.value("in_channels", c.in_channels);
    c.out_channels = tc.value("out_channels", c.out_channels);
    c.n_layers = tc.value("num_layers", c.n_layers);
    c.cross_attention_dim = tc.value("cross_attention_dim", c.cross_attention_dim);
    c.norm_eps = tc.value("norm_eps", c.norm_eps);
    c.theta = tc.value("positional_embedding_theta", c.theta);
    if (tc.contains("positional_embedding_max_pos")) c.max_pos = doubles(tc.at("positional_embedding_max_pos"));
    c.timestep_scale_multiplier = tc.value("timestep_scale_multiplier", c.timestep_scale_multiplier);
    c.audio_n_heads = tc.value("audio_num_attention_heads", c.audio_n_heads);
    c.audio_head_dim = tc.value("audio_attention_head_dim", c.audio_head_dim);
    c.audio_in_channels = tc.value("audio_in_channels", c.audio_in_channels);
    c.audio_out_channels = tc.value("audio_out_channels", c.audio_out_channels);
    c.audio_cross_attention_dim = tc.value("audio_cross_attention_dim", c.audio_cross_attention_dim);
    if (tc.contains("audio_positional_embedding_max_pos"))
      c.audio_max_pos = doubles(tc.at("audio_positional_embedding_max_pos"));
    c.av_ca_timestep_scale_multiplier = tc.value("av_ca_timestep_scale_multiplier", c.av_ca_timestep_scale_multiplier);
    const std::string rope = tc.value("rope_type", std::string("interleaved"));
    LTX_CHECK(rope == "split" || rope == "interleaved", "ltx.dit", "unknown rope_type '", rope, "'");
    c.rope_mode = rope == "split" ? RopeMode::SplitHalf : RopeMode::Interleaved;
    c.float64_grid = tc.contains("frequencies_precision") && tc.at("frequencies_precision") == "float64";
    c.gated_attention = tc.value("apply_gated_attention", false);
    c.cross_attention_adaln = tc.value("cross_attention_adaln", false);
    c.caption_projection = !tc.value("caption_proj_before_connector", false);
    c.caption_channels = tc.value("caption_channels", c.caption_channels);
    LTX_CHECK(c.max_pos.size() == 3 && c.audio_max_pos.size() == 1, "ltx.dit",
              "positional_embedding_max_pos needs 3 entries and audio_positional_embedding_max_pos 1");
    if (c.has_audio())
      // The A<->V attentions have the audio stream's width, and their rotary tables are audio_cross_attention_dim
      // wide (transformer_args.py): ltx-core runs only configs where the two agree.
      LTX_CHECK(c.audio_cross_attention_dim == c.audio_inner(), "ltx.dit", "audio_cross_attention_dim ",
                c.audio_cross_attention_dim, " must equal the audio stream's width ", c.audio_inner(),
                " (audio_num_attention_heads x audio_attention_head_dim)");
    return c;
  });
}

}  // namespace ltx::ltxm

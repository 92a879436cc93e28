#include "models/ltx/dit/dit_keys.h"

#include <array>
#include <utility>
#include <vector>

namespace ltx::ltxm {
namespace {

using Rename = std::pair<std::string_view, std::string_view>;  // {official, diffusers}

// The first path segment (model-level modules). The others (caption_projection, audio_caption_projection,
// scale_shift_table, audio_scale_shift_table, proj_out, audio_proj_out, transformer_blocks) keep their names.
constexpr std::array<Rename, 10> kTopLevel = {{
    {"patchify_proj", "proj_in"},
    {"audio_patchify_proj", "audio_proj_in"},
    {"adaln_single", "time_embed"},
    {"audio_adaln_single", "audio_time_embed"},
    {"prompt_adaln_single", "prompt_adaln"},
    {"audio_prompt_adaln_single", "audio_prompt_adaln"},
    {"av_ca_video_scale_shift_adaln_single", "av_cross_attn_video_scale_shift"},
    {"av_ca_audio_scale_shift_adaln_single", "av_cross_attn_audio_scale_shift"},
    {"av_ca_a2v_gate_adaln_single", "av_cross_attn_video_a2v_gate"},
    {"av_ca_v2a_gate_adaln_single", "av_cross_attn_audio_v2a_gate"},
}};

// Segments at any depth: the per-block A<->V tables and the attention QK norms. Everything else inside a block
// (attn1, audio_attn1, attn2, audio_attn2, audio_to_video_attn, video_to_audio_attn, to_q/k/v, to_out.0,
// to_gate_logits, ff.net.0.proj, ff.net.2, audio_ff, scale_shift_table, audio_scale_shift_table,
// prompt_scale_shift_table, audio_prompt_scale_shift_table) is named alike.
constexpr std::array<Rename, 4> kAnyDepth = {{
    {"scale_shift_table_a2v_ca_video", "video_a2v_cross_attn_scale_shift_table"},
    {"scale_shift_table_a2v_ca_audio", "audio_a2v_cross_attn_scale_shift_table"},
    {"q_norm", "norm_q"},
    {"k_norm", "norm_k"},
}};

std::vector<std::string_view> split(std::string_view key) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    const size_t dot = key.find('.', start);
    parts.push_back(key.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start));
    if (dot == std::string_view::npos) return parts;
    start = dot + 1;
  }
}

template <size_t N>
std::string_view rename(std::string_view segment, const std::array<Rename, N>& table, bool to_diffusers) {
  for (const auto& [official, diffusers] : table) {
    if (to_diffusers && segment == official) return diffusers;
    if (!to_diffusers && segment == diffusers) return official;
  }
  return segment;
}

std::string map_key(std::string_view key, bool to_diffusers) {
  const std::vector<std::string_view> parts = split(key);
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    std::string_view s = i == 0 ? rename(parts[i], kTopLevel, to_diffusers) : parts[i];
    s = rename(s, kAnyDepth, to_diffusers);
    if (i) out += '.';
    out += s;
  }
  return out;
}

}  // namespace

std::string dit_key_to_diffusers(std::string_view official) { return map_key(official, true); }
std::string dit_key_from_diffusers(std::string_view diffusers) { return map_key(diffusers, false); }

}  // namespace ltx::ltxm

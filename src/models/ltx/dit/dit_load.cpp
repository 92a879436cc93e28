// Loading the DiT from the official single-file layout (keys under model.diffusion_model.), ltx_core
// model.py:_init_video/_init_audio/_init_audio_video and transformer.py:BasicAVTransformerBlock.__init__.
#include "models/ltx/dit/dit.h"

namespace ltx::ltxm {
namespace {

struct StreamDims {
  const char* prefix;  // "" for video, "audio_" for audio
  int64_t dim, heads, head_dim, in_channels, out_channels, context_dim;
};

DitStreamWeights load_stream(const WeightLoader& l, const DitConfig& c, const StreamDims& s, DType compute) {
  const std::string p = s.prefix;
  DitStreamWeights w;
  w.patchify = nn::Linear::load(l, p + "patchify_proj", s.in_channels, s.dim, true, compute);
  w.adaln = nn::AdaLayerNormSingle::load(l, p + "adaln_single", s.dim, c.adaln_coef(), compute);
  if (c.cross_attention_adaln)
    w.prompt_adaln = nn::AdaLayerNormSingle::load(l, p + "prompt_adaln_single", s.dim, 2, compute);
  if (c.caption_projection) {
    // text_projection.py:PixArtAlphaTextProjection(caption_channels, inner): Linear -> GELU(tanh) -> Linear.
    const WeightLoader cp = l.scope(p + "caption_projection");
    w.caption_1 = nn::Linear::load(cp, "linear_1", c.caption_channels, s.dim, true, compute);
    w.caption_2 = nn::Linear::load(cp, "linear_2", s.dim, s.dim, true, compute);
  }
  w.out_table = nn::prepare_vector(l.get(p + "scale_shift_table", {2, s.dim}));
  w.proj_out = nn::Linear::load(l, p + "proj_out", s.dim, s.out_channels, true, compute);
  if (c.has_audio()) {
    const std::string stream = p.empty() ? "video" : "audio";
    w.av_scale_shift =
        nn::AdaLayerNormSingle::load(l, "av_ca_" + stream + "_scale_shift_adaln_single", s.dim, 4, compute);
    const char* gate = p.empty() ? "av_ca_a2v_gate_adaln_single" : "av_ca_v2a_gate_adaln_single";
    w.av_gate = nn::AdaLayerNormSingle::load(l, gate, s.dim, 1, compute);
  }
  return w;
}

DitBlockStream load_block_stream(const WeightLoader& b, const DitConfig& c, const StreamDims& s, DType compute) {
  const std::string p = s.prefix;
  const bool g = c.gated_attention;
  DitBlockStream w{
      nn::AttentionBlock::load(b, p + "attn1", s.dim, s.dim, s.heads, s.head_dim, g, c.norm_eps, compute),
      nn::AttentionBlock::load(b, p + "attn2", s.dim, s.context_dim, s.heads, s.head_dim, g, c.norm_eps, compute),
      nn::FeedForward::load(b, p + "ff", s.dim, s.dim, 4, compute),
      nn::prepare_vector(b.get(p + "scale_shift_table", {c.adaln_coef(), s.dim})),
      {},
      {}};
  if (c.cross_attention_adaln) w.prompt_table = nn::prepare_vector(b.get(p + "prompt_scale_shift_table", {2, s.dim}));
  if (c.has_audio())
    w.av_table = nn::prepare_vector(
        b.get(std::string("scale_shift_table_a2v_ca_") + (p.empty() ? "video" : "audio"), {5, s.dim}));
  return w;
}

}  // namespace

Dit Dit::load(const WeightLoader& loader, const DitConfig& c, DType compute, const Backend& backend) {
  Dit d(backend);
  d.config_ = c;
  // The connectors share the DiT's prefix in the single-file layout; they load separately.
  loader.ignore("video_embeddings_connector.");
  loader.ignore("audio_embeddings_connector.");
  loader.ignore("embeddings_connector.");
  const StreamDims video{"", c.inner(), c.n_heads, c.head_dim, c.in_channels, c.out_channels, c.cross_attention_dim};
  const StreamDims audio{"audio_",
                         c.audio_inner(),
                         c.audio_n_heads,
                         c.audio_head_dim,
                         c.audio_in_channels,
                         c.audio_out_channels,
                         c.audio_cross_attention_dim};
  DitWeights& w = d.weights_;
  w.video = load_stream(loader, c, video, compute);
  if (c.has_audio()) w.audio = load_stream(loader, c, audio, compute);
  const WeightLoader blocks = loader.scope("transformer_blocks");
  for (int64_t i = 0; i < c.n_layers; ++i) {
    const WeightLoader b = blocks.scope(i);
    DitBlockWeights bw;
    bw.video = load_block_stream(b, c, video, compute);
    if (c.has_audio()) {
      bw.audio = load_block_stream(b, c, audio, compute);
      // transformer.py: both A<->V attentions use the audio head layout; gated as their query stream.
      bw.audio_to_video =
          nn::AttentionBlock::load(b, "audio_to_video_attn", c.inner(), c.audio_inner(), c.audio_n_heads,
                                   c.audio_head_dim, c.gated_attention, c.norm_eps, compute);
      bw.video_to_audio =
          nn::AttentionBlock::load(b, "video_to_audio_attn", c.audio_inner(), c.inner(), c.audio_n_heads,
                                   c.audio_head_dim, c.gated_attention, c.norm_eps, compute);
    }
    w.blocks.push_back(std::move(bw));
  }
  loader.finish();
  return d;
}

}  // namespace ltx::ltxm

// Video VAE forward passes as graph nodes. Formulas cite ltx_core/model/video_vae/*.py.
#include <vector>

#include "core/error.h"
#include "models/ltx/video_vae/video_vae.h"

namespace ltx::video_vae {
namespace {

constexpr float kPixelNormEps = 1e-8f;  // common/normalization.py PixelNorm default (the audio VAE uses 1e-6)
constexpr float kResnetEps = 1e-6f;     // video_vae.py: resnet_eps / ResnetBlock3D eps (norm3 GroupNorm)

// A [C] parameter as [1, C, 1, 1, 1] for broadcasting over [B, C, F, H, W].
Value channel_constant(Graph& g, const std::string& name, const Tensor& v) {
  return g.constant(name, v.reshape({1, v.dim(0), 1, 1, 1}));
}

Value pixel_norm(Value x) { return ops::pixel_norm(x, 1, kPixelNormEps); }

// ada [B, k, C] -> row i as [B, C, 1, 1, 1].
Value ada_row(Value ada, int i) {
  const int64_t b = ada.dim(0), c = ada.dim(2);
  return ops::reshape(ops::slice(ada, 1, i, i + 1), {b, c, 1, 1, 1});
}

// scale_shift_table [k, C] + emb [B, k·C] viewed as [B, k, C] (resnet.py ResnetBlock3D.forward,
// video_vae.py VideoDecoder.forward).
Value ada_values(Graph& g, const std::string& name, const Tensor& table, Value emb) {
  const int64_t k = table.dim(0), c = table.dim(1), b = emb.dim(0);
  return ops::add(g.constant(name, table), ops::reshape(emb, {b, k, c}));
}

// resnet.py _feed_spatial_noise: h + (noise[H, W] · per_channel_scale[C, 1, 1]) broadcast over batch and frames.
Value add_spatial_noise(Graph& g, Value h, Value noise, const std::string& name, const Tensor& scale) {
  const int64_t c = h.dim(1), hh = h.dim(3), ww = h.dim(4);
  LTX_CHECK(noise.rank() == 2 && noise.dim(0) == hh && noise.dim(1) == ww, "video_vae", name, ": noise ",
            noise.shape().str(), " does not match [", hh, ", ", ww, "]");
  const Value scaled =
      ops::mul(ops::reshape(noise, {1, 1, 1, hh, ww}), g.constant(name, scale.reshape({1, c, 1, 1, 1})));
  return ops::add(h, scaled);
}

struct ResnetInputs {
  bool causal = true;
  std::optional<Value> temb;  // [B, 4C]
  std::optional<Value> noise1, noise2;
};

Value resnet_forward(const ResnetBlock& r, Value x, const ResnetInputs& in) {
  Graph& g = *x.graph;
  std::optional<Value> ada;
  if (r.scale_shift_table.defined()) {
    LTX_CHECK(in.temb.has_value(), "video_vae", r.name, ": timestep embedding missing");
    ada = ada_values(g, r.name + ".scale_shift_table", r.scale_shift_table, *in.temb);  // [B, 4, C]
  }
  Value h = pixel_norm(x);
  if (ada) h = ops::modulate(h, ada_row(*ada, 1), ada_row(*ada, 0));  // shift1, scale1, shift2, scale2
  h = r.conv1(ops::silu(h), in.causal);
  if (r.per_channel_scale1.defined()) {
    LTX_CHECK(in.noise1.has_value(), "video_vae", r.name, ": noise1 missing");
    h = add_spatial_noise(g, h, *in.noise1, r.name + ".per_channel_scale1", r.per_channel_scale1);
  }
  h = pixel_norm(h);
  if (ada) h = ops::modulate(h, ada_row(*ada, 3), ada_row(*ada, 2));
  h = r.conv2(ops::silu(h), in.causal);
  if (r.per_channel_scale2.defined()) {
    LTX_CHECK(in.noise2.has_value(), "video_vae", r.name, ": noise2 missing");
    h = add_spatial_noise(g, h, *in.noise2, r.name + ".per_channel_scale2", r.per_channel_scale2);
  }
  Value skip = x;
  if (r.shortcut_weight.defined()) {
    skip = ops::group_norm(x, 1, g.constant(r.name + ".norm3.weight", r.norm3_weight),
                           g.constant(r.name + ".norm3.bias", r.norm3_bias), kResnetEps);
    ConvAttrs a;
    a.spatial = 3;
    skip = ops::conv(skip, g.constant(r.name + ".conv_shortcut.weight", r.shortcut_weight),
                     g.constant(r.name + ".conv_shortcut.bias", r.shortcut_bias), a);
  }
  return ops::add(skip, h);
}

// sampling.py SpaceToDepthDownsample.forward.
Value space_to_depth_down(const SpaceToDepthDown& d, Value x) {
  if (d.stride[0] == 2) {  // duplicate the first frame
    const Value parts[] = {ops::slice(x, 2, 0, 1), x};
    x = ops::concat(parts, 2);
  }
  // skip: s2d, then channels averaged in groups of group_size
  Value skip = ops::space_to_depth(x, 3, d.stride);  // [B, C·∏s, F', H', W']
  const Shape s = skip.shape();
  const int64_t out = s[1] / d.group_size;
  skip = ops::reshape(skip, {s[0], out, d.group_size, s[2] * s[3] * s[4]});
  const int mean_axis[] = {2};
  skip = ops::reshape(ops::reduce_mean(skip, mean_axis), {s[0], out, s[2], s[3], s[4]});
  const Value main = ops::space_to_depth(d.conv(x, true), 3, d.stride);
  return ops::add(main, skip);
}

// sampling.py DepthToSpaceUpsample.forward.
Value depth_to_space_up(const DepthToSpaceUp& u, Value x, bool causal) {
  std::optional<Value> skip;
  if (u.residual) {
    Value r = ops::depth_to_space(x, 3, u.stride);
    const int64_t repeats = u.stride[0] * u.stride[1] * u.stride[2] / u.reduction;
    const std::vector<Value> copies(static_cast<size_t>(repeats), r);
    r = ops::concat(copies, 1);  // torch .repeat(1, n, 1, 1, 1): tiled copies along channels
    if (u.stride[0] == 2) r = ops::slice(r, 2, 1, r.dim(2));
    skip = r;
  }
  Value y = ops::depth_to_space(u.conv(x, causal), 3, u.stride);
  if (u.stride[0] == 2) y = ops::slice(y, 2, 1, y.dim(2));  // drop the first frame
  if (skip) y = ops::add(y, *skip);
  return y;
}

}  // namespace

Value LatentStats::normalize(Value x) const {
  Graph& g = *x.graph;
  return ops::div(ops::sub(x, channel_constant(g, "per_channel_statistics.mean-of-means", mean)),
                  channel_constant(g, "per_channel_statistics.std-of-means", std));
}

Value LatentStats::un_normalize(Value x) const {
  Graph& g = *x.graph;
  return ops::add(ops::mul(x, channel_constant(g, "per_channel_statistics.std-of-means", std)),
                  channel_constant(g, "per_channel_statistics.mean-of-means", mean));
}

Value TimeEmbedder::operator()(Graph& g, float scaled_timestep, int64_t batch) const {
  // timestep_embedding.py Timesteps(256, flip_sin_to_cos=True, downscale_freq_shift=0), one row per batch item.
  const std::vector<float> t(static_cast<size_t>(batch), scaled_timestep);
  return mlp(g.constant(name + ".sinusoid", nn::timestep_sinusoid(t, 256)));  // [B, dim]
}

Value patchify(Value x, int64_t p) {
  // x [B, C, F, H·p, W·p]; space_to_depth orders channels (c, q, r) with q the height offset; ltx-core wants
  // (c, r, q), so swap the two offsets (ops.py patchify).
  LTX_CHECK(x.rank() == 5, "video_vae", "patchify expects [B, C, F, H, W], got ", x.shape().str());
  if (p == 1) return x;
  Value s = ops::space_to_depth(x, 3, {1, p, p});  // [B, C·p·p, F, H, W]
  const Shape sh = s.shape();
  const int64_t c = x.dim(1), rest = sh[2] * sh[3] * sh[4];
  s = ops::permute(ops::reshape(s, {sh[0], c, p, p, rest}), {0, 1, 3, 2, 4});
  return ops::reshape(s, sh);
}

Value unpatchify(Value x, int64_t p) {
  LTX_CHECK(x.rank() == 5 && x.dim(1) % (p * p) == 0, "video_vae", "unpatchify of ", x.shape().str());
  if (p == 1) return x;
  const Shape sh = x.shape();
  const int64_t c = sh[1] / (p * p), rest = sh[2] * sh[3] * sh[4];
  Value s = ops::permute(ops::reshape(x, {sh[0], c, p, p, rest}), {0, 1, 3, 2, 4});  // (c, r, q) -> (c, q, r)
  return ops::depth_to_space(ops::reshape(s, sh), 3, {1, p, p});
}

Value VideoEncoder::forward(Value video, Taps* taps) const {
  // video_vae.py VideoEncoder.forward; the encoder is always causal.
  LTX_CHECK(video.rank() == 5 && video.dim(1) == config.in_channels && (video.dim(2) - 1) % 8 == 0, "video_vae",
            "encoder expects [B, ", config.in_channels, ", 1+8k, H, W], got ", video.shape().str());
  Value x = tap(taps, "conv_in.out", conv_in(patchify(video, config.patch_size), true));
  for (size_t i = 0; i < down_blocks.size(); ++i) {
    const std::string path = "down_blocks." + std::to_string(i);
    const Block& b = down_blocks[i];
    if (const auto* m = std::get_if<MidBlock>(&b)) {
      for (size_t j = 0; j < m->res_blocks.size(); ++j)
        x = tap(taps, path + ".res_blocks." + std::to_string(j) + ".out",
                resnet_forward(m->res_blocks[j], x, ResnetInputs{}));
    } else if (const auto* r = std::get_if<ResnetBlock>(&b)) {
      x = resnet_forward(*r, x, ResnetInputs{});
    } else if (const auto* c = std::get_if<CausalConv3d>(&b)) {
      x = (*c)(x, true);
    } else if (const auto* d = std::get_if<SpaceToDepthDown>(&b)) {
      x = space_to_depth_down(*d, x);
    } else {
      fail("video_vae", path + ": not an encoder block");
    }
    x = tap(taps, path + ".out", x);
  }
  x = tap(taps, "conv_norm_out.out", pixel_norm(x));
  x = tap(taps, "conv_out.out", conv_out(ops::silu(x), true));  // [B, C + log-var channels, F', H', W']
  const Value means = ops::slice(x, 1, 0, config.latent_channels);
  return stats.normalize(means);
}

std::vector<std::pair<std::string, Shape>> VideoDecoder::noise_inputs(const Shape& latent) const {
  std::vector<std::pair<std::string, Shape>> out;
  if (!config.timestep_conditioning) return out;
  out.emplace_back("noise.latent", latent);
  // Spatial size at each block: follow the depth-to-space strides.
  int64_t h = latent[3], w = latent[4];
  for (size_t i = 0; i < up_blocks.size(); ++i) {
    const std::string path = "up_blocks." + std::to_string(i);
    if (const auto* m = std::get_if<MidBlock>(&up_blocks[i])) {
      for (size_t j = 0; j < m->res_blocks.size(); ++j) {
        if (!m->res_blocks[j].per_channel_scale1.defined()) continue;
        const std::string rp = path + ".res_blocks." + std::to_string(j);
        out.emplace_back(rp + ".noise1", Shape{h, w});
        out.emplace_back(rp + ".noise2", Shape{h, w});
      }
    } else if (const auto* u = std::get_if<DepthToSpaceUp>(&up_blocks[i])) {
      h *= u->stride[1];
      w *= u->stride[2];
    }
  }
  return out;
}

Value VideoDecoder::forward(Value latent, const DecoderNoise& noise, Taps* taps) const {
  // video_vae.py VideoDecoder.forward.
  Graph& g = *latent.graph;
  LTX_CHECK(latent.rank() == 5 && latent.dim(1) == config.latent_channels, "video_vae", "decoder expects [B, ",
            config.latent_channels, ", F, H, W], got ", latent.shape().str());
  const bool causal = config.causal_decoder;
  const bool tc = config.timestep_conditioning;
  const int64_t batch = latent.dim(0);
  Value x = latent;
  if (tc) {
    LTX_CHECK(noise.latent.has_value(), "video_vae", "the timestep-conditioned decoder needs its latent noise");
    x = ops::add(ops::scale(*noise.latent, decode_noise_scale), ops::scale(x, 1.0f - decode_noise_scale));
  }
  x = tap(taps, "conv_in.in.x", stats.un_normalize(x));
  x = tap(taps, "conv_in.out", conv_in(x, causal));
  const float scaled_t = decode_timestep * timestep_scale_multiplier;
  for (size_t i = 0; i < up_blocks.size(); ++i) {
    const std::string path = "up_blocks." + std::to_string(i);
    const Block& b = up_blocks[i];
    if (const auto* m = std::get_if<MidBlock>(&b)) {
      ResnetInputs in;
      in.causal = causal;
      if (m->time_embedder) in.temb = tap(taps, path + ".time_embedder.out", (*m->time_embedder)(g, scaled_t, batch));
      for (size_t j = 0; j < m->res_blocks.size(); ++j) {
        const std::string rp = path + ".res_blocks." + std::to_string(j);
        in.noise1.reset();
        in.noise2.reset();
        if (m->res_blocks[j].per_channel_scale1.defined()) {
          const auto n1 = noise.spatial.find(rp + ".noise1"), n2 = noise.spatial.find(rp + ".noise2");
          LTX_CHECK(n1 != noise.spatial.end() && n2 != noise.spatial.end(), "video_vae", rp,
                    ": noise1/noise2 not given");
          in.noise1 = n1->second;
          in.noise2 = n2->second;
        }
        x = tap(taps, rp + ".out", resnet_forward(m->res_blocks[j], x, in));
      }
    } else if (const auto* r = std::get_if<ResnetBlock>(&b)) {
      x = resnet_forward(*r, x, ResnetInputs{causal, {}, {}, {}});
    } else if (const auto* u = std::get_if<DepthToSpaceUp>(&b)) {
      x = depth_to_space_up(*u, x, causal);
    } else {
      fail("video_vae", path + ": not a decoder block");
    }
    x = tap(taps, path + ".out", x);
  }
  x = tap(taps, "conv_norm_out.out", pixel_norm(x));
  if (tc) {
    const Value emb = tap(taps, "last_time_embedder.out", (*last_time_embedder)(g, scaled_t, batch));  // [B, 2C]
    const Value ada = ada_values(g, "last_scale_shift_table", last_scale_shift_table, emb);            // [B, 2, C]
    x = ops::modulate(x, ada_row(ada, 1), ada_row(ada, 0));                                            // shift, scale
  }
  x = tap(taps, "conv_out.out", conv_out(ops::silu(x), causal));
  return unpatchify(x, config.patch_size);
}

}  // namespace ltx::video_vae

#include "models/ltx/upsampler/upsampler.h"

#include <cmath>

#include "core/error.h"
#include "core/mapped_file.h"
#include "nn/layers.h"

namespace ltx::upsampler {
namespace {

using video_vae::Conv;
using video_vae::tap;
using video_vae::Taps;

constexpr int kGroups = 32;         // torch.nn.GroupNorm(32, C) everywhere (model.py, res_block.py)
constexpr float kGroupEps = 1e-5f;  // GroupNorm's default

Conv load_conv(const WeightLoader& l, const std::string& name, int64_t in, int64_t out, int spatial, DType compute) {
  const std::vector<int64_t> k(static_cast<size_t>(spatial), 3);
  return Conv::load(l, name, in, out, k, 1, PadMode::Zeros, compute);
}

void load_norm(const WeightLoader& l, const std::string& name, int64_t c, Tensor& w, Tensor& b) {
  w = nn::prepare_vector(l.scope(name).get("weight", {c}));
  b = nn::prepare_vector(l.scope(name).get("bias", {c}));
}

Value group_norm(Graph& g, Value x, const std::string& name, const Tensor& w, const Tensor& b) {
  return ops::group_norm(x, kGroups, g.constant(name + ".weight", w), g.constant(name + ".bias", b), kGroupEps);
}

Value res_block(const ResBlock& r, Value x) {
  Graph& g = *x.graph;
  Value h = ops::silu(group_norm(g, r.conv1(x), r.norm1, r.norm1_weight, r.norm1_bias));
  h = group_norm(g, r.conv2(h), r.norm2, r.norm2_weight, r.norm2_bias);
  return ops::silu(ops::add(h, x));
}

// [B, C, F, H, W] <-> [B·F, C, H, W] (the 2-D heads run per frame).
Value frames_to_batch(Value x) {
  const Shape s = x.shape();
  return ops::reshape(ops::permute(x, {0, 2, 1, 3, 4}), {s[0] * s[2], s[1], s[3], s[4]});
}
Value batch_to_frames(Value x, int64_t b, int64_t f) {
  const Shape s = x.shape();
  return ops::permute(ops::reshape(x, {b, f, s[1], s[2], s[3]}), {0, 2, 1, 3, 4});
}

// blur_downsample.py: normalised outer product of the binomial row C(k-1, i), k = 5.
Tensor binomial_kernel(int64_t channels) {
  constexpr int kSize = 5;
  float row[kSize];
  float sum = 0;
  for (int i = 0; i < kSize; ++i) {
    row[i] = static_cast<float>(std::tgamma(kSize) / (std::tgamma(i + 1) * std::tgamma(kSize - i)));
    sum += row[i];
  }
  std::vector<float> k(static_cast<size_t>(channels * kSize * kSize));
  for (int64_t c = 0; c < channels; ++c)
    for (int i = 0; i < kSize; ++i)
      for (int j = 0; j < kSize; ++j)
        k[static_cast<size_t>((c * kSize + i) * kSize + j)] = row[i] * row[j] / (sum * sum);
  return Tensor::from_floats(DType::F32, {channels, 1, kSize, kSize}, k);
}

}  // namespace

UpsamplerConfig UpsamplerConfig::from_metadata(const Json& config) {
  return read_json_fields("upsampler", "the upsampler config", [&] {
    // model_configurator.py LatentUpsamplerConfigurator: absent keys take these defaults.
    UpsamplerConfig c;
    c.in_channels = config.value("in_channels", 128);
    c.mid_channels = config.value("mid_channels", 512);
    c.num_blocks_per_stage = config.value("num_blocks_per_stage", 4);
    LTX_CHECK(config.value("dims", 3) == 3, "upsampler", "only dims 3 is supported");
    const bool spatial = config.value("spatial_upsample", true);
    const bool temporal = config.value("temporal_upsample", false);
    const double scale = config.value("spatial_scale", 2.0);
    const bool rational = config.value("rational_resampler", false);
    LTX_CHECK(spatial || temporal, "upsampler", "config enables neither spatial nor temporal upsampling");
    if (spatial && temporal) {
      c.head = Head::SpatioTemporal;
    } else if (temporal) {
      c.head = Head::Temporal;
    } else if (rational) {
      c.head = Head::SpatialRational;
      // spatial_rational_resampler.py _rational_for_scale
      if (scale == 0.75) {
        c.num = 3, c.den = 4;
      } else if (scale == 1.5) {
        c.num = 3, c.den = 2;
      } else if (scale == 2.0) {
        c.num = 2, c.den = 1;
      } else if (scale == 4.0) {
        c.num = 4, c.den = 1;
      } else {
        fail("upsampler", "unsupported spatial_scale " + std::to_string(scale) + " (0.75, 1.5, 2, 4)");
      }
    } else {
      c.head = Head::Spatial;
    }
    LTX_CHECK(c.mid_channels % kGroups == 0, "upsampler", "mid_channels ", c.mid_channels, " not a multiple of 32");
    return c;
  });
}

LatentUpsampler LatentUpsampler::load(const WeightLoader& l, const UpsamplerConfig& config, DType compute) {
  LatentUpsampler u;
  u.config = config;
  const int64_t in = config.in_channels, mid = config.mid_channels;
  u.initial_conv = load_conv(l, "initial_conv", in, mid, 3, compute);
  load_norm(l, "initial_norm", mid, u.initial_norm_weight, u.initial_norm_bias);
  auto load_blocks = [&](const std::string& name, std::vector<ResBlock>& out) {
    for (int i = 0; i < config.num_blocks_per_stage; ++i) {
      const WeightLoader s = l.scope(name).scope(i);
      ResBlock r;
      const std::string p = s.prefix();
      r.conv1 = load_conv(s, "conv1", mid, mid, 3, compute);
      r.conv2 = load_conv(s, "conv2", mid, mid, 3, compute);
      r.norm1 = p + "norm1";
      r.norm2 = p + "norm2";
      load_norm(s, "norm1", mid, r.norm1_weight, r.norm1_bias);
      load_norm(s, "norm2", mid, r.norm2_weight, r.norm2_bias);
      out.push_back(std::move(r));
    }
  };
  load_blocks("res_blocks", u.res_blocks);
  const WeightLoader up = l.scope("upsampler");
  switch (config.head) {
    case Head::Spatial:
      u.head_conv = load_conv(up, "0", mid, 4 * mid, 2, compute);
      break;
    case Head::Temporal:
      u.head_conv = load_conv(up, "0", mid, 2 * mid, 3, compute);
      break;
    case Head::SpatioTemporal:
      u.head_conv = load_conv(up, "0", mid, 8 * mid, 3, compute);
      break;
    case Head::SpatialRational:
      u.head_conv = load_conv(up, "conv", mid, int64_t{config.num} * config.num * mid, 2, compute);
      // The blur kernel is a fixed buffer some files carry; it is recomputed, the stored copy is not needed.
      up.ignore("blur_down.kernel");
      break;
  }
  load_blocks("post_upsample_res_blocks", u.post_upsample_res_blocks);
  u.final_conv = load_conv(l, "final_conv", mid, in, 3, compute);
  return u;
}

void LatentUpsampler::drop_weight_pages() const {
  const auto drop = [](const video_vae::Conv& c) {
    for (const Tensor* t : {&c.weight, &c.bias})
      if (t->defined()) drop_file_pages(t->raw(), t->nbytes());
  };
  for (const video_vae::Conv* c : {&initial_conv, &final_conv, &head_conv}) drop(*c);
  for (const auto* blocks : {&res_blocks, &post_upsample_res_blocks})
    for (const ResBlock& b : *blocks) {
      drop(b.conv1);
      drop(b.conv2);
    }
}

Value LatentUpsampler::forward(Value latent, Taps* taps) const {
  // model.py LatentUpsampler.forward (dims 3).
  Graph& g = *latent.graph;
  LTX_CHECK(latent.rank() == 5 && latent.dim(1) == config.in_channels, "upsampler", "expects [B, ", config.in_channels,
            ", F, H, W], got ", latent.shape().str());
  const int64_t b = latent.dim(0), f = latent.dim(2);
  Value x = tap(taps, "initial_conv.out", initial_conv(latent));
  x = tap(taps, "initial_norm.out", group_norm(g, x, "initial_norm", initial_norm_weight, initial_norm_bias));
  x = ops::silu(x);
  for (size_t i = 0; i < res_blocks.size(); ++i)
    x = tap(taps, "res_blocks." + std::to_string(i) + ".out", res_block(res_blocks[i], x));
  switch (config.head) {
    case Head::Spatial: {
      Value y = tap(taps, "upsampler.0.out", head_conv(frames_to_batch(x)));
      y = tap(taps, "upsampler.1.out", ops::depth_to_space(y, 2, {2, 2, 1}));
      x = batch_to_frames(y, b, f);
      break;
    }
    case Head::SpatialRational: {
      Value y = tap(taps, "upsampler.conv.out", head_conv(frames_to_batch(x)));
      y = tap(taps, "upsampler.pixel_shuffle.out", ops::depth_to_space(y, 2, {config.num, config.num, 1}));
      if (config.den > 1) {  // blur_downsample.py: depthwise binomial blur, stride den, zero padding 2
        const int64_t c = y.dim(1);
        ConvAttrs a;
        a.spatial = 2;
        a.stride = {config.den, config.den, 1};
        a.pad_before = {2, 2, 0};
        a.pad_after = {2, 2, 0};
        a.groups = c;
        y = ops::conv(y, g.constant("upsampler.blur_down.kernel", binomial_kernel(c)), std::nullopt, a);
      }
      y = tap(taps, "upsampler.blur_down.out", y);
      x = batch_to_frames(y, b, f);
      break;
    }
    case Head::Temporal:
    case Head::SpatioTemporal: {
      Value y = tap(taps, "upsampler.0.out", head_conv(x));
      const std::array<int64_t, 3> factor =
          config.head == Head::Temporal ? std::array<int64_t, 3>{2, 1, 1} : std::array<int64_t, 3>{2, 2, 2};
      y = tap(taps, "upsampler.1.out", ops::depth_to_space(y, 3, factor));
      x = ops::slice(y, 2, 1, y.dim(2));  // the first frame encodes a single pixel frame: dropped
      break;
    }
  }
  for (size_t i = 0; i < post_upsample_res_blocks.size(); ++i)
    x = tap(taps, "post_upsample_res_blocks." + std::to_string(i) + ".out", res_block(post_upsample_res_blocks[i], x));
  return tap(taps, "final_conv.out", final_conv(x));
}

Value upsample_video(const LatentUpsampler& up, const video_vae::LatentStats& stats, Value latent, Taps* taps) {
  Value x = tap(taps, "initial_conv.in.x", stats.un_normalize(latent));
  return stats.normalize(up.forward(x, taps));
}

}  // namespace ltx::upsampler

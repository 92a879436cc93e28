#include "models/ltx/vocoder/vocoder.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "core/error.h"
#include "nn/layers.h"

namespace ltx::vocoder {
namespace {

using video_vae::Conv;
using video_vae::tap;
using video_vae::Taps;

constexpr float kResblockSlope = 0.1f;  // resnet.py LRELU_SLOPE
constexpr float kActPostSlope = 0.01f;  // nn.LeakyReLU() default (HiFi-GAN act_post)

int64_t get_padding(int64_t k, int64_t d) { return (k * d - d) / 2; }  // vocoder.py get_padding

Conv load_conv1d(const WeightLoader& l, const std::string& name, int64_t in, int64_t out, int64_t k, int64_t d,
                 int64_t pad, DType compute, bool bias = true) {
  const int64_t kernel[] = {k};
  Conv c = Conv::load(l, name, in, out, kernel, pad, PadMode::Zeros, compute, bias);
  c.attrs.dilation = {d, 1, 1};
  return c;
}

Activation1d load_act(const WeightLoader& l, int64_t channels, DType compute) {
  Activation1d a;
  a.fused = compute != DType::F32;
  a.name = l.prefix().substr(0, l.prefix().size() - 1);
  a.alpha = nn::prepare_vector(l.get("act.alpha", {channels}));
  a.beta = nn::prepare_vector(l.get("act.beta", {channels}));
  a.up_filter = nn::prepare_vector(l.get("upsample.filter", {1, 1, 12}));
  a.down_filter = nn::prepare_vector(l.get("downsample.lowpass.filter", {1, 1, 12}));
  return a;
}

// A [1, 1, K] filter repeated per channel: [C, 1, K] (the reference's filter.expand(C, -1, -1)).
Tensor depthwise(const Tensor& filter, int64_t channels) {
  const std::vector<float> f = filter.to_floats();
  std::vector<float> out;
  for (int64_t c = 0; c < channels; ++c) out.insert(out.end(), f.begin(), f.end());
  return Tensor::from_floats(DType::F32, {channels, 1, static_cast<int64_t>(f.size())}, out);
}

// vocoder.py UpSample1d.forward: replicate pad by `pad`, depthwise transposed conv with stride `ratio`, times
// ratio, crop [pad_left, L - pad_right).
Value upsample1d(Graph& g, Value x, const std::string& name, const Tensor& filter_ck, int64_t ratio, int64_t pad,
                 int64_t pad_left, int64_t pad_right) {
  const int64_t c = x.dim(1);
  const int64_t before[] = {0, 0, pad}, after[] = {0, 0, pad};
  x = ops::pad(x, before, after, PadMode::Replicate);
  ConvAttrs a;
  a.spatial = 1;
  a.stride = {ratio, 1, 1};
  a.groups = c;
  x = ops::scale(ops::conv_transpose1d(x, g.constant(name, filter_ck), std::nullopt, a), static_cast<float>(ratio));
  return ops::slice(x, 2, pad_left, x.dim(2) - pad_right);
}

Value generator_resblock(const ResBlock& r, Value x, bool amp) {
  for (size_t i = 0; i < r.convs1.size(); ++i) {
    Value xt = amp ? r.acts1[i](x) : ops::leaky_relu(x, kResblockSlope);
    xt = r.convs1[i](xt);
    xt = amp ? r.acts2[i](xt) : ops::leaky_relu(xt, kResblockSlope);
    xt = r.convs2[i](xt);
    x = ops::add(xt, x);
  }
  return x;
}

}  // namespace

GeneratorConfig GeneratorConfig::from_json(const Json& cfg) {
  return read_json_fields("vocoder", "the vocoder config", [&] {
    GeneratorConfig c;
    c.resblock_kernel_sizes = cfg.value("resblock_kernel_sizes", c.resblock_kernel_sizes);
    c.upsample_rates = cfg.value("upsample_rates", c.upsample_rates);
    c.upsample_kernel_sizes = cfg.value("upsample_kernel_sizes", c.upsample_kernel_sizes);
    c.resblock_dilation_sizes = cfg.value("resblock_dilation_sizes", c.resblock_dilation_sizes);
    c.upsample_initial_channel = cfg.value("upsample_initial_channel", c.upsample_initial_channel);
    const std::string resblock = cfg.value("resblock", std::string("1"));
    LTX_CHECK(resblock == "1" || resblock == "AMP1", "vocoder", "resblock \"", resblock, "\" is not supported");
    c.amp = resblock == "AMP1";
    const std::string act = cfg.value("activation", std::string("snake"));
    c.snake_beta = act == "snakebeta";
    // vocoder.py: act_post is always SnakeBeta in AMP mode; the resblocks follow `activation`.
    LTX_CHECK(!c.amp || c.snake_beta, "vocoder", "AMP1 with activation \"", act, "\" is not supported");
    c.use_tanh_at_final = cfg.value("use_tanh_at_final", true);
    c.use_bias_at_final = cfg.value("use_bias_at_final", true);
    c.output_sampling_rate = cfg.value("output_sampling_rate", int64_t{24000});
    LTX_CHECK(c.upsample_rates.size() == c.upsample_kernel_sizes.size() &&
                  c.resblock_kernel_sizes.size() == c.resblock_dilation_sizes.size(),
              "vocoder", "mismatched rate/kernel/dilation lists");
    return c;
  });
}

Value Activation1d::operator()(Value x) const {
  // Kaiser-sinc ×2 up (kernel 12: pad 5, crop 15 on each side), SnakeBeta, low-pass ×2 down (pad 5 | 6, replicate).
  Graph& g = *x.graph;
  if (fused)
    return ops::anti_alias_snake_beta(x, g.constant(name + ".act.alpha", alpha), g.constant(name + ".act.beta", beta),
                                      g.constant(name + ".upsample.filter", up_filter),
                                      g.constant(name + ".downsample.lowpass.filter", down_filter), true);
  const int64_t c = x.dim(1);
  x = upsample1d(g, x, name + ".upsample.filter", depthwise(up_filter, c), 2, 5, 15, 15);
  x = ops::snake_beta(x, g.constant(name + ".act.alpha", alpha), g.constant(name + ".act.beta", beta), true);
  ConvAttrs a;
  a.spatial = 1;
  a.stride = {2, 1, 1};
  a.groups = c;
  a.pad_before = {5, 0, 0};
  a.pad_after = {6, 0, 0};
  a.pad_mode = {PadMode::Replicate, PadMode::Zeros, PadMode::Zeros};
  return ops::conv(x, g.constant(name + ".downsample.lowpass.filter", depthwise(down_filter, c)), std::nullopt, a);
}

Generator Generator::load(const WeightLoader& l, const GeneratorConfig& config, DType compute) {
  Generator gen;
  gen.config = config;
  const int64_t c0 = config.upsample_initial_channel;
  // 128 = 2 stereo channels × 64 mel bins and 2 output channels are fixed by the reference (vocoder.py).
  gen.conv_pre = load_conv1d(l, "conv_pre", 128, c0, 7, 1, 3, compute);
  for (size_t i = 0; i < config.upsample_rates.size(); ++i) {
    const int64_t in = c0 >> i, out = c0 >> (i + 1), k = config.upsample_kernel_sizes[i];
    const int64_t s = config.upsample_rates[i];
    const WeightLoader u = l.scope("ups").scope(static_cast<int64_t>(i));
    Conv up;
    up.name = u.prefix().substr(0, u.prefix().size() - 1);
    up.weight = nn::prepare_matrix(u.get("weight", {in, out, k}), compute);
    up.bias = nn::prepare_vector(u.get("bias", {out}));
    up.attrs.spatial = 1;
    up.attrs.stride = {s, 1, 1};
    up.attrs.pad_before = {(k - s) / 2, 0, 0};
    gen.ups.push_back(up);
    for (size_t j = 0; j < config.resblock_kernel_sizes.size(); ++j) {
      const WeightLoader rb =
          l.scope("resblocks").scope(static_cast<int64_t>(i * config.resblock_kernel_sizes.size() + j));
      const int64_t rk = config.resblock_kernel_sizes[j];
      const auto& dil = config.resblock_dilation_sizes[j];
      LTX_CHECK(dil.size() == 3, "vocoder", "ResBlock1/AMPBlock1 take 3 dilations");
      ResBlock r;
      for (size_t n = 0; n < 3; ++n) {
        r.convs1.push_back(
            load_conv1d(rb.scope("convs1"), std::to_string(n), out, out, rk, dil[n], get_padding(rk, dil[n]), compute));
        r.convs2.push_back(
            load_conv1d(rb.scope("convs2"), std::to_string(n), out, out, rk, 1, get_padding(rk, 1), compute));
        if (config.amp) {
          r.acts1.push_back(load_act(rb.scope("acts1").scope(static_cast<int64_t>(n)), out, compute));
          r.acts2.push_back(load_act(rb.scope("acts2").scope(static_cast<int64_t>(n)), out, compute));
        }
      }
      gen.resblocks.push_back(std::move(r));
    }
  }
  const int64_t final_ch = c0 >> config.upsample_rates.size();
  if (config.amp) gen.act_post = load_act(l.scope("act_post"), final_ch, compute);
  gen.conv_post = load_conv1d(l, "conv_post", final_ch, 2, 7, 1, 3, compute, config.use_bias_at_final);
  return gen;
}

Value Generator::forward(Value mel, Taps* taps) const {
  // vocoder.py Vocoder.forward.
  LTX_CHECK(mel.rank() == 4 && mel.dim(1) == 2 && mel.dim(3) == 64, "vocoder", "expects mel [B, 2, T, 64], got ",
            mel.shape().str());
  const int64_t b = mel.dim(0), t = mel.dim(2);
  Value x = ops::reshape(ops::permute(mel, {0, 1, 3, 2}), {b, 128, t});  // channel = stereo · 64 + mel bin
  x = tap(taps, prefix + "conv_pre.out", conv_pre(x));
  const size_t nk = config.resblock_kernel_sizes.size();
  for (size_t i = 0; i < ups.size(); ++i) {
    if (!config.amp) x = ops::leaky_relu(x, kResblockSlope);
    const Conv& u = ups[i];
    Graph& g = *x.graph;
    x = tap(taps, prefix + "ups." + std::to_string(i) + ".out",
            ops::conv_transpose1d(x, g.constant(u.name + ".weight", u.weight), g.constant(u.name + ".bias", u.bias),
                                  u.attrs));
    // The resblocks of a stage all read x; their outputs are averaged (torch.stack(...).mean(0)). Summed in stack
    // order from the first and divided by the count: the reduction's own arithmetic (reduce_ref.cpp: 0 + y0 + y1 +
    // ..., then / n), so the same bits, in one fused pass without the stacked copy.
    Value sum;
    for (size_t j = 0; j < nk; ++j) {
      const size_t idx = i * nk + j;
      const Value y = tap(taps, prefix + "resblocks." + std::to_string(idx) + ".out",
                          generator_resblock(resblocks[idx], x, config.amp));
      sum = j == 0 ? y : ops::add(sum, y);
    }
    x = ops::div(
        sum, g.constant(prefix + "resblocks.count", Tensor::from_floats(DType::F32, {1}, {static_cast<float>(nk)})));
  }
  x = tap(taps, prefix + "act_post.out", act_post ? (*act_post)(x) : ops::leaky_relu(x, kActPostSlope));
  x = tap(taps, prefix + "conv_post.out", conv_post(x));
  if (config.apply_final_activation) x = config.use_tanh_at_final ? ops::tanh(x) : ops::clamp(x, -1.0f, 1.0f);
  return x;
}

std::vector<float> hann_sinc_filter(int64_t ratio) {
  // vocoder.py UpSample1d(window_type="hann"), in torch's f32 operation order.
  constexpr double kRolloff = 0.99;
  constexpr int kLowpassWidth = 6;
  const int64_t width = static_cast<int64_t>(std::ceil(kLowpassWidth / kRolloff));
  const int64_t k = 2 * width * ratio + 1;
  std::vector<float> f(static_cast<size_t>(k));
  const float pi = std::numbers::pi_v<float>;
  for (int64_t i = 0; i < k; ++i) {
    const float t =
        (static_cast<float>(i) / static_cast<float>(ratio) - static_cast<float>(width)) * static_cast<float>(kRolloff);
    const float tc = std::clamp(t, -static_cast<float>(kLowpassWidth), static_cast<float>(kLowpassWidth));
    const float c = std::cos(tc * pi / static_cast<float>(kLowpassWidth) / 2.0f);
    const float window = c * c;
    const float sinc = t == 0.0f ? 1.0f : std::sin(pi * t) / (pi * t);
    f[static_cast<size_t>(i)] = sinc * window * static_cast<float>(kRolloff) / static_cast<float>(ratio);
  }
  return f;
}

}  // namespace ltx::vocoder

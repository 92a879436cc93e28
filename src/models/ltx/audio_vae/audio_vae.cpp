#include "models/ltx/audio_vae/audio_vae.h"

#include "core/error.h"
#include "nn/layers.h"

namespace ltx::audio_vae {
namespace {

using video_vae::Conv;
using video_vae::tap;
using video_vae::Taps;

constexpr float kPixelNormEps = 1e-6f;    // common/normalization.py build_normalization_layer(PIXEL)
constexpr int64_t kLatentDownsample = 4;  // audio_vae.py LATENT_DOWNSAMPLE_FACTOR

// causal_conv_2d.py CausalConv2d with causality_axis "height" (time): time padded k-1 in front, frequency k/2
// on both sides, zeros. Key `<name>.conv.weight`.
Conv load_causal(const WeightLoader& l, const std::string& name, int64_t in, int64_t out, int64_t k, DType compute) {
  const int64_t kernel[] = {k, k};
  Conv c = Conv::load(l.scope(name), "conv", in, out, kernel, 0, PadMode::Zeros, compute);
  c.attrs.pad_before = {k - 1, k / 2, 0};
  c.attrs.pad_after = {0, (k - 1) - k / 2, 0};
  return c;
}

ResnetBlock load_resnet(const WeightLoader& l, int64_t in, int64_t out, DType compute) {
  ResnetBlock r;
  r.conv1 = load_causal(l, "conv1", in, out, 3, compute);
  r.conv2 = load_causal(l, "conv2", out, out, 3, compute);
  if (in != out) {
    r.nin_shortcut = load_causal(l, "nin_shortcut", in, out, 1, compute);
    r.has_shortcut = true;
  }
  return r;
}

Value pixel_norm(Value x) { return ops::pixel_norm(x, 1, kPixelNormEps); }

Value resnet(const ResnetBlock& r, Value x) {
  Value h = r.conv1(ops::silu(pixel_norm(x)));
  h = r.conv2(ops::silu(pixel_norm(h)));
  return ops::add(r.has_shortcut ? r.nin_shortcut(x) : x, h);
}

void load_stats(const WeightLoader& root, int64_t n, Tensor& mean, Tensor& std) {
  const WeightLoader s = root.scope("per_channel_statistics");
  mean = nn::prepare_vector(s.get("mean-of-means", {n}));
  std = nn::prepare_vector(s.get("std-of-means", {n}));
}

// The statistics apply in the patchified layout [B, T, (c f)] (patchifiers.py AudioPatchifier), i.e. per (c, f):
// viewed as [1, C, 1, F] over [B, C, T, F].
Value stats_view(Graph& g, const std::string& name, const Tensor& s, Value x) {
  LTX_CHECK(s.dim(0) == x.dim(1) * x.dim(3), "audio_vae", "statistics of ", s.dim(0), " values do not cover ", x.dim(1),
            " channels × ", x.dim(3), " bins");
  return g.constant(name, s.reshape({1, x.dim(1), 1, x.dim(3)}));
}

}  // namespace

AudioVaeConfig AudioVaeConfig::from_metadata(const Json& config) {
  return read_json_fields("audio_vae", "the checkpoint config", [&] {
    // model_configurator.py Audio{Encoder,Decoder}Configurator: defaults where keys are absent.
    const Json av = config.value("audio_vae", Json::object());
    const Json params = av.value("model", Json::object()).value("params", Json::object());
    const Json dd = params.value("ddconfig", Json::object());
    const Json pre = av.value("preprocessing", Json::object());
    const Json stft = pre.value("stft", Json::object());
    const Json mel = pre.value("mel", Json::object());
    AudioVaeConfig c;
    c.ch = dd.value("ch", 128);
    c.ch_mult = dd.value("ch_mult", std::vector<int64_t>{1, 2, 4});
    c.num_res_blocks = dd.value("num_res_blocks", 2);
    c.in_channels = dd.value("in_channels", 2);
    c.out_ch = dd.value("out_ch", 2);
    c.z_channels = dd.value("z_channels", 8);
    c.double_z = dd.value("double_z", true);
    c.sample_rate = params.value("sampling_rate", 16000);
    c.hop_length = stft.value("hop_length", 160);
    c.n_fft = stft.value("filter_length", 1024);
    if (dd.contains("mel_bins") && !dd.at("mel_bins").is_null()) {
      c.mel_bins = dd.at("mel_bins").get<int64_t>();
    } else if (mel.contains("n_mel_channels")) {
      c.mel_bins = mel.at("n_mel_channels").get<int64_t>();
    } else {
      c.mel_bins = av.value("variables", Json::object()).value("mel_bins", int64_t{64});
    }
    LTX_CHECK(dd.value("norm_type", std::string("pixel")) == "pixel", "audio_vae", "only norm_type pixel is supported");
    LTX_CHECK(dd.value("causality_axis", std::string("height")) == "height", "audio_vae",
              "only causality_axis height is supported");
    LTX_CHECK(!dd.value("mid_block_add_attention", true), "audio_vae", "mid-block attention is not supported");
    // Attention is added at resolutions listed in attn_resolutions (downsample.py / upsample.py); none of the
    // published configs list any that occur.
    const int64_t resolution = dd.value("resolution", 256);
    const std::vector<int64_t> attn = dd.value("attn_resolutions", std::vector<int64_t>{8, 16, 32});
    for (size_t level = 0; level < c.ch_mult.size(); ++level)
      for (int64_t r : attn)
        LTX_CHECK(r != (resolution >> level), "audio_vae", "attention at resolution ", r, " is not supported");
    return c;
  });
}

AudioEncoder AudioEncoder::load(const WeightLoader& root, const AudioVaeConfig& config, DType compute) {
  AudioEncoder e;
  e.config = config;
  const WeightLoader enc = root.scope("encoder");
  e.conv_in = load_causal(enc, "conv_in", config.in_channels, config.ch, 3, compute);
  int64_t block_in = config.ch;
  const size_t levels = config.ch_mult.size();
  for (size_t level = 0; level < levels; ++level) {
    const WeightLoader lv = enc.scope("down").scope(static_cast<int64_t>(level));
    // downsample.py build_downsampling_path: level l goes from ch·mult[l-1] (ch at l = 0) to ch·mult[l]
    block_in = level == 0 ? config.ch : config.ch * config.ch_mult[level - 1];
    const int64_t block_out = config.ch * config.ch_mult[level];
    std::vector<ResnetBlock> blocks;
    for (int j = 0; j < config.num_res_blocks; ++j) {
      blocks.push_back(load_resnet(lv.scope("block").scope(j), block_in, block_out, compute));
      block_in = block_out;
    }
    e.down.push_back(std::move(blocks));
    if (level + 1 != levels) {  // plain Conv2d k3 s2, padded by hand in forward (downsample.py Downsample)
      const int64_t k[] = {3, 3};
      Conv d = Conv::load(lv.scope("downsample"), "conv", block_in, block_in, k, 0, PadMode::Zeros, compute);
      d.attrs.stride = {2, 2, 1};
      d.attrs.pad_before = {2, 0, 0};  // causal "height": time 2 in front, frequency 1 at the end
      d.attrs.pad_after = {0, 1, 0};
      e.downsample.push_back(d);
    }
  }
  e.mid_1 = load_resnet(enc.scope("mid").scope("block_1"), block_in, block_in, compute);
  e.mid_2 = load_resnet(enc.scope("mid").scope("block_2"), block_in, block_in, compute);
  e.conv_out =
      load_causal(enc, "conv_out", block_in, config.double_z ? 2 * config.z_channels : config.z_channels, 3, compute);
  load_stats(root, config.ch, e.stats_mean, e.stats_std);
  return e;
}

Value AudioEncoder::forward(Value mel, Taps* taps) const {
  // audio_vae.py AudioEncoder.forward.
  Graph& g = *mel.graph;
  LTX_CHECK(mel.rank() == 4 && mel.dim(1) == config.in_channels, "audio_vae", "encoder expects [B, ",
            config.in_channels, ", T, mels], got ", mel.shape().str());
  Value h = tap(taps, "conv_in.out", conv_in(mel));
  for (size_t level = 0; level < down.size(); ++level) {
    const std::string p = "down." + std::to_string(level);
    for (size_t j = 0; j < down[level].size(); ++j)
      h = tap(taps, p + ".block." + std::to_string(j) + ".out", resnet(down[level][j], h));
    if (level < downsample.size()) h = tap(taps, p + ".downsample.out", downsample[level](h));
  }
  h = tap(taps, "mid.block_1.out", resnet(mid_1, h));
  h = tap(taps, "mid.block_2.out", resnet(mid_2, h));
  h = tap(taps, "norm_out.out", pixel_norm(h));
  h = tap(taps, "conv_out.out", conv_out(ops::silu(h)));
  const Value means = config.double_z ? ops::slice(h, 1, 0, h.dim(1) / 2) : h;  // torch.chunk(2)[0]
  return ops::div(ops::sub(means, stats_view(g, "per_channel_statistics.mean-of-means", stats_mean, means)),
                  stats_view(g, "per_channel_statistics.std-of-means", stats_std, means));
}

AudioDecoder AudioDecoder::load(const WeightLoader& root, const AudioVaeConfig& config, DType compute) {
  AudioDecoder d;
  d.config = config;
  const WeightLoader dec = root.scope("decoder");
  const size_t levels = config.ch_mult.size();
  int64_t block_in = config.ch * config.ch_mult.back();
  d.conv_in = load_causal(dec, "conv_in", config.z_channels, block_in, 3, compute);
  d.mid_1 = load_resnet(dec.scope("mid").scope("block_1"), block_in, block_in, compute);
  d.mid_2 = load_resnet(dec.scope("mid").scope("block_2"), block_in, block_in, compute);
  d.up.resize(levels);
  d.upsample.resize(levels);
  for (size_t l = levels; l-- > 0;) {  // upsample.py build_upsampling_path: from the deepest level up
    const WeightLoader lv = dec.scope("up").scope(static_cast<int64_t>(l));
    const int64_t block_out = config.ch * config.ch_mult[l];
    for (int j = 0; j < config.num_res_blocks + 1; ++j) {
      d.up[l].push_back(load_resnet(lv.scope("block").scope(j), block_in, block_out, compute));
      block_in = block_out;
    }
    if (l != 0) d.upsample[l] = load_causal(lv.scope("upsample"), "conv", block_in, block_in, 3, compute);
  }
  d.conv_out = load_causal(dec, "conv_out", block_in, config.out_ch, 3, compute);
  load_stats(root, config.ch, d.stats_mean, d.stats_std);
  return d;
}

Value AudioDecoder::forward(Value latent, Taps* taps) const {
  // audio_vae.py AudioDecoder.forward.
  Graph& g = *latent.graph;
  LTX_CHECK(latent.rank() == 4 && latent.dim(1) == config.z_channels, "audio_vae", "decoder expects [B, ",
            config.z_channels, ", T, F], got ", latent.shape().str());
  const int64_t target_t = std::max<int64_t>(latent.dim(2) * kLatentDownsample - (kLatentDownsample - 1), 1);
  Value x = ops::add(ops::mul(latent, stats_view(g, "per_channel_statistics.std-of-means", stats_std, latent)),
                     stats_view(g, "per_channel_statistics.mean-of-means", stats_mean, latent));
  x = tap(taps, "conv_in.in.x", x);
  Value h = tap(taps, "conv_in.out", conv_in(x));
  h = tap(taps, "mid.block_1.out", resnet(mid_1, h));
  h = tap(taps, "mid.block_2.out", resnet(mid_2, h));
  for (size_t l = up.size(); l-- > 0;) {
    const std::string p = "up." + std::to_string(l);
    for (size_t j = 0; j < up[l].size(); ++j)
      h = tap(taps, p + ".block." + std::to_string(j) + ".out", resnet(up[l][j], h));
    if (l != 0) {  // upsample.py Upsample: nearest ×2, causal conv, drop the first time row
      h = upsample[l](ops::upsample_nearest(h, 2, {2, 2, 1}));
      h = tap(taps, p + ".upsample.out", ops::slice(h, 2, 1, h.dim(2)));
    }
  }
  h = tap(taps, "norm_out.out", pixel_norm(h));
  h = tap(taps, "conv_out.out", conv_out(ops::silu(h)));
  // _adjust_output_shape: crop, then zero-pad time and frequency up to the target
  const int64_t t = std::min(h.dim(2), target_t), f = std::min(h.dim(3), config.mel_bins);
  h = ops::slice(ops::slice(h, 2, 0, t), 3, 0, f);
  if (t < target_t || f < config.mel_bins) {
    const int64_t before[] = {0, 0, 0, 0};
    const int64_t after[] = {0, 0, target_t - t, config.mel_bins - f};
    h = ops::pad(h, before, after, PadMode::Zeros);
  }
  return h;
}

}  // namespace ltx::audio_vae

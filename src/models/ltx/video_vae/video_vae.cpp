// Video VAE config parsing and weight loading (forward passes: video_vae_forward.cpp).
#include "models/ltx/video_vae/video_vae.h"

#include "core/error.h"
#include "nn/layers.h"

namespace ltx::video_vae {
namespace {

PadMode pad_mode(const std::string& s) {
  if (s == "zeros") return PadMode::Zeros;
  if (s == "reflect") return PadMode::Reflect;
  if (s == "replicate") return PadMode::Replicate;
  fail("video_vae", "unsupported spatial_padding_mode \"" + s + "\"");
}

// One entry of encoder_blocks / decoder_blocks: ["name", n] or ["name", {...}]
// (video_vae.py _make_encoder_block / _make_decoder_block: multipliers default to 2 when encoding, 1 when
// decoding, except res_x_y which defaults to 2 on both sides).
BlockSpec parse_block(const Json& entry, bool decoder) {
  LTX_CHECK(entry.is_array() && entry.size() == 2 && entry[0].is_string(), "video_vae",
            "a block must be [name, params], got ", entry.dump());
  BlockSpec b;
  b.name = entry[0].get<std::string>();
  Json params = entry[1];
  if (params.is_number_integer()) params = Json{{"num_layers", params.get<int>()}};
  LTX_CHECK(params.is_object(), "video_vae", "block ", b.name, ": params must be an int or an object");
  const int default_mult = decoder ? 1 : 2;
  b.multiplier = params.value("multiplier", default_mult);
  b.num_layers = params.value("num_layers", 1);
  b.residual = params.value("residual", false);
  b.inject_noise = params.value("inject_noise", false);
  const std::string& n = b.name;
  auto stride_of = [&](const std::string& base) -> std::array<int64_t, 3> {
    if (base == "compress_time") return {2, 1, 1};
    if (base == "compress_space") return {1, 2, 2};
    return {2, 2, 2};
  };
  if (n == "res_x") {
    b.kind = BlockKind::ResX;
  } else if (n == "res_x_y") {
    b.kind = BlockKind::ResXY;
    b.multiplier = params.value("multiplier", 2);
  } else if (decoder && (n == "compress_time" || n == "compress_space" || n == "compress_all")) {
    b.kind = BlockKind::DepthToSpace;
    b.stride = stride_of(n);
  } else if (!decoder && (n == "compress_time" || n == "compress_space" || n == "compress_all")) {
    b.kind = BlockKind::Compress;
    b.multiplier = 1;
    b.stride = stride_of(n);
  } else if (!decoder && n == "compress_all_x_y") {
    b.kind = BlockKind::Compress;
    b.stride = {2, 2, 2};
  } else if (!decoder && (n == "compress_time_res" || n == "compress_space_res" || n == "compress_all_res")) {
    b.kind = BlockKind::CompressRes;
    b.stride = stride_of(n.substr(0, n.size() - 4));
  } else {
    fail("video_vae", std::string(decoder ? "decoder" : "encoder") + " block \"" + n + "\" is not supported");
  }
  LTX_CHECK(b.multiplier >= 1 && b.num_layers >= 1, "video_vae", "block ", n, ": bad multiplier/num_layers");
  return b;
}

ResnetBlock load_resnet(const WeightLoader& l, const std::string& name, int64_t in, int64_t out, PadMode pad,
                        bool timestep, bool noise, DType compute) {
  const WeightLoader s = l.scope(name);
  ResnetBlock r;
  r.name = s.prefix().substr(0, s.prefix().size() - 1);
  r.in = in;
  r.out = out;
  r.conv1 = CausalConv3d::load(s, "conv1", in, out, pad, compute);
  r.conv2 = CausalConv3d::load(s, "conv2", out, out, pad, compute);
  if (in != out) {
    r.norm3_weight = nn::prepare_vector(s.get("norm3.weight", {in}));
    r.norm3_bias = nn::prepare_vector(s.get("norm3.bias", {in}));
    r.shortcut_weight = nn::prepare_matrix(s.get("conv_shortcut.weight", {out, in, 1, 1, 1}), compute);
    r.shortcut_bias = nn::prepare_vector(s.get("conv_shortcut.bias", {out}));
  }
  if (timestep) r.scale_shift_table = nn::prepare_vector(s.get("scale_shift_table", {4, in}));
  if (noise) {
    r.per_channel_scale1 = nn::prepare_vector(s.get("per_channel_scale1", {in, 1, 1}));
    r.per_channel_scale2 = nn::prepare_vector(s.get("per_channel_scale2", {in, 1, 1}));
  }
  return r;
}

}  // namespace

VideoVaeConfig VideoVaeConfig::from_metadata(const Json& config) {
  return read_json_fields("video_vae", "the checkpoint config", [&] {
    // model_configurator.py: every key falls back to a default when absent.
    const Json vae = config.contains("vae") ? config.at("vae") : Json::object();
    VideoVaeConfig c;
    LTX_CHECK(vae.value("dims", 3) == 3, "video_vae", "only dims 3 is supported");
    c.in_channels = vae.value("in_channels", 3);
    c.out_channels = vae.value("out_channels", 3);
    c.latent_channels = vae.value("latent_channels", 128);
    c.patch_size = vae.value("patch_size", 4);
    c.decoder_base_channels = vae.value("decoder_base_channels", 128);
    c.causal_decoder = vae.value("causal_decoder", false);
    c.timestep_conditioning = vae.value("timestep_conditioning", true);
    const std::string norm = vae.value("norm_layer", "pixel_norm");
    LTX_CHECK(norm == "pixel_norm", "video_vae", "norm_layer \"", norm, "\" is not supported (pixel_norm only)");
    const std::string log_var = vae.value("latent_log_var", "uniform");
    if (log_var == "uniform" || log_var == "constant") {
      c.latent_log_var_extra = 1;
    } else if (log_var == "per_channel") {
      c.latent_log_var_extra = -1;  // resolved to latent_channels below
    } else if (log_var == "none") {
      c.latent_log_var_extra = 0;
    } else {
      fail("video_vae", "latent_log_var \"" + log_var + "\" is not supported");
    }
    if (c.latent_log_var_extra < 0) c.latent_log_var_extra = static_cast<int>(c.latent_channels);
    // Both sides read `spatial_padding_mode`; absent, the encoder pads with zeros and the decoder reflects.
    c.encoder_padding = pad_mode(vae.value("spatial_padding_mode", std::string("zeros")));
    c.decoder_padding = pad_mode(vae.value("spatial_padding_mode", std::string("reflect")));
    for (const Json& e : vae.value("encoder_blocks", Json::array())) c.encoder_blocks.push_back(parse_block(e, false));
    const Json dec = vae.value("decoder_blocks", Json::array());
    for (auto it = dec.rbegin(); it != dec.rend(); ++it) c.decoder_blocks.push_back(parse_block(*it, true));
    return c;
  });
}

LatentStats LatentStats::load(const WeightLoader& vae, int64_t channels) {
  const WeightLoader s = vae.scope("per_channel_statistics");
  // The published files also carry `channel` and `mean-of-stds`, which ltx-core's VAE does not load (the diffusers
  // converter deletes exactly these two: LTX_2_0_VAE_SPECIAL_KEYS_REMAP).
  s.ignore("channel");
  s.ignore("mean-of-stds");
  return {nn::prepare_vector(s.get("mean-of-means", {channels})),
          nn::prepare_vector(s.get("std-of-means", {channels}))};
}

TimeEmbedder TimeEmbedder::load(const WeightLoader& loader, std::string_view name, int64_t dim, DType compute) {
  const WeightLoader s = loader.scope(name);
  return {s.prefix() + "timestep_embedder", nn::TimestepEmbedding::load(s, "timestep_embedder", 256, dim, compute)};
}

VideoEncoder VideoEncoder::load(const WeightLoader& vae, const VideoVaeConfig& config, DType compute) {
  VideoEncoder e;
  e.config = config;
  const WeightLoader enc = vae.scope("encoder");
  const PadMode pad = config.encoder_padding;
  int64_t ch = config.latent_channels;  // video_vae.py VideoEncoder: the first width is the latent width
  const int64_t in = config.in_channels * config.patch_size * config.patch_size;
  e.conv_in = CausalConv3d::load(enc, "conv_in", in, ch, pad, compute);
  const WeightLoader blocks = enc.scope("down_blocks");
  for (size_t i = 0; i < config.encoder_blocks.size(); ++i) {
    const BlockSpec& b = config.encoder_blocks[i];
    const WeightLoader bl = blocks.scope(static_cast<int64_t>(i));
    const std::string idx = std::to_string(i);
    switch (b.kind) {
      case BlockKind::ResX: {
        MidBlock m;
        for (int j = 0; j < b.num_layers; ++j)
          m.res_blocks.push_back(
              load_resnet(bl.scope("res_blocks"), std::to_string(j), ch, ch, pad, false, false, compute));
        e.down_blocks.emplace_back(std::move(m));
        break;
      }
      case BlockKind::ResXY:
        e.down_blocks.emplace_back(load_resnet(blocks, idx, ch, ch * b.multiplier, pad, false, false, compute));
        ch *= b.multiplier;
        break;
      case BlockKind::Compress:
        e.down_blocks.emplace_back(CausalConv3d::load(blocks, idx, ch, ch * b.multiplier, pad, compute, b.stride));
        ch *= b.multiplier;
        break;
      case BlockKind::CompressRes: {
        const int64_t out = ch * b.multiplier;
        const int64_t prod = b.stride[0] * b.stride[1] * b.stride[2];
        LTX_CHECK(out % prod == 0 && (ch * prod) % out == 0, "video_vae", "down_blocks.", i, ": widths ", ch, "->", out,
                  " do not fit stride product ", prod);
        SpaceToDepthDown d;
        d.conv = CausalConv3d::load(bl, "conv", ch, out / prod, pad, compute);
        d.stride = b.stride;
        d.group_size = ch * prod / out;  // sampling.py SpaceToDepthDownsample.group_size
        e.down_blocks.emplace_back(std::move(d));
        ch = out;
        break;
      }
      case BlockKind::DepthToSpace:
        fail("video_vae", "depth-to-space block in the encoder");
    }
  }
  e.conv_out =
      CausalConv3d::load(enc, "conv_out", ch, config.latent_channels + config.latent_log_var_extra, pad, compute);
  e.stats = LatentStats::load(vae, config.latent_channels);
  return e;
}

VideoDecoder VideoDecoder::load(const WeightLoader& vae, const VideoVaeConfig& config, DType compute) {
  VideoDecoder d;
  d.config = config;
  const WeightLoader dec = vae.scope("decoder");
  const PadMode pad = config.decoder_padding;
  const bool tc = config.timestep_conditioning;
  // video_vae.py VideoDecoder: three ×2 width reductions are assumed, so the first width is base × 8.
  int64_t ch = config.decoder_base_channels * 8;
  d.conv_in = CausalConv3d::load(dec, "conv_in", config.latent_channels, ch, pad, compute);
  const WeightLoader blocks = dec.scope("up_blocks");
  for (size_t i = 0; i < config.decoder_blocks.size(); ++i) {
    const BlockSpec& b = config.decoder_blocks[i];
    const WeightLoader bl = blocks.scope(static_cast<int64_t>(i));
    const std::string idx = std::to_string(i);
    switch (b.kind) {
      case BlockKind::ResX: {
        MidBlock m;
        if (tc) m.time_embedder = TimeEmbedder::load(bl, "time_embedder", ch * 4, compute);
        for (int j = 0; j < b.num_layers; ++j)
          m.res_blocks.push_back(
              load_resnet(bl.scope("res_blocks"), std::to_string(j), ch, ch, pad, tc, b.inject_noise, compute));
        d.up_blocks.emplace_back(std::move(m));
        break;
      }
      case BlockKind::ResXY:
        LTX_CHECK(ch % b.multiplier == 0, "video_vae", "up_blocks.", i, ": width ", ch, " / ", b.multiplier);
        d.up_blocks.emplace_back(load_resnet(blocks, idx, ch, ch / b.multiplier, pad, false, b.inject_noise, compute));
        ch /= b.multiplier;
        break;
      case BlockKind::DepthToSpace: {
        const int64_t prod = b.stride[0] * b.stride[1] * b.stride[2];
        LTX_CHECK((prod * ch) % b.multiplier == 0 && ch % b.multiplier == 0, "video_vae", "up_blocks.", i, ": width ",
                  ch, " not divisible by multiplier ", b.multiplier);
        DepthToSpaceUp u;
        u.conv = CausalConv3d::load(bl, "conv", ch, prod * ch / b.multiplier, pad, compute);
        u.stride = b.stride;
        u.residual = b.residual;
        u.reduction = b.multiplier;
        d.up_blocks.emplace_back(std::move(u));
        ch /= b.multiplier;
        break;
      }
      case BlockKind::Compress:
      case BlockKind::CompressRes:
        fail("video_vae", "downsampling block in the decoder");
    }
  }
  d.conv_out = CausalConv3d::load(dec, "conv_out", ch, config.out_channels * config.patch_size * config.patch_size, pad,
                                  compute);
  if (tc) {
    const Tensor m = dec.get("timestep_scale_multiplier", Shape{});
    if (m.defined()) d.timestep_scale_multiplier = m.to_floats().at(0);
    d.last_time_embedder = TimeEmbedder::load(dec, "last_time_embedder", ch * 2, compute);
    d.last_scale_shift_table = nn::prepare_vector(dec.get("last_scale_shift_table", {2, ch}));
  }
  d.stats = LatentStats::load(vae, config.latent_channels);
  return d;
}

}  // namespace ltx::video_vae

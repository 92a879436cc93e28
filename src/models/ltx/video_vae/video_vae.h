// LTX-2 / LTX-2.3 video VAE ("CausalVideoAutoencoder"): encoder (pixels -> normalised latent means) and decoder
// (normalised latent -> pixels), configured from the checkpoint's `config` metadata (`vae` object) and loaded from
// the `vae.` key prefix. Reference: ltx_core/model/video_vae/{video_vae.py, resnet.py, sampling.py,
// convolution.py, ops.py, model_configurator.py}; ../shared/reference/ltx2-spec.md §4.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "graph/builder.h"
#include "io/json.h"
#include "models/ltx/video_vae/video_vae_layers.h"
#include "nn/timestep_embedding.h"
#include "nn/weight_loader.h"

namespace ltx::video_vae {

enum class BlockKind : uint8_t {
  ResX,          // UNetMidBlock3D: n resnet blocks at constant width
  ResXY,         // one resnet block changing the width (1x1x1 shortcut)
  Compress,      // encoder: strided causal conv (compress_time / compress_space / compress_all[_x_y])
  CompressRes,   // encoder: SpaceToDepthDownsample (compress_*_res)
  DepthToSpace,  // decoder: DepthToSpaceUpsample (compress_time / compress_space / compress_all)
};

struct BlockSpec {
  BlockKind kind = BlockKind::ResX;
  std::string name;    // as in the config, e.g. "compress_all_res"
  int num_layers = 1;  // ResX
  int multiplier = 1;  // width factor (encoder: out = in·m; decoder: out = in/m)
  std::array<int64_t, 3> stride{1, 1, 1};
  bool residual = false;      // DepthToSpace (LTX-2.0)
  bool inject_noise = false;  // ResX in the decoder
};

struct VideoVaeConfig {
  int64_t in_channels = 3;  // pixels
  int64_t out_channels = 3;
  int64_t latent_channels = 128;
  int64_t patch_size = 4;
  int64_t decoder_base_channels = 128;
  bool causal_decoder = false;
  bool timestep_conditioning = true;  // ltx-core's default when the key is absent
  int latent_log_var_extra = 1;       // conv_out channels beyond the means: uniform 1, per_channel C, none 0
  PadMode encoder_padding = PadMode::Zeros;
  PadMode decoder_padding = PadMode::Reflect;
  std::vector<BlockSpec> encoder_blocks;  // in execution order
  std::vector<BlockSpec> decoder_blocks;  // in execution order (the config lists them encoder-side; reversed)

  // `config` is the checkpoint's whole config object ({"vae": {...}, ...}).
  static VideoVaeConfig from_metadata(const nlohmann::json& config);
};

// Per-channel statistics of the latent means (`per_channel_statistics.{mean,std}-of-means`, [C]).
struct LatentStats {
  Tensor mean, std;
  static LatentStats load(const WeightLoader& vae_root, int64_t channels);
  Value normalize(Value x) const;     // (x - mean) / std over axis 1 of [B, C, ...]
  Value un_normalize(Value x) const;  // x · std + mean
};

// ResnetBlock3D (resnet.py): h = conv1(SiLU(norm1 x)); h = conv2(SiLU(norm2 h)); x' + h.
struct ResnetBlock {
  std::string name;
  int64_t in = 0, out = 0;
  CausalConv3d conv1, conv2;
  Tensor norm3_weight, norm3_bias;                // GroupNorm(1) when in != out
  Tensor shortcut_weight, shortcut_bias;          // 1x1x1 Conv3d when in != out
  Tensor scale_shift_table;                       // [4, in] with timestep conditioning
  Tensor per_channel_scale1, per_channel_scale2;  // [in, 1, 1] with noise injection
};

// The decoder's per-block timestep embedder (PixArtAlphaCombinedTimestepSizeEmbeddings without size embedding):
// the shared sinusoid (256, cos first) and MLP of nn/timestep_embedding.h.
struct TimeEmbedder {
  std::string name;
  nn::TimestepEmbedding mlp;
  static TimeEmbedder load(const WeightLoader& loader, std::string_view name, int64_t dim, DType compute);
  Value operator()(Graph& g, float scaled_timestep, int64_t batch) const;  // -> [B, dim]
};

struct MidBlock {
  std::vector<ResnetBlock> res_blocks;
  std::optional<TimeEmbedder> time_embedder;
};

struct SpaceToDepthDown {
  CausalConv3d conv;
  std::array<int64_t, 3> stride{1, 1, 1};
  int64_t group_size = 1;
};

struct DepthToSpaceUp {
  CausalConv3d conv;
  std::array<int64_t, 3> stride{1, 1, 1};
  bool residual = false;
  int64_t reduction = 1;
};

using Block = std::variant<MidBlock, ResnetBlock, CausalConv3d, SpaceToDepthDown, DepthToSpaceUp>;

// Noise the timestep-conditioned decoder mixes in (ltx-core draws it from a torch.Generator; here it is given):
// `latent` [B, C, F, H, W] and, per res block with inject_noise, `<block path>.noise{1,2}` [H, W].
struct DecoderNoise {
  std::optional<Value> latent;
  std::map<std::string, Value> spatial;
};

struct VideoEncoder {
  VideoVaeConfig config;
  CausalConv3d conv_in, conv_out;
  std::vector<Block> down_blocks;
  LatentStats stats;

  // `vae` is the loader scoped at the `vae.` prefix; encoder weights live under `encoder.`.
  static VideoEncoder load(const WeightLoader& vae, const VideoVaeConfig& config, DType compute = DType::F32);
  // video [B, 3, F, H, W] in [-1, 1] with (F-1) % 8 == 0 (crop_frames() first) -> [B, C, (F-1)/8+1, H/32, W/32].
  Value forward(Value video, Taps* taps = nullptr) const;
  // Frames the official encoder drops from the end so that (F-1) % 8 == 0.
  static int64_t frames_to_crop(int64_t frames) { return (frames - 1) % 8; }
};

struct VideoDecoder {
  VideoVaeConfig config;
  CausalConv3d conv_in, conv_out;
  std::vector<Block> up_blocks;
  LatentStats stats;
  // timestep conditioning
  float timestep_scale_multiplier = 1000.0f;
  std::optional<TimeEmbedder> last_time_embedder;
  Tensor last_scale_shift_table;      // [2, C]
  float decode_noise_scale = 0.025f;  // video_vae.py VideoDecoder.__init__
  float decode_timestep = 0.05f;

  static VideoDecoder load(const WeightLoader& vae, const VideoVaeConfig& config, DType compute = DType::F32);
  // latent [B, C, F', H', W'] (normalised) -> video [B, 3, 8(F'-1)+1, 32H', 32W'] in about [-1, 1].
  Value forward(Value latent, const DecoderNoise& noise = {}, Taps* taps = nullptr) const;
  // Names and shapes of the noise inputs forward() needs for this latent shape (empty without conditioning).
  std::vector<std::pair<std::string, Shape>> noise_inputs(const Shape& latent) const;
};

// Pixel (un)patchify with patch p: [B, C, F, H·p, W·p] <-> [B, C·p·p, F, H, W], channel c·p² + r·p + q where r is
// the width offset and q the height offset (ops.py: "b c (f p) (h q) (w r) -> b (c p r q) f h w").
Value patchify(Value x, int64_t p);
Value unpatchify(Value x, int64_t p);

}  // namespace ltx::video_vae

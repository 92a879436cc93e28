// Vocoders: mel [B, 2, T, 64] -> stereo waveform. LTX-2: HiFi-GAN (ResBlock1, 24 kHz). LTX-2.3: BigVGAN-v2
// (AMPBlock1 with anti-aliased SnakeBeta) at 16 kHz plus bandwidth extension to 48 kHz. Configured from
// `config.vocoder` (flat for HiFi-GAN; {"vocoder", "bwe"} for the BWE variant), keys under `vocoder.`.
// Reference: ltx_core/model/audio_vae/{vocoder.py, resnet.py, model_configurator.py}; ltx2-spec.md §5.2.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "io/json.h"
#include "models/ltx/video_vae/video_vae_layers.h"

namespace ltx {
class Backend;  // backend/backend.h: what a graph runs on
}  // namespace ltx

namespace ltx::vocoder {

struct GeneratorConfig {
  std::vector<int64_t> resblock_kernel_sizes{3, 7, 11};
  std::vector<int64_t> upsample_rates{6, 5, 2, 2, 2};
  std::vector<int64_t> upsample_kernel_sizes{16, 15, 8, 4, 4};
  std::vector<std::vector<int64_t>> resblock_dilation_sizes{{1, 3, 5}, {1, 3, 5}, {1, 3, 5}};
  int64_t upsample_initial_channel = 1024;
  bool amp = false;  // resblock "AMP1" (BigVGAN) vs "1" (HiFi-GAN)
  bool snake_beta = false;
  bool use_tanh_at_final = true;
  bool apply_final_activation = true;
  bool use_bias_at_final = true;
  int64_t output_sampling_rate = 24000;
  static GeneratorConfig from_json(const Json& cfg);  // model_configurator.py _vocoder_from_config
};

// vocoder.py Activation1d: ×2 Kaiser-sinc upsample (replicate pad), Snake/SnakeBeta, low-pass ×2 downsample.
// Production precision (bf16 compute) runs it as one AntiAliasSnakeBeta op (f32 throughout, FMA sums, a
// polynomial sin); validation keeps the reference's op-by-op graph.
struct Activation1d {
  std::string name;
  Tensor alpha, beta;               // [C], log-scale
  Tensor up_filter, down_filter;    // [1, 1, 12] as stored
  bool fused = false;               // one AntiAliasSnakeBeta op
  Value operator()(Value x) const;  // [B, C, L] -> [B, C, L]
};

struct ResBlock {  // ResBlock1 (HiFi-GAN) or AMPBlock1 (BigVGAN)
  std::vector<video_vae::Conv> convs1, convs2;
  std::vector<Activation1d> acts1, acts2;  // AMP only
};

struct Generator {
  GeneratorConfig config;
  std::string prefix;  // tap prefix, e.g. "vocoder." inside the BWE wrapper
  video_vae::Conv conv_pre, conv_post;
  std::vector<video_vae::Conv> ups;  // ConvTranspose1d weights [C, O, K]
  std::vector<ResBlock> resblocks;
  std::optional<Activation1d> act_post;  // AMP only; HiFi-GAN uses LeakyReLU(0.01)

  static Generator load(const WeightLoader& l, const GeneratorConfig& config, DType compute);
  // mel [B, 2, T, M] -> waveform [B, 2, T·∏rates]
  Value forward(Value mel, video_vae::Taps* taps = nullptr) const;
};

struct BweConfig {
  int64_t input_sampling_rate = 16000, output_sampling_rate = 48000, hop_length = 80, n_fft = 512, num_mels = 64;
};

// VocoderWithBWE: x16 = vocoder(mel); mel' = log-mel of x16 (causal STFT with the stored bases);
// out = clamp(bwe_generator(mel') + hann_resample_x3(x16), -1, 1)[..., :3·N].
struct VocoderWithBwe {
  Generator vocoder, bwe_generator;
  BweConfig config;
  std::vector<float> forward_basis_t;  // the stored [2F, 1, n_fft] transposed: [n_fft, 2F] (real rows, then imaginary)
  std::vector<float> mel_basis;        // [M, F]
};

struct Vocoder {
  std::optional<Generator> hifigan;
  std::optional<VocoderWithBwe> bwe;
  static Vocoder load(const WeightLoader& vocoder_root, const Json& checkpoint_config, DType compute = DType::F32);
  // mel [B, 2, T, M] -> waveform; runs its own plans (the BWE's STFT/log-mel stage runs on the host between them).
  // `intermediates` (optional) receives the golden-named intermediates.
  Tensor run(const Backend& backend, const Tensor& mel, std::map<std::string, Tensor>* intermediates = nullptr) const;
  int64_t output_sampling_rate() const;
};

// UpSample1d(window "hann") filter: the torchaudio-resample-equivalent Hann-windowed sinc the checkpoint does not
// store; kernel 2·ceil(6/0.99)·ratio + 1 taps.
std::vector<float> hann_sinc_filter(int64_t ratio);

}  // namespace ltx::vocoder

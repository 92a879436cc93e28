// The embedded default model's `config` metadata, in the official checkpoint's layout: the tiny LTX-2.3-shaped
// configuration of the one-stage pipeline golden case (tools/reference/make_goldens.py, t2v_audio_one_stage): a
// 2-layer audio-video DiT (video 2x16, audio 2x8 heads), the V2 caption projection and 2-layer embeddings
// connectors, a video VAE with 2 base channels (x32 space, x8 time), a 16-channel audio VAE and a BigVGAN + BWE
// vocoder to 48 kHz stereo.
#include "stages/default_model.h"

namespace ltx::stages {

const char* default_model_config_json() {
  return R"json({
  "audio_vae": {
    "model": {
      "params": {
        "ddconfig": {
          "attn_resolutions": [],
          "causality_axis": "height",
          "ch": 16,
          "ch_mult": [1, 1, 1],
          "double_z": true,
          "downsample_time": false,
          "dropout": 0.0,
          "in_channels": 2,
          "mel_bins": 64,
          "mid_block_add_attention": false,
          "norm_type": "pixel",
          "num_res_blocks": 1,
          "out_ch": 2,
          "resolution": 256,
          "z_channels": 1
        },
        "sampling_rate": 16000
      }
    },
    "preprocessing": {
      "mel": {
        "mel_fmax": 8000,
        "mel_fmin": 0,
        "n_mel_channels": 64
      },
      "stft": {
        "causal": true,
        "filter_length": 1024,
        "hop_length": 160,
        "win_length": 1024
      }
    }
  },
  "transformer": {
    "activation_fn": "gelu-approximate",
    "apply_gated_attention": true,
    "attention_bias": true,
    "attention_head_dim": 16,
    "attention_type": "default",
    "audio_attention_head_dim": 8,
    "audio_connector_attention_head_dim": 8,
    "audio_connector_num_attention_heads": 2,
    "audio_connector_num_layers": 2,
    "audio_cross_attention_dim": 16,
    "audio_in_channels": 16,
    "audio_num_attention_heads": 2,
    "audio_out_channels": 16,
    "audio_positional_embedding_max_pos": [20],
    "av_ca_timestep_scale_multiplier": 1000,
    "av_cross_ada_norm": true,
    "caption_proj_before_connector": true,
    "caption_proj_input_norm": false,
    "caption_projection_first_linear": false,
    "caption_projection_second_linear": false,
    "connector_apply_gated_attention": true,
    "connector_attention_head_dim": 16,
    "connector_num_attention_heads": 2,
    "connector_num_layers": 2,
    "connector_positional_embedding_max_pos": [4096],
    "cross_attention_adaln": true,
    "cross_attention_dim": 32,
    "cross_attention_norm": true,
    "double_self_attention": false,
    "dropout": 0.0,
    "frequencies_precision": "float64",
    "in_channels": 8,
    "norm_elementwise_affine": false,
    "norm_eps": 1e-06,
    "num_attention_heads": 2,
    "num_embeds_ada_norm": 1000,
    "num_layers": 2,
    "num_vector_embeds": null,
    "only_cross_attention": false,
    "out_channels": 8,
    "positional_embedding_max_pos": [20, 2048, 2048],
    "positional_embedding_theta": 10000.0,
    "positional_embedding_type": "rope",
    "qk_norm": "rms_norm",
    "rope_type": "split",
    "share_ff": false,
    "standardization_norm": "rms_norm",
    "timestep_scale_multiplier": 1000,
    "upcast_attention": false,
    "use_audio_video_cross_attention": true,
    "use_linear_projection": false,
    "use_middle_indices_grid": true
  },
  "vae": {
    "_class_name": "CausalVideoAutoencoder",
    "causal_decoder": false,
    "decoder_base_channels": 2,
    "decoder_blocks": [["res_x", {"num_layers": 1}], ["compress_space", {"multiplier": 2}], ["res_x", {"num_layers": 2}], ["compress_time", {"multiplier": 2}], ["res_x", {"num_layers": 1}], ["compress_all", {"multiplier": 1}], ["res_x", {"num_layers": 1}], ["compress_all", {"multiplier": 2}], ["res_x", {"num_layers": 1}]],
    "dims": 3,
    "encoder_blocks": [["res_x", {"num_layers": 1}], ["compress_space_res", {"multiplier": 2}], ["res_x", {"num_layers": 1}], ["compress_time_res", {"multiplier": 2}], ["res_x", {"num_layers": 1}], ["compress_all_res", {"multiplier": 2}], ["res_x", {"num_layers": 1}], ["compress_all_res", {"multiplier": 1}], ["res_x", {"num_layers": 1}]],
    "in_channels": 3,
    "latent_channels": 8,
    "latent_log_var": "uniform",
    "norm_layer": "pixel_norm",
    "out_channels": 3,
    "patch_size": 4,
    "spatial_padding_mode": "zeros",
    "timestep_conditioning": false
  },
  "vocoder": {
    "bwe": {
      "activation": "snakebeta",
      "hop_length": 80,
      "input_sampling_rate": 16000,
      "n_fft": 128,
      "num_mels": 64,
      "output_sampling_rate": 48000,
      "resblock": "AMP1",
      "resblock_dilation_sizes": [[1, 3, 5], [1, 3, 5], [1, 3, 5]],
      "resblock_kernel_sizes": [3, 7, 11],
      "stereo": true,
      "upsample_initial_channel": 32,
      "upsample_kernel_sizes": [12, 11, 4, 4, 4],
      "upsample_rates": [6, 5, 2, 2, 2],
      "use_bias_at_final": false,
      "use_tanh_at_final": false
    },
    "vocoder": {
      "activation": "snakebeta",
      "output_sampling_rate": 16000,
      "resblock": "AMP1",
      "resblock_dilation_sizes": [[1, 3, 5], [1, 3, 5], [1, 3, 5]],
      "resblock_kernel_sizes": [3, 7, 11],
      "stereo": true,
      "upsample_initial_channel": 16,
      "upsample_kernel_sizes": [11, 8, 8, 4],
      "upsample_rates": [5, 4, 4, 2],
      "use_bias_at_final": false,
      "use_tanh_at_final": false
    }
  }
})json";
}

}  // namespace ltx::stages

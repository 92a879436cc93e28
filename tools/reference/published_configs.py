"""Pieces of the published LTX `config` metadata that several reference scripts build configs from, written once.

TRANSFORMER_CHECKED: the keys ltx-core's LTXModelConfigurator checks for exact values
(ltx_core/model/transformer/model_configurator.py): any config, tiny or full size, must carry them as here.
LTX23_VOCODER: the LTX-2.3 vocoder, BigVGAN-v2 + bandwidth extension, nested {"vocoder", "bwe"} (ltx2-spec §5.2;
diffusers "2.3": hidden 1536 / bwe 512, factors [5,2,2,2,2,2] / [6,5,2,2,2], filter_length 512, hop 80, 64 mels,
16 -> 48 kHz).
"""

TRANSFORMER_CHECKED = {
    "dropout": 0.0,
    "attention_bias": True,
    "num_vector_embeds": None,
    "activation_fn": "gelu-approximate",
    "num_embeds_ada_norm": 1000,
    "use_linear_projection": False,
    "only_cross_attention": False,
    "cross_attention_norm": True,
    "double_self_attention": False,
    "upcast_attention": False,
    "standardization_norm": "rms_norm",
    "norm_elementwise_affine": False,
    "qk_norm": "rms_norm",
    "positional_embedding_type": "rope",
    "use_audio_video_cross_attention": True,
    "share_ff": False,
    "av_cross_ada_norm": True,
    "use_middle_indices_grid": True,
}

_AMP = {
    "resblock": "AMP1",
    "activation": "snakebeta",
    "stereo": True,
    "resblock_kernel_sizes": [3, 7, 11],
    "resblock_dilation_sizes": [[1, 3, 5], [1, 3, 5], [1, 3, 5]],
    "use_tanh_at_final": False,
    "use_bias_at_final": False,
}

LTX23_VOCODER = {
    "vocoder": {
        **_AMP,
        "upsample_initial_channel": 1536,
        "upsample_rates": [5, 2, 2, 2, 2, 2],
        "upsample_kernel_sizes": [11, 4, 4, 4, 4, 4],
        "output_sampling_rate": 16000,
    },
    "bwe": {
        **_AMP,
        "upsample_initial_channel": 512,
        "upsample_rates": [6, 5, 2, 2, 2],
        "upsample_kernel_sizes": [12, 11, 4, 4, 4],
        "input_sampling_rate": 16000,
        "output_sampling_rate": 48000,
        "n_fft": 512,
        "hop_length": 80,
        "num_mels": 64,
    },
}

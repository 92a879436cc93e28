"""Tiny checkpoint configs with the structure of the real LTX-2 / LTX-2.3 `config` metadata.

The text cases and the DiT cases share these, so a tiny Gemma -> feature extractor -> connectors -> DiT chain is
dimensionally consistent, as in a real checkpoint. Widths: Gemma hidden 32 (3 layers -> 4 hidden states), video
stream 2 heads x 16 = 32, audio stream 2 heads x 8 = 16.

Deliberate differences between the two styles, beyond the architectural ones, so that both code paths of the
configurators are exercised:
- the 2.0 style omits `av_ca_timestep_scale_multiplier` (ltx-core falls back to 1: the A<->V gate timestep is
  sigma*1 instead of sigma*1000); the 2.3 style sets it to 1000.
- `LEGACY_VIDEO_ONLY` uses the ltx-core fallbacks for `rope_type` (interleaved) and `frequencies_precision`
  (float32 frequency grid).
"""

from __future__ import annotations

import copy

from published_configs import TRANSFORMER_CHECKED

GEMMA_HIDDEN = 32
GEMMA_LAYERS = 3
GEMMA_HIDDEN_STATES = GEMMA_LAYERS + 1

# Keys LTXModelConfigurator checks for exact values (model_configurator.py), plus the shared dimensions.
_COMMON = {
    **TRANSFORMER_CHECKED,
    "num_attention_heads": 2,
    "attention_head_dim": 16,
    "in_channels": 8,
    "out_channels": 8,
    "num_layers": 2,
    "cross_attention_dim": 32,
    "norm_eps": 1e-06,
    "attention_type": "default",
    "positional_embedding_theta": 10000.0,
    "positional_embedding_max_pos": [20, 2048, 2048],
    "timestep_scale_multiplier": 1000,
    "audio_num_attention_heads": 2,
    "audio_attention_head_dim": 8,
    "audio_in_channels": 8,
    "audio_out_channels": 8,
    "audio_cross_attention_dim": 16,
    "audio_positional_embedding_max_pos": [20],
    "rope_type": "split",
    "frequencies_precision": "float64",
    "connector_num_attention_heads": 2,
    "connector_attention_head_dim": 16,
    "connector_num_layers": 2,
    "connector_positional_embedding_max_pos": [4096],
}

# LTX-2.0 (19B) structure: caption projection inside the DiT (caption_channels = Gemma hidden), connectors as wide
# as Gemma's hidden size, no gated attention, no cross-attention AdaLN.
LTX2_TRANSFORMER = {
    **_COMMON,
    "caption_channels": GEMMA_HIDDEN,
    "apply_gated_attention": False,
    "cross_attention_adaln": False,
}

# LTX-2.3 (22B) structure: the V2 feature extractor projects to the stream widths before the connectors, gated
# attention everywhere, cross-attention AdaLN, separate audio connector dimensions.
LTX23_TRANSFORMER = {
    **_COMMON,
    "caption_proj_before_connector": True,
    "caption_projection_first_linear": False,
    "caption_proj_input_norm": False,
    "caption_projection_second_linear": False,
    "apply_gated_attention": True,
    "cross_attention_adaln": True,
    "connector_apply_gated_attention": True,
    "audio_connector_num_attention_heads": 2,
    "audio_connector_attention_head_dim": 8,
    "audio_connector_num_layers": 2,
    "av_ca_timestep_scale_multiplier": 1000,
}

LEGACY_VIDEO_ONLY_TRANSFORMER = {k: v for k, v in LTX2_TRANSFORMER.items() if k not in ("rope_type", "frequencies_precision")}


def checkpoint_config(style: str) -> dict:
    """The `config` metadata dict ({"transformer": {...}}) for "ltx2", "ltx23" or "legacy_video_only"."""
    table = {"ltx2": LTX2_TRANSFORMER, "ltx23": LTX23_TRANSFORMER, "legacy_video_only": LEGACY_VIDEO_ONLY_TRANSFORMER}
    return {"transformer": copy.deepcopy(table[style])}


# Hugging Face config.json of a tiny Gemma-3 (Gemma3ForConditionalGeneration layout, text_config in the legacy
# key style the published google/gemma-3-12b-it checkpoint uses: rope_theta, rope_local_base_freq, rope_scaling,
# sliding_window_pattern). Layer 1 is global (pattern 2), layers 0 and 2 slide with a window of 4 tokens, so the
# sliding mask matters on a 10-token sequence.
GEMMA_TEXT_CONFIG = {
    "model_type": "gemma3_text",
    "vocab_size": 64,
    "hidden_size": GEMMA_HIDDEN,
    "intermediate_size": 64,
    "num_hidden_layers": GEMMA_LAYERS,
    "num_attention_heads": 2,
    "num_key_value_heads": 1,
    "head_dim": 16,
    "query_pre_attn_scalar": 16,
    "hidden_activation": "gelu_pytorch_tanh",
    "rms_norm_eps": 1e-06,
    "rope_theta": 1000000.0,
    "rope_local_base_freq": 10000.0,
    "rope_scaling": {"factor": 8.0, "rope_type": "linear"},
    "sliding_window": 4,
    "sliding_window_pattern": 2,
    "max_position_embeddings": 131072,
    "attention_bias": False,
    "attention_dropout": 0.0,
    "attn_logit_softcapping": None,
    "final_logit_softcapping": None,
    "pad_token_id": 0,
    "bos_token_id": 2,
    "eos_token_id": 1,
    "tie_word_embeddings": True,
}

GEMMA_HF_CONFIG = {
    "architectures": ["Gemma3ForConditionalGeneration"],
    "model_type": "gemma3",
    "text_config": GEMMA_TEXT_CONFIG,
    "torch_dtype": "float32",
}

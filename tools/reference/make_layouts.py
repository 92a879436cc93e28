"""Golden layout files (src/synth/layouts/<name>.json): every tensor name, shape and dtype of the published
checkpoints, taken from the reference itself without loading or downloading any weights.

How: each official module is built at its full published config on torch's meta device with the official
configurator (ltx-core 1.0.0 `XConfigurator.from_config`, exactly what `SingleGPUModelBuilder.meta_model` does;
transformers' `Gemma3ForConditionalGeneration` for Gemma), and each state-dict key is turned into the key the
published file stores by inverting the official key map (the SDOps that ltx-pipelines' `ModelLedger` hands to each
builder, ltx_pipelines/utils/model_ledger.py). Every inverted key is checked by running the forward map on it again,
so a key is only written when ltx-core would load it back into the same parameter.

Why this is exact for the key set: `SingleGPUModelBuilder.build` (ltx_core/loader/single_gpu_model_builder.py) creates
the model on meta and loads with `load_state_dict(strict=False, assign=True)`; a parameter or buffer the file lacks
stays on meta (`_return_model` warns and hands back the unusable meta model). So every persistent parameter/buffer
of the module must be in the file under the key derived here. A file may hold extra keys ltx-core ignores; the ones
reported by others are listed separately under "extra_tensors" with their source (not derivable from the reference).

The distilled LoRA is the exception: its target list is an assumption (see LORA_RANK below).

Dtypes (file_dtype): published single files are bf16 (../shared/reference/released-files.md: "bf16 (~44-46 GB for
22B)"; ltx_core/model/audio_vae/vocoder.py MelSTFT: "the checkpoint's exact bfloat16 filterbank") except the DiT's
AdaLN tables, every `model.diffusion_model.` tensor whose name contains `scale_shift_table`, which are F32: stated for
Lightricks/LTX-2.3, its Diffusers copy and the fp8 variants in diffusers PR #13918 ("store the AdaLN
`scale_shift_table` parameters in fp32 alongside bf16 weights ... 290 fp32 tensors next to 3,896 bf16 ones"), and
what the published files' sizes need: the 2.3 files are 46,149,344,974-46,149,345,334 bytes, which the layout meets
within ~24 KB (the `config` metadata) with those tables F32 and misses by 9.5 MB with them BF16. The LTX-2 19B file
(43,333,932,124 bytes, distilled) likewise needs its 194 tables F32 and the video decoder's timestep conditioning
(LTX2_VAE). Not read tensor by tensor from a real header (../shared/reference/ltx2-spec.md §9.1 [verify]).

Usage: /tmp/venv-ref/bin/python tools/reference/make_layouts.py [--out DIR] [--only NAME ...]
No randomness is involved; the output depends only on the installed reference versions.
"""

from __future__ import annotations

import argparse
import copy
import json
import re
import sys
import tempfile
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from golden_case import reference_versions  # noqa: E402
from published_configs import LTX23_VOCODER, TRANSFORMER_CHECKED  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
GENERATOR = "tools/reference/make_layouts.py"
DEFAULT_OUT = REPO / "src/synth/layouts"
FILE_DTYPE = "BF16"  # see the module docstring
TABLE_DTYPE = "F32"  # the DiT's AdaLN tables in the LTX single files (module docstring)


def file_dtype(layout_name: str, key: str) -> str:
    """The dtype the published file stores `key` in (module docstring)."""
    if layout_name in ("ltx-2.3-22b", "ltx-2-19b") and key.startswith("model.diffusion_model.") and \
            "scale_shift_table" in key:
        return TABLE_DTYPE
    return FILE_DTYPE


# ---------------------------------------------------------------------------------------------------------------
# Published configs (the `config` JSON in each file's safetensors metadata).
# Key names and structure: ltx-core 1.0.0 configurators (what they read) and tools/reference/tiny_configs.py (the
# project's copy of the real structure). Values: ../shared/reference/ltx2-spec.md §2-§6 (code defaults and the
# diffusers converter scripts/convert_ltx2_to_diffusers.py, which hard-codes per-version configs validated against
# the real files); where a value is a plain ltx-core default it says so.
# ---------------------------------------------------------------------------------------------------------------


# Shared DiT dimensions, identical in 2.0 and 2.3 (spec §3.1; diffusers "2.0"/"2.3" transformer configs).
_TRANSFORMER_DIMS = {
    "num_attention_heads": 32,
    "attention_head_dim": 128,
    "in_channels": 128,
    "out_channels": 128,
    "num_layers": 48,
    "cross_attention_dim": 4096,
    "norm_eps": 1e-06,
    "attention_type": "default",
    "positional_embedding_theta": 10000.0,
    "positional_embedding_max_pos": [20, 2048, 2048],
    "timestep_scale_multiplier": 1000,
    "audio_num_attention_heads": 32,
    "audio_attention_head_dim": 64,
    "audio_in_channels": 128,
    "audio_out_channels": 128,
    "audio_cross_attention_dim": 2048,
    "audio_positional_embedding_max_pos": [20],
    # spec §3.1 / §12.2: 1000 per diffusers (cross_attn_timestep_scale_multiplier); ltx-core's fallback would be 1.
    "av_ca_timestep_scale_multiplier": 1000,
    "rope_type": "split",  # diffusers rope_type "split"; ltx-core's fallback is "interleaved"
    "frequencies_precision": "float64",  # diffusers rope_double_precision=True
    # diffusers connector_rope_base_seq_len=4096; ltx-core's fallback would be [1] (spec §2.3).
    "connector_positional_embedding_max_pos": [4096],
    "connector_attention_head_dim": 128,
}

# LTX-2 (19B): caption projection inside the DiT (caption_channels = Gemma hidden 3840), V1 feature extractor,
# connectors 2 layers of 30x128 = 3840 for video and audio, no gated attention, no cross-attention AdaLN
# (spec §1.3; diffusers "2.0": caption_channels 3840, connectors 30 heads x 128, 2 layers, gated_attn False).
LTX2_TRANSFORMER = {
    **TRANSFORMER_CHECKED,
    **_TRANSFORMER_DIMS,
    "caption_channels": 3840,
    "apply_gated_attention": False,
    "cross_attention_adaln": False,
    "connector_num_attention_heads": 30,
    "connector_num_layers": 2,
}

# LTX-2.3 (22B): projection before the connectors (V2 feature extractor, the four keys
# encoder_configurator._V2_EXPECTED_CONFIG demands), gated attention and cross-attention AdaLN, video connector
# 8 layers of 32x128 = 4096, audio connector 8 layers of 32x64 = 2048 (spec §1.3, §2.3; diffusers "2.3").
LTX23_TRANSFORMER = {
    **TRANSFORMER_CHECKED,
    **_TRANSFORMER_DIMS,
    "caption_proj_before_connector": True,
    "caption_projection_first_linear": False,
    "caption_proj_input_norm": False,
    "caption_projection_second_linear": False,
    "apply_gated_attention": True,
    "cross_attention_adaln": True,
    "connector_apply_gated_attention": True,
    "connector_num_attention_heads": 32,
    "connector_num_layers": 8,
    "audio_connector_num_attention_heads": 32,
    "audio_connector_attention_head_dim": 64,
    "audio_connector_num_layers": 8,
}


def _res(n: int, **extra) -> list:
    return ["res_x", {"num_layers": n, **extra}]


def _comp(name: str, multiplier: int, **extra) -> list:
    return [name, {**extra, "multiplier": multiplier}]


_VAE_COMMON = {
    "_class_name": "CausalVideoAutoencoder",
    "dims": 3,
    "in_channels": 3,
    "out_channels": 3,
    "latent_channels": 128,
    "patch_size": 4,
    "norm_layer": "pixel_norm",
    "latent_log_var": "uniform",
    "causal_decoder": False,
    "decoder_base_channels": 128,
    "timestep_conditioning": False,
}

# LTX-2.3 video VAE: blocks verbatim from the published header as quoted in spec §4.1 (also the project's
# tools/reference/bench_vae_decode.py); zero padding; no timestep conditioning.
LTX23_VAE = {
    **_VAE_COMMON,
    "spatial_padding_mode": "zeros",
    "encoder_blocks": [
        _res(4), _comp("compress_space_res", 2), _res(6), _comp("compress_time_res", 2), _res(4),
        _comp("compress_all_res", 2), _res(2), _comp("compress_all_res", 1), _res(2),
    ],
    "decoder_blocks": [
        _res(4), _comp("compress_space", 2), _res(6), _comp("compress_time", 2), _res(4),
        _comp("compress_all", 1), _res(2), _comp("compress_all", 2), _res(2),
    ],
}

# LTX-2 video VAE: encoder (4,6,6,2,2 res layers; widths to 2048) and decoder (4 x res_x{5}, 3 residual
# compress_all m2) per spec §4.1 and diffusers "2.0" (layers_per_block (4,6,6,2,2), decoder (5,5,5,5),
# upsample_residual True); no spatial_padding_mode key, so ltx-core pads the encoder with zeros and the decoder with
# reflect (diffusers: encoder zeros / decoder reflect). The decoder has timestep conditioning: the published 19B
# file's size needs its 42 tensors (24,433,921 parameters in bf16: with them the layout meets the file within the
# same ~24 KB as the 2.3 files, without them it is 48.9 MB short), and ports that read the published weights build
# the LTX-2 decoder "with timestep conditioning" (up_blocks 0/2/4/6 "with timestep", last_scale_shift_table:
# Acelogic/LTX-2-MLX and mlx-video ports of LTX-2). The 2.3 decoder has none (its header as quoted in spec §4.1).
LTX2_VAE = {
    **_VAE_COMMON,
    "timestep_conditioning": True,
    "encoder_blocks": [
        _res(4), _comp("compress_space_res", 2), _res(6), _comp("compress_time_res", 2), _res(6),
        _comp("compress_all_res", 2), _res(2), _comp("compress_all_res", 2), _res(2),
    ],
    "decoder_blocks": [
        _res(5, inject_noise=False), _comp("compress_all", 2, residual=True),
        _res(5, inject_noise=False), _comp("compress_all", 2, residual=True),
        _res(5, inject_noise=False), _comp("compress_all", 2, residual=True),
        _res(5, inject_noise=False),
    ],
}

# Audio VAE, identical in 2.0 and 2.3 (spec §5.1; diffusers audio config "same as LTX-2.0"). attn_resolutions must be
# an empty list (ltx-core's default {8,16,32} would add attention blocks; spec §12.4).
AUDIO_VAE = {
    "model": {
        "params": {
            "sampling_rate": 16000,
            "ddconfig": {
                "double_z": True,
                "mel_bins": 64,
                "z_channels": 8,
                "resolution": 256,
                "downsample_time": False,
                "in_channels": 2,
                "out_ch": 2,
                "ch": 128,
                "ch_mult": [1, 2, 4],
                "num_res_blocks": 2,
                "attn_resolutions": [],
                "dropout": 0.0,
                "mid_block_add_attention": False,
                "norm_type": "pixel",
                "causality_axis": "height",
            },
        }
    },
    "preprocessing": {
        "stft": {"filter_length": 1024, "hop_length": 160, "win_length": 1024, "causal": True},
        "mel": {"n_mel_channels": 64, "mel_fmin": 0, "mel_fmax": 8000},
    },
}

# LTX-2 vocoder: HiFi-GAN, flat config (spec §5.2; diffusers "2.0": hidden 1024, factors [6,5,2,2,2], kernels
# [16,15,8,4,4]). VocoderConfigurator requires resblock "1" and stereo true for the flat form.
LTX2_VOCODER = {
    "resblock": "1",
    "stereo": True,
    "upsample_initial_channel": 1024,
    "upsample_rates": [6, 5, 2, 2, 2],
    "upsample_kernel_sizes": [16, 15, 8, 4, 4],
    "resblock_kernel_sizes": [3, 7, 11],
    "resblock_dilation_sizes": [[1, 3, 5], [1, 3, 5], [1, 3, 5]],
    "output_sampling_rate": 24000,
}


# LTX-2.3 spatial x2 latent upsampler file (its own flat `config`): mid 1024 (diffusers; ltx-core's default is 512),
# 4 blocks per stage, plain Conv2d + PixelShuffle head `upsampler.0` (rational_resampler false) (spec §6).
UPSAMPLER_X2 = {
    "_class_name": "LatentUpsampler",
    "in_channels": 128,
    "mid_channels": 1024,
    "num_blocks_per_stage": 4,
    "dims": 3,
    "spatial_upsample": True,
    "temporal_upsample": False,
    "spatial_scale": 2.0,
    "rational_resampler": False,
}

# Keys reported in the published single files that ltx-core 1.0.0 does not load (spec §9.2; the diffusers converter
# deletes exactly these two before a strict load of its VAE, LTX_2_0_VAE_SPECIAL_KEYS_REMAP, for 2.0 and 2.3). Their
# shape is not known from any reference read here: [latent_channels] is assumed.
VAE_EXTRA = [
    ("vae.per_channel_statistics.channel", [128]),
    ("vae.per_channel_statistics.mean-of-stds", [128]),
]

# Per-file assumptions, written into each JSON (the README explains them at more length).
_LTX_ASSUMPTIONS = [
    "dtype: every tensor BF16 except the DiT's scale_shift_table tensors, F32 (diffusers PR #13918; the published "
    "files' sizes); not checked tensor by tensor against a real header",
    "config values: spec sections 2-6 (ltx-core code + diffusers converter configs), not read from a real header; "
    "they fix the shapes, so a wrong value shows up as a wrong shape",
    "the `scheduler` sub-dict of the published config is omitted: ltx-core 1.0.0 does not read it, contents unknown",
    "extra_tensors: names from the diffusers converter (LTX_2_0_VAE_SPECIAL_KEYS_REMAP); shape [128] assumed",
]
ASSUMPTIONS = {
    "ltx-2.3-22b": _LTX_ASSUMPTIONS + [
        "model_version: only the prefix 2.3 is known (ltx_pipelines/utils/constants.py detect_params)",
    ],
    "ltx-2-19b": _LTX_ASSUMPTIONS + [
        "vae.timestep_conditioning true: from the published file's size (43,333,932,124 bytes, distilled) and ports "
        "built on the published weights, not read from a real header; its decoder tables BF16 (with them F32 the "
        "layout would exceed the file's size)",
        "model_version: unknown (anything not starting with 2.3)",
    ],
    "gemma-3-12b": [
        "dtype: every tensor BF16 (config torch_dtype bfloat16)",
        "config_json: ltx-core's GEMMA3_CONFIG_FOR_LTX (its copy of google/gemma-3-12b-it's config), not the file",
        "no lm_head.weight in the shards (tied to embed_tokens; ltx-core's GEMMA_LLM_KEY_OPS recreates it)",
        "vision tower under the pre-transformers-5 name vision_tower.vision_model.* (see checks)",
        "shard file assignment (model.safetensors.index.json) not recorded",
    ],
    "upsampler-x2": [
        "dtype: every tensor BF16",
        "mid_channels 1024 (diffusers; ltx-core default 512), 4 blocks per stage; 1.0 and 1.1 share the layout",
    ],
    "distilled-lora": [
        "dtype: every tensor BF16",
        "targets and per-module rank ASSUMED (see targets); -1.0 and -1.1 share the layout",
    ],
}

# Distilled LoRA. ltx-core has no target list: it fuses `<module>.lora_A/.lora_B` into whichever `<module>.weight` of
# the DiT the file names (ltx_core/loader/fuse_loras.py), and only the DiT builder gets LoRAs (model_ledger.py), so
# connector or VAE targets would be ignored. The published file's own list was not read. ASSUMED rule: every
# nn.Linear of the DiT at rank min(384, in, out) (what an SVD extraction of distilled - dev gives). Chosen because it is
# the only candidate matching the size users report for ltx-2.3-22b-distilled-lora-384-1.1.safetensors (7.6 GB in
# two public model listings; one of them also gives the dev file as 46.1 GB and Gemma as 24.4 GB, matching this
# script's 46.139 and 24.375 GB); the alternatives are recorded in the JSON ("alternatives_bytes_bf16").
LORA_RANK = 384
LORA_ALTERNATIVES = {
    # ltx-trainer's default LoraConfig.target_modules (Lightricks/LTX-2 packages/ltx-trainer/src/ltx_trainer/config.py)
    "trainer_default_attention_qkvo": ("to_q", "to_k", "to_v", "to_out.0"),
    "attention_qkvo_and_ff": ("to_q", "to_k", "to_v", "to_out.0", "ff.net.0.proj", "ff.net.2", "audio_ff.net.0.proj",
                              "audio_ff.net.2"),
}




# ---------------------------------------------------------------------------------------------------------------
# Meta-device construction and key inversion.
# ---------------------------------------------------------------------------------------------------------------


def meta_build(configurator, config: dict) -> torch.nn.Module:
    """What SingleGPUModelBuilder.meta_model does: the configurator under torch.device("meta")."""
    with torch.device("meta"):
        return configurator.from_config(config)


def forward_key(sd_ops, file_key: str) -> list[str]:
    """The module key(s) ltx-core's loader makes of a file key (ltx_core/loader/sft_loader.py: apply_to_key, then
    apply_to_key_value). Empty when the key is filtered out."""
    if sd_ops is None:
        return [file_key]
    name = sd_ops.apply_to_key(file_key)
    if name is None:
        return []
    return [k for k, _ in sd_ops.apply_to_key_value(name, torch.empty(0, device="meta"))]


def file_key_for(sd_ops, module_key: str) -> str:
    """Invert an SDOps for one key: try every replacement (content <- replacement) and key-value prefix, keep the
    candidate whose forward map gives back exactly this module key."""
    from ltx_core.loader.sd_ops import ContentReplacement, SDKeyValueOperation

    if sd_ops is None:
        return module_key
    # candidate -> length of the module-side prefix it was made from
    candidates: dict[str, int] = {}
    for op in sd_ops.mapping:
        if isinstance(op, ContentReplacement) and module_key.startswith(op.replacement):
            candidates[op.content + module_key[len(op.replacement) :]] = len(op.replacement)
        if isinstance(op, SDKeyValueOperation):
            candidates[op.key_matcher.prefix + module_key] = 0
    good = {c: n for c, n in candidates.items() if module_key in forward_key(sd_ops, c)}
    # Several names can load into the same parameter (e.g. `vae.encoder.per_channel_statistics.x` and
    # `vae.per_channel_statistics.x` both reach `per_channel_statistics.x`); the published name is the one of the
    # dedicated, most specific mapping (the longest module-side prefix).
    best = max(good.values(), default=None)
    chosen = sorted(c for c, n in good.items() if n == best)
    if len(chosen) != 1:
        raise RuntimeError(f"{sd_ops.name}: no unique file key for {module_key!r} (candidates {sorted(candidates)})")
    return chosen[0]


def module_entries(module: torch.nn.Module) -> tuple[dict[str, list[int]], set[str]]:
    """{state-dict key: shape} of every parameter and persistent buffer, and the set of those that are buffers."""
    shapes = {k: list(v.shape) for k, v in module.state_dict().items()}
    persistent_buffers = set()
    for mod_name, mod in module.named_modules():
        for b_name in mod._buffers:
            if b_name not in mod._non_persistent_buffers_set:
                persistent_buffers.add(f"{mod_name}.{b_name}" if mod_name else b_name)
    return shapes, persistent_buffers & set(shapes)


class Layout:
    """Accumulates file keys, shapes and per-component counts for one published file."""

    def __init__(self) -> None:
        self.tensors: dict[str, list[int]] = {}
        self.buffers: set[str] = set()
        self.components: list[dict] = []

    def add(self, name: str, module: torch.nn.Module, key_fn, key_map: str, configurator: str,
            skip=lambda k: False) -> None:
        """key_fn: module state-dict key -> published file key."""
        shapes, buffers = module_entries(module)
        keys, params = [], 0
        for mk, shape in shapes.items():
            if skip(mk):
                continue
            fk = key_fn(mk)
            if fk in self.tensors and self.tensors[fk] != shape:
                raise RuntimeError(f"{fk}: shape {shape} vs {self.tensors[fk]} from another component")
            if fk not in self.tensors:  # shared keys (the VAE statistics) count once, in the first component
                self.tensors[fk] = shape
                params += numel(shape)
                keys.append(fk)
            if mk in buffers:
                self.buffers.add(fk)
        self.components.append({
            "name": name,
            "configurator": configurator,
            "key_map": key_map,
            "new_tensors": len(keys),
            "parameters": params,
        })


def numel(shape: list[int]) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


# ---------------------------------------------------------------------------------------------------------------
# The published files.
# ---------------------------------------------------------------------------------------------------------------


def ltx_parts() -> list[tuple]:
    """(component, configurator, SDOps, SDOps name) for every module ltx-pipelines' ModelLedger builds from one LTX
    checkpoint (ltx_pipelines/utils/model_ledger.py build_model_builders)."""
    from ltx_core.model.audio_vae import (
        AUDIO_VAE_DECODER_COMFY_KEYS_FILTER,
        AUDIO_VAE_ENCODER_COMFY_KEYS_FILTER,
        VOCODER_COMFY_KEYS_FILTER,
        AudioDecoderConfigurator,
        AudioEncoderConfigurator,
        VocoderConfigurator,
    )
    from ltx_core.model.transformer import LTXV_MODEL_COMFY_RENAMING_MAP, LTXModelConfigurator
    from ltx_core.model.video_vae import (
        VAE_DECODER_COMFY_KEYS_FILTER,
        VAE_ENCODER_COMFY_KEYS_FILTER,
        VideoDecoderConfigurator,
        VideoEncoderConfigurator,
    )
    from ltx_core.text_encoders.gemma import EMBEDDINGS_PROCESSOR_KEY_OPS, EmbeddingsProcessorConfigurator

    return [
        ("transformer", LTXModelConfigurator, LTXV_MODEL_COMFY_RENAMING_MAP, "LTXV_MODEL_COMFY_RENAMING_MAP"),
        ("embeddings_processor", EmbeddingsProcessorConfigurator, EMBEDDINGS_PROCESSOR_KEY_OPS,
         "EMBEDDINGS_PROCESSOR_KEY_OPS"),
        ("video_vae_encoder", VideoEncoderConfigurator, VAE_ENCODER_COMFY_KEYS_FILTER, "VAE_ENCODER_COMFY_KEYS_FILTER"),
        ("video_vae_decoder", VideoDecoderConfigurator, VAE_DECODER_COMFY_KEYS_FILTER, "VAE_DECODER_COMFY_KEYS_FILTER"),
        ("audio_vae_encoder", AudioEncoderConfigurator, AUDIO_VAE_ENCODER_COMFY_KEYS_FILTER,
         "AUDIO_VAE_ENCODER_COMFY_KEYS_FILTER"),
        ("audio_vae_decoder", AudioDecoderConfigurator, AUDIO_VAE_DECODER_COMFY_KEYS_FILTER,
         "AUDIO_VAE_DECODER_COMFY_KEYS_FILTER"),
        ("vocoder", VocoderConfigurator, VOCODER_COMFY_KEYS_FILTER, "VOCODER_COMFY_KEYS_FILTER"),
    ]


def ltx_single_file(transformer: dict, vae: dict, vocoder: dict) -> tuple[dict, Layout]:
    """A monolithic LTX checkpoint: DiT + connectors + text projection + video VAE + audio VAE + vocoder, each built
    and named exactly as ltx-pipelines' ModelLedger builds them from the one file."""
    from ltx_core.model.transformer import LTXV_MODEL_COMFY_RENAMING_MAP

    config = {
        "transformer": copy.deepcopy(transformer),
        "vae": copy.deepcopy(vae),
        "audio_vae": copy.deepcopy(AUDIO_VAE),
        "vocoder": copy.deepcopy(vocoder),
    }
    parts = ltx_parts()
    layout = Layout()
    for name, configurator, sd_ops, sd_ops_name in parts:
        layout.add(name, meta_build(configurator, config), lambda k, o=sd_ops: file_key_for(o, k), sd_ops_name,
                   configurator.__name__)
    # Cross-check the other direction: every file key of the transformer prefix is claimed by exactly the DiT or the
    # connectors (the DiT loader also sees the connector keys and ignores them: strict=False).
    for fk in layout.tensors:
        if fk.startswith("model.diffusion_model.") and not fk.startswith(
            ("model.diffusion_model.video_embeddings_connector.", "model.diffusion_model.audio_embeddings_connector.")
        ):
            assert forward_key(LTXV_MODEL_COMFY_RENAMING_MAP, fk), fk
    return config, layout


def siglip_legacy_hop() -> str:
    """The `vision_model` level that transformers >= 5 flattened out of SiglipVisionModel and that checkpoints written
    by earlier versions (the published Gemma 3 shards) still carry: transformers' own checkpoint conversion mapping
    for SiglipVisionModel (conversion_mapping.py: SiglipVisionModel -> CLIPVisionModel ->
    PrefixChange(prefix_to_remove="vision_model")). ltx-core 1.0.0 was written against that unflattened tree
    (encoder_configurator.create_and_populate reads `model.model.vision_tower.vision_model`)."""
    from transformers.conversion_mapping import get_checkpoint_conversion_mapping

    (change,) = get_checkpoint_conversion_mapping("SiglipVisionModel")
    return change.prefix_to_remove


def gemma_file_key(module_key: str) -> str:
    """Published shard name of a GemmaTextEncoder state-dict key: GEMMA_LLM_KEY_OPS inverted (ltx-core maps the shard
    names `language_model.model.*`, `vision_tower.*`, `multi_modal_projector.*` into the module), plus the legacy
    SigLIP hop for the vision tower."""
    from ltx_core.text_encoders.gemma import GEMMA_LLM_KEY_OPS

    fk = file_key_for(GEMMA_LLM_KEY_OPS, module_key)
    if fk.startswith("vision_tower."):
        fk = f"vision_tower.{siglip_legacy_hop()}." + fk[len("vision_tower.") :]
    return fk


def gemma_layout() -> tuple[dict, Layout, dict]:
    """google/gemma-3-12b-it as ltx-core builds it (GemmaTextEncoderConfigurator: transformers'
    Gemma3ForConditionalGeneration from GEMMA3_CONFIG_FOR_LTX on meta) and as the published shards name it. The
    shards carry no lm_head (tie_word_embeddings; GEMMA_LLM_KEY_OPS copies embed_tokens into lm_head)."""
    from ltx_core.text_encoders.gemma import GEMMA_LLM_KEY_OPS, GemmaTextEncoderConfigurator
    from ltx_core.text_encoders.gemma.config import GEMMA3_CONFIG_FOR_LTX

    hf_config = GEMMA3_CONFIG_FOR_LTX.to_dict()
    layout = Layout()
    module = meta_build(GemmaTextEncoderConfigurator, {})
    tied = "model.lm_head.weight"  # produced by GEMMA_LLM_KEY_OPS' key-value operation from embed_tokens
    assert tied in forward_key(GEMMA_LLM_KEY_OPS, "language_model.model.embed_tokens.weight")
    layout.add("gemma3_for_conditional_generation", module, gemma_file_key,
               "GEMMA_LLM_KEY_OPS + SigLIP legacy vision_model hop", "GemmaTextEncoderConfigurator",
               skip=lambda k: k == tied)
    checks = check_gemma_names_with_transformers()
    return hf_config, layout, checks


def check_gemma_names_with_transformers() -> dict:
    """Independent check of the published Gemma naming: a tiny Gemma3ForConditionalGeneration (vision head off, as in
    the real config) is saved under the names derived here and reloaded with transformers' own from_pretrained, which
    must find every weight (no missing or unexpected keys)."""
    from safetensors.torch import save_file
    from transformers import Gemma3Config, Gemma3ForConditionalGeneration

    cfg = Gemma3Config(
        text_config={"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 2, "num_attention_heads": 2,
                     "num_key_value_heads": 1, "head_dim": 16, "vocab_size": 300, "sliding_window": 8},
        vision_config={"hidden_size": 32, "intermediate_size": 64, "num_hidden_layers": 1, "num_attention_heads": 2,
                       "image_size": 28, "patch_size": 14, "vision_use_head": False},
        mm_tokens_per_image=4,
        boi_token_index=297, eoi_token_index=298, image_token_index=299,
    )
    torch.manual_seed(0)
    model = Gemma3ForConditionalGeneration(cfg)
    sd = {}
    for k, v in model.state_dict().items():
        if k == "lm_head.weight":
            continue
        sd[gemma_file_key("model." + k)] = v.contiguous()
    with tempfile.TemporaryDirectory() as d:
        cfg.save_pretrained(d)
        save_file(sd, str(Path(d) / "model.safetensors"), metadata={"format": "pt"})
        _, info = Gemma3ForConditionalGeneration.from_pretrained(d, output_loading_info=True)
    bad = {k: sorted(v) for k, v in info.items() if v and k in ("missing_keys", "unexpected_keys", "mismatched_keys")}
    if bad:
        raise RuntimeError(f"transformers does not accept the derived Gemma names: {bad}")
    return {
        "transformers_from_pretrained": "ok: a tiny Gemma3ForConditionalGeneration saved under the derived names "
                                        "reloads with no missing/unexpected keys",
        "siglip_legacy_hop": siglip_legacy_hop(),
    }


def upsampler_layout() -> tuple[dict, Layout]:
    """The upsampler file: keys with no prefix, its own flat `config` (ModelLedger builds it with no SDOps)."""
    from ltx_core.model.upsampler import LatentUpsamplerConfigurator

    config = copy.deepcopy(UPSAMPLER_X2)
    layout = Layout()
    layout.add("latent_upsampler", meta_build(LatentUpsamplerConfigurator, config), lambda k: k, "none (no prefix)",
               "LatentUpsamplerConfigurator")
    return config, layout


def lora_layout(transformer_config: dict) -> tuple[Layout, dict, dict]:
    """Rank-384 LoRA for the LTX-2.3 DiT in the official/ComfyUI naming (spec §9.4): for every targeted nn.Linear,
    `diffusion_model.<module>.lora_A.weight` [r, in] and `.lora_B.weight` [out, r]. Checked against ltx-core:
    LTXV_LORA_COMFY_RENAMING_MAP turns them into `<module>.lora_A/B.weight`, which is what
    fuse_loras._prepare_deltas looks up for the DiT's `<module>.weight`."""
    from ltx_core.loader import LTXV_LORA_COMFY_RENAMING_MAP
    from ltx_core.model.transformer import LTXModelConfigurator

    dit = meta_build(LTXModelConfigurator, {"transformer": transformer_config})
    weights = dict(dit.state_dict())
    linears = [(n, m) for n, m in dit.named_modules() if isinstance(m, torch.nn.Linear)]
    rank = lambda m: min(LORA_RANK, m.in_features, m.out_features)  # noqa: E731
    layout = Layout()
    targeted: dict[str, dict] = {}
    for name, mod in linears:
        assert f"{name}.weight" in weights
        r = rank(mod)
        for part, shape in (("lora_A", [r, mod.in_features]), ("lora_B", [mod.out_features, r])):
            fk = f"diffusion_model.{name}.{part}.weight"
            assert forward_key(LTXV_LORA_COMFY_RENAMING_MAP, fk) == [f"{name}.{part}.weight"]
            layout.tensors[fk] = shape
        kind = re.sub(r"^transformer_blocks\.\d+\.", "transformer_blocks.N.", name)  # one entry per block module
        entry = targeted.setdefault(kind, {"modules": 0, "rank": r})
        entry["modules"] += 1
    params = sum(numel(s) for s in layout.tensors.values())
    layout.components.append({"name": "lora", "configurator": "LTXModelConfigurator (2.3 DiT, for the Linear shapes)",
                              "key_map": "LTXV_LORA_COMFY_RENAMING_MAP", "new_tensors": len(layout.tensors),
                              "parameters": params})
    # Sizes of the other candidate target sets at a uniform rank 384, for comparison with reported file sizes.
    alternatives = {"all_linears_uniform_rank_384": 2 * sum(LORA_RANK * (m.in_features + m.out_features)
                                                            for _, m in linears)}
    for alt, suffixes in LORA_ALTERNATIVES.items():
        alternatives[alt] = 2 * sum(LORA_RANK * (m.in_features + m.out_features) for n, m in linears
                                    if any(n == t or n.endswith("." + t) for t in suffixes))
    return layout, dict(sorted(targeted.items())), alternatives


# ---------------------------------------------------------------------------------------------------------------
# Writing.
# ---------------------------------------------------------------------------------------------------------------


def compact_json(obj, indent: int = 0, width: int = 118) -> str:
    """JSON with nesting only where needed: a value whose one-line form fits in `width` stays on one line."""
    flat = json.dumps(obj, ensure_ascii=True)
    if len(flat) + indent <= width or not isinstance(obj, (dict, list)) or not obj:
        return flat
    pad, inner = " " * indent, " " * (indent + 1)
    if isinstance(obj, dict):
        items = [f"{inner}{json.dumps(k)}: {compact_json(v, indent + 1, width)}" for k, v in obj.items()]
        return "{\n" + ",\n".join(items) + "\n" + pad + "}"
    items = [inner + compact_json(v, indent + 1, width) for v in obj]
    return "[\n" + ",\n".join(items) + "\n" + pad + "]"


DTYPE_BYTES = {"BF16": 2, "F32": 4}


def write_layout(path: Path, head: dict, layout: Layout, extras: list[tuple[str, list[int]]] = ()) -> dict:
    name = head["name"]
    tensors = [[k, layout.tensors[k], file_dtype(name, k)] for k in sorted(layout.tensors)]
    extra_tensors = [[k, s, file_dtype(name, k)] for k, s in extras]
    params = sum(numel(s) for _, s, _ in tensors)
    extra_params = sum(numel(s) for _, s, _ in extra_tensors)
    size = lambda entries: sum(numel(s) * DTYPE_BYTES[d] for _, s, d in entries)  # noqa: E731
    totals = {
        "tensors": len(tensors),
        "parameters": params,
        "bytes": size(tensors),
        "with_extra_tensors": {"tensors": len(tensors) + len(extras), "parameters": params + extra_params,
                               "bytes": size(tensors + extra_tensors)},
    }
    tables = sum(1 for _, _, d in tensors if d == TABLE_DTYPE)
    rule = f"every tensor {FILE_DTYPE} (assumed for the published bf16 files; see README)"
    if tables:
        rule = (f"{TABLE_DTYPE} for the DiT's {tables} scale_shift_table tensors (diffusers PR #13918; the published "
                f"files' sizes), {FILE_DTYPE} for every other tensor")
    doc = {
        **head,
        "dtype_rule": rule,
        "totals": totals,
        "components": layout.components,
        # Persistent buffers of the official modules (not nn.Parameters); they are in the file all the same.
        "buffers": sorted(layout.buffers),
        # Keys reported in the published file that ltx-core does not load (not derivable from the reference).
        "extra_tensors": extra_tensors,
        "tensors": tensors,
    }
    text = compact_json(doc) + "\n"
    assert json.loads(text) == json.loads(json.dumps(doc))  # well-formed and lossless
    path.write_text(text)
    return totals


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--only", nargs="*", default=None)
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    torch.set_num_threads(1)
    ref = reference_versions(GENERATOR)
    wanted = lambda n: args.only is None or n in args.only  # noqa: E731
    summary = {}

    if wanted("ltx-2.3-22b"):
        config, layout = ltx_single_file(LTX23_TRANSFORMER, LTX23_VAE, LTX23_VOCODER)
        head = {
            "format": 1,
            "name": "ltx-2.3-22b",
            "files": ["ltx-2.3-22b-dev.safetensors", "ltx-2.3-22b-distilled[-1.1].safetensors (same layout assumed)"],
            "reference": ref,
            "assumptions": ASSUMPTIONS["ltx-2.3-22b"],
            # The safetensors __metadata__: `config` (a JSON string in the file; a dict here) and `model_version`,
            # which ltx_pipelines/utils/constants.py:detect_params only tests for the prefix "2.3".
            "metadata": {"config": config, "model_version": "2.3 (prefix; exact string unknown)"},
        }
        summary["ltx-2.3-22b"] = write_layout(args.out / "ltx-2.3-22b.json", head, layout, VAE_EXTRA)

    if wanted("ltx-2-19b"):
        config, layout = ltx_single_file(LTX2_TRANSFORMER, LTX2_VAE, LTX2_VOCODER)
        head = {
            "format": 1,
            "name": "ltx-2-19b",
            "files": ["ltx-2-19b-dev.safetensors", "ltx-2-19b-distilled.safetensors (same layout assumed)"],
            "reference": ref,
            "assumptions": ASSUMPTIONS["ltx-2-19b"],
            "metadata": {"config": config, "model_version": "unknown (anything not starting with 2.3)"},
        }
        summary["ltx-2-19b"] = write_layout(args.out / "ltx-2-19b.json", head, layout, VAE_EXTRA)

    if wanted("gemma-3-12b"):
        hf_config, layout, checks = gemma_layout()
        head = {
            "format": 1,
            "name": "gemma-3-12b",
            "files": ["google/gemma-3-12b-it (and -qat-q4_0-unquantized): model-0000N-of-0000M.safetensors shards + "
                      "model.safetensors.index.json (shard assignment not recorded here)"],
            "reference": ref,
            "assumptions": ASSUMPTIONS["gemma-3-12b"],
            "config_json": hf_config,
            "checks": checks,
        }
        summary["gemma-3-12b"] = write_layout(args.out / "gemma-3-12b.json", head, layout)

    if wanted("upsampler-x2"):
        config, layout = upsampler_layout()
        head = {
            "format": 1,
            "name": "upsampler-x2",
            "files": ["ltx-2.3-spatial-upscaler-x2-1.0.safetensors", "ltx-2.3-spatial-upscaler-x2-1.1.safetensors"],
            "reference": ref,
            "assumptions": ASSUMPTIONS["upsampler-x2"],
            "metadata": {"config": config},
        }
        summary["upsampler-x2"] = write_layout(args.out / "upsampler-x2.json", head, layout)

    if wanted("distilled-lora"):
        layout, targeted, alternatives = lora_layout(LTX23_TRANSFORMER)
        head = {
            "format": 1,
            "name": "distilled-lora",
            "files": ["ltx-2.3-22b-distilled-lora-384-1.1.safetensors", "ltx-2.3-22b-distilled-lora-384.safetensors "
                      "(1.0; same layout assumed)"],
            "reference": ref,
            "assumptions": ASSUMPTIONS["distilled-lora"],
            "rank": LORA_RANK,
            "targets": {
                "rule": "ASSUMED: every nn.Linear of the LTX-2.3 DiT (LTXModel), rank min(384, in_features, "
                        "out_features); no connector, VAE or non-Linear targets; no alpha tensors (ltx-core scale 1)",
                "why": "matches the reported size of the -1.1 file (7.6 GB); ltx-core fuses whatever the file names "
                       "and has no list of its own; the published file's key list was not read",
                "modules": targeted,
                "alternatives_bytes_bf16": alternatives,
            },
            "metadata": {},
        }
        summary["distilled-lora"] = write_layout(args.out / "distilled-lora.json", head, layout)

    for name, t in summary.items():
        print(f"{name:16s} tensors {t['tensors']:5d}  params {t['parameters']:>14,d}  "
              f"{t['bytes'] / 1e9:7.3f} GB  (+extras: {t['with_extra_tensors']['tensors']} tensors)")


if __name__ == "__main__":
    main()

"""Test data for the DiT checkpoint formats (tests/ltx/dit_formats_test.cpp), made from the tiny DiT goldens.

    python tools/reference/make_dit_format_data.py [OUT]     (default: tests/data/dit_formats)

Each file holds the weights of a committed golden case (tests/golden/dit/<case>/weights.safetensors, official
single-file layout) in another format:

- diffusers_ltx2/, diffusers_ltx23/: the Diffusers layout written by diffusers itself. The official state dict is
  renamed by diffusers' own converter (diffusers.loaders.single_file_utils.convert_ltx2_transformer_to_diffusers;
  it predates LTX-2.3, so the two 2.3 renames of diffusers' scripts/convert_ltx2_to_diffusers.py
  LTX_2_3_TRANSFORMER_KEYS_RENAME_DICT, prompt_adaln_single -> prompt_adaln and its audio twin, are applied
  first), loaded into LTX2VideoTransformer3DModel with strict=True (so every key is accounted for) and saved with
  save_pretrained in two shards. The expected output is the case's own golden (same weights).
- fp8_ltx23.safetensors: the official layout with the Linear weights ltx-core's fp8 scaled-mm policy quantizes
  (transformer blocks minus ltx_core.quantization.fp8_scaled_mm.EXCLUDED_LAYER_SUBSTRINGS) stored as F8_E4M3 with
  a per-tensor weight_scale, by ltx-core's quantize_weight_to_fp8_per_tensor (transposed back to the checkpoint's
  [out, in]; FP8_TRANSPOSE_SD_OPS transposes at load). input_scale = 1 is written too (ltx reads and ignores it).
  fp8_ltx23_expected.safetensors: ltx-core's LTXModel on the dequantized weights (W_f8.float() * weight_scale).
- gguf_ltx23.gguf: the GGUF convention of ComfyUI-GGUF's tools/convert.py (arch "ltxv", names without
  model.diffusion_model., 1-D, <= 1024-element and scale_shift_table tensors in F32, others quantized, F16 when a
  row is not a whole number of blocks) with Q8_0 as the quantized type, plus the checkpoint `config` as a string
  entry (as LTX-2 GGUFs for ComfyUI-GGUF PR #399 carry it). The top-level scale_shift_table is stored flattened
  with a comfy.gguf.orig_shape entry. gguf_ltx23_expected.safetensors: LTXModel on gguf-py's dequantized weights.

The expected outputs use the inputs of tests/golden/dit/ltx23_av (video and audio velocity, f32).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import torch

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(HERE))

from golden_case import canonical_json, read_safetensors, setup_determinism, write_safetensors  # noqa: E402

PREFIX = "model.diffusion_model."
GOLDEN = REPO / "tests" / "golden" / "dit"


def official_weights(case: str) -> tuple[dict[str, torch.Tensor], dict]:
    tensors, meta = read_safetensors(GOLDEN / case / "weights.safetensors")
    return {k[len(PREFIX):]: v for k, v in tensors.items()}, json.loads(meta["config"])


# ---- Diffusers ------------------------------------------------------------------------------------------------


def diffusers_config(tc: dict) -> dict:
    """LTX2VideoTransformer3DModel arguments for an official transformer config (tiny_configs.py)."""
    v23 = bool(tc.get("cross_attention_adaln", False))
    return {
        "in_channels": tc["in_channels"],
        "out_channels": tc["out_channels"],
        "num_attention_heads": tc["num_attention_heads"],
        "attention_head_dim": tc["attention_head_dim"],
        "cross_attention_dim": tc["cross_attention_dim"],
        "pos_embed_max_pos": tc["positional_embedding_max_pos"][0],
        "base_height": tc["positional_embedding_max_pos"][1],
        "base_width": tc["positional_embedding_max_pos"][2],
        "gated_attn": tc["apply_gated_attention"],
        "cross_attn_mod": v23,
        "audio_in_channels": tc["audio_in_channels"],
        "audio_out_channels": tc["audio_out_channels"],
        "audio_num_attention_heads": tc["audio_num_attention_heads"],
        "audio_attention_head_dim": tc["audio_attention_head_dim"],
        "audio_cross_attention_dim": tc["audio_cross_attention_dim"],
        "audio_pos_embed_max_pos": tc["audio_positional_embedding_max_pos"][0],
        "audio_gated_attn": tc["apply_gated_attention"],
        "audio_cross_attn_mod": v23,
        "num_layers": tc["num_layers"],
        "norm_eps": tc["norm_eps"],
        "caption_channels": tc["caption_channels"] if "caption_channels" in tc else 3840,
        "rope_theta": tc["positional_embedding_theta"],
        "rope_double_precision": tc.get("frequencies_precision") == "float64",
        "timestep_scale_multiplier": tc["timestep_scale_multiplier"],
        # ltx-core falls back to 1 when the official config omits it (the 2.0-style tiny config does).
        "cross_attn_timestep_scale_multiplier": tc.get("av_ca_timestep_scale_multiplier", 1),
        "rope_type": tc["rope_type"],
        "use_prompt_embeddings": not tc.get("caption_proj_before_connector", False),
    }


def write_diffusers(out: Path, case: str) -> None:
    from diffusers import LTX2VideoTransformer3DModel
    from diffusers.loaders.single_file_utils import convert_ltx2_transformer_to_diffusers

    weights, cfg = official_weights(case)
    # LTX_2_3_TRANSFORMER_KEYS_RENAME_DICT's additions (longest first, as plain substring renames).
    renamed = {}
    for k, v in weights.items():
        k = k.replace("audio_prompt_adaln_single", "audio_prompt_adaln").replace("prompt_adaln_single", "prompt_adaln")
        renamed[k] = v
    converted = convert_ltx2_transformer_to_diffusers({PREFIX + k: v for k, v in renamed.items()})
    model = LTX2VideoTransformer3DModel(**diffusers_config(cfg["transformer"]))
    model.load_state_dict(converted, strict=True)
    folder = out / f"diffusers_{case.removesuffix('_av')}" / "transformer"
    model.save_pretrained(folder, safe_serialization=True, max_shard_size="150KB")


# ---- reference runs -------------------------------------------------------------------------------------------


def run_reference(cfg: dict, weights: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """ltx-core's LTXModel (f32) on the ltx23_av golden inputs with these (official-name) weights."""
    from ltx_core.model.transformer.model_configurator import LTXModelConfigurator
    from ltx_core.model.transformer.modality import Modality

    model = LTXModelConfigurator.from_config(cfg).to_empty(device="cpu").float().eval()
    model.load_state_dict(weights, strict=True)
    inputs, _ = read_safetensors(GOLDEN / "ltx23_av" / "inputs.safetensors")

    def modality(s: str) -> Modality:
        return Modality(
            latent=inputs[f"{s}.latent"],
            sigma=inputs[f"{s}.sigma"],
            timesteps=inputs[f"{s}.timesteps"],
            positions=inputs[f"{s}.positions"],
            context=inputs[f"{s}.context"],
        )

    from ltx_core.guidance.perturbations import BatchedPerturbationConfig

    with torch.no_grad():
        video, audio = model(modality("video"), modality("audio"), BatchedPerturbationConfig.empty(1))
    return {"video.velocity": video.float().contiguous(), "audio.velocity": audio.float().contiguous()}


# ---- fp8 ------------------------------------------------------------------------------------------------------


def linear_weight_names(cfg: dict) -> set[str]:
    from ltx_core.model.transformer.model_configurator import LTXModelConfigurator

    model = LTXModelConfigurator.from_config(cfg)
    return {f"{name}.weight" for name, m in model.named_modules() if isinstance(m, torch.nn.Linear)}


def write_fp8(out: Path) -> None:
    import ltx_core.loader  # noqa: F401  (imported first: ltx_core.quantization alone hits a circular import)
    from ltx_core.quantization.fp8_scaled_mm import (
        EXCLUDED_LAYER_SUBSTRINGS,
        _should_skip_layer,
        quantize_weight_to_fp8_per_tensor,
    )

    weights, cfg = official_weights("ltx23_av")
    linears = linear_weight_names(cfg)
    stored, dequantized = {}, {}
    for k, v in weights.items():
        layer = k.removesuffix(".weight")
        if k in linears and k.startswith("transformer_blocks.") and not _should_skip_layer(layer, EXCLUDED_LAYER_SUBSTRINGS):
            q, scale = quantize_weight_to_fp8_per_tensor(v)
            q = q.t().contiguous()  # back to the checkpoint's [out, in]
            stored[k] = q
            stored[layer + ".weight_scale"] = scale.float().reshape(())
            stored[layer + ".input_scale"] = torch.tensor(1.0)
            dequantized[k] = q.float() * scale.float()
        else:
            stored[k] = v
            dequantized[k] = v
    write_fp8_safetensors(out / "fp8_ltx23.safetensors", {PREFIX + k: v for k, v in stored.items()}, {"config": canonical_json(cfg)})
    write_safetensors(out / "fp8_ltx23_expected.safetensors", run_reference(cfg, dequantized))


def write_fp8_safetensors(path: Path, tensors: dict[str, torch.Tensor], metadata: dict[str, str]) -> None:
    """golden_case.write_safetensors with F8_E4M3 added (its dtype table has no 8-bit floats): same layout rules."""
    import struct

    header: dict[str, object] = {"__metadata__": {k: metadata[k] for k in sorted(metadata)}}
    blobs, offset = [], 0
    for name in sorted(tensors):
        t = tensors[name].contiguous()
        if t.dtype == torch.float8_e4m3fn:
            dtype, data = "F8_E4M3", t.view(torch.uint8).numpy().tobytes()
        elif t.dtype == torch.float32:
            dtype, data = "F32", t.numpy().astype("<f4").tobytes()
        else:
            raise TypeError(f"{name}: {t.dtype}")
        header[name] = {"dtype": dtype, "shape": list(t.shape), "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    raw = json.dumps(header, separators=(",", ":"), ensure_ascii=True).encode()
    raw += b" " * ((8 - len(raw) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(raw)) + raw + b"".join(blobs))


# ---- GGUF -----------------------------------------------------------------------------------------------------

QUANTIZATION_THRESHOLD = 1024  # ComfyUI-GGUF tools/convert.py


def write_gguf(out: Path) -> None:
    import gguf

    weights, cfg = official_weights("ltx23_av")
    path = out / "gguf_ltx23.gguf"
    writer = gguf.GGUFWriter(path=None, arch="ltxv")
    writer.add_quantization_version(gguf.GGML_QUANT_VERSION)
    writer.add_string("config", canonical_json(cfg))
    dequantized = {}
    for key in sorted(weights):
        data = weights[key].numpy().astype(np.float32)
        qtype = gguf.GGMLQuantizationType.Q8_0
        if data.ndim == 1 or data.size <= QUANTIZATION_THRESHOLD or "scale_shift_table" in key:
            qtype = gguf.GGMLQuantizationType.F32
        elif data.shape[-1] % gguf.GGML_QUANT_SIZES[qtype][0] != 0:
            qtype = gguf.GGMLQuantizationType.F16  # convert.py's fallback on QuantError
        if key == "scale_shift_table":
            writer.add_array(f"comfy.gguf.orig_shape.{key}", [int(d) for d in data.shape])
            data = data.reshape(-1)
        q = gguf.quants.quantize(data, qtype)
        writer.add_tensor(key, q, raw_dtype=qtype)
        dequantized[key] = torch.from_numpy(
            np.asarray(gguf.quants.dequantize(q, qtype), dtype=np.float32).reshape(weights[key].shape).copy()
        )
    writer.write_header_to_file(path=path)
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    write_safetensors(out / "gguf_ltx23_expected.safetensors", run_reference(cfg, dequantized))


def main() -> int:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else REPO / "tests" / "data" / "dit_formats"
    out.mkdir(parents=True, exist_ok=True)
    setup_determinism()
    write_diffusers(out, "ltx2_av")
    write_diffusers(out, "ltx23_av")
    write_fp8(out)
    write_gguf(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())

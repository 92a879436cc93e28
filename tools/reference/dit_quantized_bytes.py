"""Resident weight bytes of the full-size LTX-2 / LTX-2.3 DiT when its matrices are block-quantized (issue 5's
"a 4-bit 22B DiT fits in about 12 GB").

    python tools/reference/dit_quantized_bytes.py [q4_k|q5_k|q6_k|q8_0|q4_0|bf16]

Builds ltx-core's LTXModel on the meta device from the official configuration (ltx2-spec.md section 3.1 values,
the same keys as tiny_configs.py) and sizes every tensor as ltx holds it: matrices whose rows are whole blocks
at the chosen type (the Linear weights), everything else as ComfyUI-GGUF's tools/convert.py keeps it (1-D,
<= 1024-element and scale_shift_table tensors in f32), and matrices whose rows are not whole blocks in bf16.
"""

from __future__ import annotations

import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from tiny_configs import LTX2_TRANSFORMER, LTX23_TRANSFORMER  # noqa: E402

# (elements per block, bytes per block): ggml's block layouts.
BLOCKS = {"q4_0": (32, 18), "q8_0": (32, 34), "q4_k": (256, 144), "q5_k": (256, 176), "q6_k": (256, 210), "bf16": (1, 2)}

FULL = {
    "num_attention_heads": 32, "attention_head_dim": 128, "in_channels": 128, "out_channels": 128, "num_layers": 48,
    "cross_attention_dim": 4096, "audio_num_attention_heads": 32, "audio_attention_head_dim": 64,
    "audio_in_channels": 128, "audio_out_channels": 128, "audio_cross_attention_dim": 2048,
}


def count(style: dict, qtype: str) -> tuple[int, int, int]:
    from ltx_core.model.transformer.model_configurator import LTXModelConfigurator

    cfg = {"transformer": {**style, **FULL}}
    if "caption_channels" in cfg["transformer"]:
        cfg["transformer"]["caption_channels"] = 3840
    with torch.device("meta"):
        model = LTXModelConfigurator.from_config(cfg)
    per, size = BLOCKS[qtype]
    params = total = quantized = 0
    for name, p in model.named_parameters():
        n = p.numel()
        params += n
        if p.dim() == 2 and p.shape[1] % per == 0 and n > 1024 and "scale_shift_table" not in name:
            total += n // per * size
            quantized += n
        elif p.dim() == 1 or n <= 1024 or "scale_shift_table" in name:
            total += 4 * n
        else:
            total += 2 * n
    return params, quantized, total


def main() -> int:
    qtype = sys.argv[1] if len(sys.argv) > 1 else "q4_k"
    for label, style in (("LTX-2 (19B)", LTX2_TRANSFORMER), ("LTX-2.3 (22B)", LTX23_TRANSFORMER)):
        params, quantized, total = count(style, qtype)
        print(f"{label} DiT: {params / 1e9:.3f} B parameters, {quantized / params:.4%} in {qtype} matrices, "
              f"{total / 1e9:.2f} GB = {total / 2**30:.2f} GiB resident")
    return 0


if __name__ == "__main__":
    sys.exit(main())

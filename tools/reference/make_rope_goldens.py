"""Rotary frequency grid golden cases (group `rope`), one per torch CPU kernel set.

  freq_grids_<set>  component `rope_freq_grids`, made under ATEN_CPU_CAPABILITY=<set> (avx512, avx2, default):
                    - `ltx_grid.<name>`: ltx_core.model.transformer.rope.generate_freq_grid_pytorch (float32:
                      theta ** torch.linspace(0, 1, n) * pi / 2) and generate_freq_grid_np (float64) for
                      params.ltx_grids[<name>] = {theta, n_axes, dim, float64}, n = dim // (2 n_axes): every size
                      1..70 (the vectorized loop's edges for 8- and 16-lane kernels), the widths of the published
                      models' video, audio, cross-modal and connector grids, and a few large ones.
                    - `gemma_inv_freq.<name>`: the inverse frequencies transformers' Gemma3RotaryEmbedding holds
                      for each layer type (base ** (arange(0, D, 2) / D), linear rope_scaling on global layers)
                      for params.gemma_inv_freq[<name>] = {head_dim, base, linear_factor}.
                    torch's vectorized linspace and pow round differently from the portable kernels (fused
                    multiply-adds, SLEEF's powf), by up to ~2e-3 rad in high-frequency angles: these cases pin both.
No weights and no inputs; the tolerance is exact.
"""

from __future__ import annotations

from pathlib import Path

import torch
from golden_case import GoldenCase, made_in_child_with_capability, with_measured_production

GROUPS = ("rope",)
GENERATOR = "tools/reference/make_rope_goldens.py"
EXACT = {"validation": {"atol": 0.0, "rtol": 0.0}, "production": {"atol": 0.0, "rtol": 0.0}}
KERNEL_SETS = ("avx512", "avx2", "default")

# (theta, n_axes, dim) of the published models' grids: LTX-2.3 22B and LTX-2 19B video (4096 wide, 3 axes), audio
# and cross-modal (2048, 1 axis), connectors (LTX-2.3: 4096 video / 2048 audio; LTX-2: 3840), plus larger widths.
PUBLISHED = {"video_4096": (10000.0, 3, 4096), "audio_2048": (10000.0, 1, 2048), "connector_3840": (10000.0, 1, 3840),
             "connector_4096": (10000.0, 1, 4096), "wide_8192": (10000.0, 1, 8192), "theta1e6_1024": (1e6, 1, 1024)}
# Gemma 3 (270M, 1B, 4B, 12B, 27B share head_dim 256 except 27B's 128): sliding layers base 1e4, global 1e6 with
# linear factor 8 (4B and up) or 1.
GEMMA = {"d256_local": (256, 10000.0, 1.0), "d256_global": (256, 1e6, 1.0), "d256_global_x8": (256, 1e6, 8.0),
         "d128_global_x8": (128, 1e6, 8.0), "d64_local": (64, 10000.0, 1.0)}


def _gemma_inv_freq(head_dim: int, base: float, factor: float) -> torch.Tensor:
    from transformers import Gemma3TextConfig
    from transformers.models.gemma3.modeling_gemma3 import Gemma3RotaryEmbedding

    scaling = {"rope_type": "linear", "factor": factor} if factor != 1.0 else {"rope_type": "default"}
    cfg = Gemma3TextConfig(head_dim=head_dim, hidden_size=head_dim * 2, num_attention_heads=2,
                           rope_parameters={"full_attention": {**scaling, "rope_theta": base},
                                            "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0}})
    return getattr(Gemma3RotaryEmbedding(cfg), "full_attention_inv_freq").clone()


def grids_case(kernel_set: str) -> GoldenCase:
    from ltx_core.model.transformer.rope import generate_freq_grid_np, generate_freq_grid_pytorch

    grids: dict[str, dict] = {}
    for n in range(1, 71):
        grids[f"f32_n{n}"] = {"theta": 10000.0, "n_axes": 3, "dim": 6 * n, "float64": False}
    for n in (1, 2, 10, 42, 70):
        grids[f"f64_n{n}"] = {"theta": 10000.0, "n_axes": 3, "dim": 6 * n, "float64": True}
    for name, (theta, axes, dim) in PUBLISHED.items():
        for f64 in (False, True):
            grids[f"{'f64' if f64 else 'f32'}_{name}"] = {"theta": theta, "n_axes": axes, "dim": dim, "float64": f64}
    outputs = {}
    for name, g in grids.items():
        make = generate_freq_grid_np if g["float64"] else generate_freq_grid_pytorch
        outputs[f"ltx_grid.{name}"] = make(g["theta"], g["n_axes"], g["dim"]).clone()
    gemma = {}
    for name, (d, base, factor) in GEMMA.items():
        gemma[name] = {"head_dim": d, "base": base, "linear_factor": factor}
        outputs[f"gemma_inv_freq.{name}"] = _gemma_inv_freq(d, base, factor)
    return GoldenCase(
        group="rope", case=f"freq_grids_{kernel_set}", component="rope_freq_grids",
        description=f"RoPE frequency grids (ltx-core float32 and float64, transformers Gemma 3 inverse frequencies) "
        f"made with torch's {kernel_set} CPU kernels (ATEN_CPU_CAPABILITY={kernel_set})",
        generator=GENERATOR, weights={}, weights_metadata={}, inputs={}, outputs=outputs,
        params={"ltx_grids": grids, "gemma_inv_freq": gemma}, tolerance=EXACT,
    )


def generate(out_root: Path, only_cases: set[str] | None, groups: set[str]) -> list[Path]:
    if "rope" not in groups:
        return []
    written = []
    for kernel_set in KERNEL_SETS:
        case = f"freq_grids_{kernel_set}"
        if only_cases is not None and case not in only_cases:
            continue
        made = made_in_child_with_capability(kernel_set, "rope", case, out_root)
        # No module and no dtype: the bf16 run is the float32 run, so production stays exact.
        written.append(made or with_measured_production(lambda: grids_case(kernel_set)).write(out_root))
    return written

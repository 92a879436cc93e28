"""Golden case for LoRA fusion into the DiT (component "dit_lora", group "dit").

A one-block LTX-2.3-style audio+video DiT (tiny_configs "ltx23", one block, half the widths) in bf16 and a rank-2 LoRA in the
official naming (`diffusion_model.<module>.lora_A.weight` / `.lora_B.weight`) on every Linear of the model
(attention q/k/v/out/gate of self, cross and A<->V attention, feed-forwards, every AdaLN and timestep embedder,
patchify, proj_out). ltx-core fuses it exactly as ltx_pipelines does for `--lora PATH STRENGTH`:
SingleGPUModelBuilder(model_sd_ops=LTXV_MODEL_COMFY_RENAMING_MAP).lora(path, strength,
LTXV_LORA_COMFY_RENAMING_MAP).build(dtype=bf16), i.e. loader/fuse_loras.py apply_loras.

The LoRA's values are small dyadic numbers (A in {-4..4}/16, B in {-4..4}/32, strength 0.75, rank 2), so B·strength,
B·A and W + delta are exact before the final rounding of W + delta to bf16: the fused weights are then defined
by one rounding, whatever order the arithmetic takes, and the engine must reproduce them bit for bit. The fused
model runs in f32 (its bf16 weights widened) on inputs made as make_dit_goldens.py makes them.

weights.safetensors holds the base checkpoint (model.diffusion_model.*, bf16 values stored as f32) and the LoRA
file's tensors under the prefix "lora." (bf16 values stored as f32). Expected: the model outputs
(<stream>.velocity / .denoised) and, as intermediates, the fused weights of one module per family
("fused.<module>.weight").
"""

from __future__ import annotations

import copy
import sys
import tempfile
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))

from golden_case import (  # noqa: E402
    GoldenCase,
    canonical_json,
    name_seed,
    reference_dtype,
    seeded_init_,
    with_measured_production,
    write_safetensors,
)
from tiny_configs import checkpoint_config  # noqa: E402

GROUPS = ("dit",)
GENERATOR = "tools/reference/make_lora_goldens.py"
PREFIX = "model.diffusion_model."
LORA_PREFIX = "lora."
STRENGTH = 0.75
RANK = 2
CONTEXT_TOKENS = 8
# Fused weights are exact (see above) and compared at this tolerance too, where it is far below one bf16 step of
# any of them. The outputs: the engine holds bf16 resident weights in both precisions here (ltx-core fuses into
# bf16 only), so its DiT runs the production path; the dit cases' production tolerance.
TOLERANCE = {"validation": {"atol": 8e-2, "rtol": 8e-2}, "production": {"atol": 8e-2, "rtol": 8e-2}}
FAMILIES = [
    "patchify_proj",
    "audio_patchify_proj",
    "adaln_single.emb.timestep_embedder.linear_2",
    "prompt_adaln_single.linear",
    "av_ca_a2v_gate_adaln_single.linear",
    "proj_out",
    "transformer_blocks.0.attn1.to_q",
    "transformer_blocks.0.attn2.to_gate_logits",
    "transformer_blocks.0.audio_attn1.to_out.0",
    "transformer_blocks.0.audio_to_video_attn.to_k",
    "transformer_blocks.0.video_to_audio_attn.to_v",
    "transformer_blocks.0.ff.net.0.proj",
    "transformer_blocks.0.audio_ff.net.2",
]


def small_dyadic(shape, seed: int, denominator: float) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return (torch.randint(-4, 5, tuple(shape), generator=g).to(torch.float32) / denominator).to(torch.bfloat16)


def seeded_normal_bf16(shape, seed: int, scale: float) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(tuple(shape), generator=g) * scale).to(torch.bfloat16)


def make_lora(model: torch.nn.Module, dyadic: bool = True, seed: int = 7000, rank: int = RANK) -> dict[str, torch.Tensor]:
    lora = {}
    for name, module in model.named_modules():
        if not isinstance(module, torch.nn.Linear):
            continue
        out_f, in_f = module.weight.shape
        if dyadic:
            a = small_dyadic((rank, in_f), name_seed(seed, name + ".A"), 16.0)
            b = small_dyadic((out_f, rank), name_seed(seed, name + ".B"), 32.0)
        else:  # deltas of the weights' own size, in no bf16 grid
            a = seeded_normal_bf16((rank, in_f), name_seed(seed, name + ".A"), 0.5)
            b = seeded_normal_bf16((out_f, rank), name_seed(seed, name + ".B"), 0.5 / in_f**0.5)
        lora[f"diffusion_model.{name}.lora_A.weight"] = a
        lora[f"diffusion_model.{name}.lora_B.weight"] = b
    return lora


def tiny_lora_model():
    from ltx_core.model.transformer import LTXModelConfigurator

    cfg = copy.deepcopy(checkpoint_config("ltx23"))
    # Narrower than the dit cases so the case stays small: video 2 heads x 8, audio 2 heads x 4, one block.
    cfg["transformer"].update(
        num_layers=1, attention_head_dim=8, cross_attention_dim=16, audio_attention_head_dim=4,
        audio_cross_attention_dim=8,
    )
    model = LTXModelConfigurator.from_config(cfg).to_empty(device="cpu").float().eval()
    seeded_init_(model, seed=4000)
    return model, cfg


def fuse_with_ltx_core(cfg, base: dict, loras: list[tuple[dict, float]]) -> dict[str, torch.Tensor]:
    """ltx_pipelines' `--lora PATH STRENGTH ...`: SingleGPUModelBuilder(...).lora(...)... .build(dtype=bf16)."""
    from ltx_core.loader import LTXV_LORA_COMFY_RENAMING_MAP
    from ltx_core.loader.single_gpu_model_builder import SingleGPUModelBuilder
    from ltx_core.model.transformer import LTXV_MODEL_COMFY_RENAMING_MAP, LTXModelConfigurator

    with tempfile.TemporaryDirectory() as tmp:
        ckpt = Path(tmp) / "model.safetensors"
        write_safetensors(ckpt, base, {"config": canonical_json(cfg)})
        builder = SingleGPUModelBuilder(
            model_class_configurator=LTXModelConfigurator,
            model_path=str(ckpt),
            model_sd_ops=LTXV_MODEL_COMFY_RENAMING_MAP,
        )
        for i, (lora, strength) in enumerate(loras):
            path = Path(tmp) / f"lora{i}.safetensors"
            write_safetensors(path, lora, {})
            builder = builder.lora(str(path), strength, LTXV_LORA_COMFY_RENAMING_MAP)
        fused_model = builder.build(device=torch.device("cpu"), dtype=torch.bfloat16)
    return fused_model


def run() -> GoldenCase:
    from ltx_core.model.transformer.model import X0Model

    from make_dit_goldens import _modality, make_states, seeded_randn

    model, cfg = tiny_lora_model()
    base = {PREFIX + k: v.to(torch.bfloat16) for k, v in model.state_dict().items()}
    lora = make_lora(model)
    fused_model = fuse_with_ltx_core(cfg, base, [(lora, STRENGTH)])
    fused = {k: v.detach().clone() for k, v in fused_model.state_dict().items()}
    changed = [k for k in fused if k.endswith(".weight") and not torch.equal(fused[k], base[PREFIX + k])]
    n_linear = sum(isinstance(m, torch.nn.Linear) for m in model.modules())
    if len(changed) != n_linear:
        raise RuntimeError(f"LoRA changed {len(changed)} weights, the model has {n_linear} Linears")
    # float32 for the case; bf16 (as built) in the run that measures the production tolerance.
    fused_model = fused_model.to(reference_dtype()).eval()

    b, sigma_v, sigma_a = 1, 0.6, 0.45
    v_state, a_state, _ = make_states(b, 10_000, sigma_v, sigma_a)
    tcfg = cfg["transformer"]
    v_ctx_dim = tcfg.get("caption_channels", tcfg["num_attention_heads"] * tcfg["attention_head_dim"])
    a_ctx_dim = tcfg.get("caption_channels", tcfg["audio_num_attention_heads"] * tcfg["audio_attention_head_dim"])
    v_ctx = seeded_randn((b, CONTEXT_TOKENS, v_ctx_dim), 20_000)
    a_ctx = seeded_randn((b, CONTEXT_TOKENS, a_ctx_dim), 30_000)
    video, audio = _modality(v_state, v_ctx, sigma_v, b), _modality(a_state, a_ctx, sigma_a, b)
    with torch.no_grad():
        velocity = {}
        handle = fused_model.register_forward_hook(
            lambda _m, _a, out: velocity.update({k: v for k, v in zip(("video", "audio"), out) if v is not None})
        )
        denoised_v, denoised_a = X0Model(fused_model)(video, audio, None)
        handle.remove()

    inputs, outputs = {}, {}
    for name, mod, den in (("video", video, denoised_v), ("audio", audio, denoised_a)):
        inputs.update(
            {
                f"{name}.latent": mod.latent,
                f"{name}.sigma": mod.sigma,
                f"{name}.timesteps": mod.timesteps,
                f"{name}.positions": mod.positions,
                f"{name}.context": mod.context,
            }
        )
        outputs[f"{name}.velocity"] = velocity[name]
        outputs[f"{name}.denoised"] = den
    weights = {**base, **{LORA_PREFIX + k: v for k, v in lora.items()}}
    return GoldenCase(
        group="dit",
        case="lora_official",
        component="dit_lora",
        description="LTX-2.3-style one-block AV DiT (bf16) with a rank-2 official-naming LoRA on every Linear, fused "
        "by ltx-core's SingleGPUModelBuilder at strength 0.75; the fused model's x0 step at video sigma 0.6, audio "
        "sigma 0.45.",
        generator=GENERATOR,
        weights=weights,
        weights_metadata={"config": canonical_json(cfg)},
        inputs=inputs,
        outputs=outputs,
        intermediates={f"fused.{m}.weight": fused[f"{m}.weight"] for m in FAMILIES},
        params={
            "model_type": "audio_video",
            "weights_prefix": PREFIX,
            "lora_prefix": LORA_PREFIX,
            "lora_strength": STRENGTH,
            "resident_dtype": "bf16",
            "lora_dtype": "bf16",
            "fps": 24.0,
            "perturbations": [[]],
            "fusion": "ltx_core/loader/fuse_loras.py: W + (B * strength) @ A, no alpha; rounded to bf16",
        },
        tolerance=TOLERANCE,
    )


# Two LoRAs of random bf16 values (rank 4, strengths 0.8 and 0.35) whose deltas are in no bf16 grid: ltx-core
# rounds B·strength, each B·A, their sum and W + delta to bf16 in turn, and the engine must round the same way.
ROUNDING_LORAS = ((7100, 0.8), (7200, 0.35))
# One bf16 step is 2^-8 relative: a fused weight rounded at other points than ltx-core's misses by one or more.
ROUNDING_TOLERANCE = {"validation": {"atol": 1e-6, "rtol": 1e-3}, "production": {"atol": 1e-6, "rtol": 1e-3}}


def run_rounding() -> GoldenCase:
    model, cfg = tiny_lora_model()
    base = {PREFIX + k: v.to(torch.bfloat16) for k, v in model.state_dict().items()}
    loras = [(make_lora(model, dyadic=False, seed=seed, rank=4), strength) for seed, strength in ROUNDING_LORAS]
    fused = {k: v.detach().clone() for k, v in fuse_with_ltx_core(cfg, base, loras).state_dict().items()}
    linears = [n for n, m in model.named_modules() if isinstance(m, torch.nn.Linear)]
    weights = dict(base)
    for i, (lora, _) in enumerate(loras):
        weights.update({f"lora{i}.{k}": v for k, v in lora.items()})
    return GoldenCase(
        group="dit",
        case="lora_bf16_rounding",
        component="dit_lora",
        description="The one-block DiT of lora_official (bf16) with two rank-4 LoRAs of random bf16 values on every "
        "Linear (strengths 0.8 and 0.35), fused by ltx-core's SingleGPUModelBuilder: every fused weight, compared "
        "within a fraction of one bf16 step.",
        generator=GENERATOR,
        weights=weights,
        weights_metadata={"config": canonical_json(cfg)},
        inputs={},
        outputs={f"fused.{m}.weight": fused[f"{m}.weight"] for m in linears},
        intermediates={},
        params={
            "model_type": "audio_video",
            "weights_prefix": PREFIX,
            "loras": [{"prefix": f"lora{i}.", "strength": s} for i, (_, s) in enumerate(ROUNDING_LORAS)],
            "resident_dtype": "bf16",
            "lora_dtype": "bf16",
            "fusion": "ltx_core/loader/fuse_loras.py: per LoRA bf16(bf16(B * strength) @ A), their sum in bf16, "
            "then bf16(W + sum)",
        },
        tolerance=ROUNDING_TOLERANCE,
    )


CASES = {"lora_official": run, "lora_bf16_rounding": run_rounding}


def generate(out_root: Path, only_cases: set[str] | None, groups: set[str]) -> list[Path]:
    if "dit" not in groups:
        return []
    written = []
    for name, make in CASES.items():
        if only_cases is None or name in only_cases:
            torch.manual_seed(0)
            written.append(with_measured_production(make).write(out_root))
    return written

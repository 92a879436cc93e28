"""Golden cases for the dual-stream LTX DiT (ltx_core.model.transformer).

Models are built by ltx_core's LTXModelConfigurator / LTXVideoOnlyModelConfigurator from the tiny checkpoint
configs of tiny_configs.py. Inputs are made the way ltx_pipelines makes them: VideoLatentTools / AudioLatentTools
create the latent state and positions (patch size 1, fps 24, VAE scale factors 8/32/32, causal fix),
conditioning items are applied, GaussianNoiser noises the state, and ltx_pipelines.utils.helpers.
modality_from_latent_state builds each Modality (timesteps = denoise_mask * sigma, context_mask None). The model
runs wrapped in X0Model, so both the velocity (LTXModel output) and the denoised x0 are recorded.

Names (see tests/golden/README.md):
- inputs: "<stream>.latent" [B,T,C], "<stream>.sigma" [B], "<stream>.timesteps" [B,T,1], "<stream>.positions"
  [B,3,T,2] video (time in seconds, H/W in pixels) / [B,1,T,2] audio (seconds), "<stream>.context" [B,S,Dc],
  "<stream>.attention_mask" [B,T,T] in [0,1] when present; stream in {video, audio}.
- outputs: "<stream>.velocity", "<stream>.denoised".
- intermediates: "<module>.out" forward-hook outputs (AdaLN modules as ".out.modulation" and
  ".out.embedded_timestep"), "transformer_blocks.<i>.out.video|audio", the RoPE tables the preprocessors compute
  ("rope.<video|audio|video_cross|audio_cross>.cos|sin", [B,H,T,dh/2] for split RoPE, [B,T,D] interleaved) and the
  additive self-attention bias "self_attention_bias.video" [B,1,T,T] when a mask is present.
"""

from __future__ import annotations

import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))

from golden_case import (  # noqa: E402
    GoldenCase,
    Recorder,
    canonical_json,
    made_in_child_with_capability,
    module_to_reference,
    seeded_init_,
    seeded_randn,
    to_reference,
    with_measured_production,
)
from tiny_configs import checkpoint_config  # noqa: E402

GROUPS = ("dit",)
GENERATOR = "tools/reference/make_dit_goldens.py"
PREFIX = "model.diffusion_model."
FPS = 24.0
CONTEXT_TOKENS = 8
TOLERANCE = {"validation": {"atol": 2e-4, "rtol": 2e-4}, "production": {"atol": 8e-2, "rtol": 8e-2}}

# ltx-core 1.0.0 (MultiModalTransformerArgsPreprocessor.prepare): the A<->V cross-attention AdaLN of a stream is
# driven by the OTHER stream's scalar sigma, both for scale/shift and for the gate (spec section 3.6, the "2026-03"
# row; diffusers use_cross_timestep=True). The gate input is additionally scaled by
# av_ca_timestep_scale_multiplier / timestep_scale_multiplier.
AV_TIMESTEP_SEMANTICS = (
    "ltx-core 1.0.0: cross scale/shift AdaLN input = other stream's sigma [B] * timestep_scale_multiplier; cross gate "
    "AdaLN input = other stream's sigma * av_ca_timestep_scale_multiplier (config fallback 1); per-token timesteps "
    "are not used for A<->V modulation"
)


def build_model(style: str, video_only: bool, overrides: dict | None = None):
    from ltx_core.model.transformer.model_configurator import LTXModelConfigurator, LTXVideoOnlyModelConfigurator

    cfg = checkpoint_config(style)
    cfg["transformer"].update(overrides or {})
    configurator = LTXVideoOnlyModelConfigurator if video_only else LTXModelConfigurator
    model = configurator.from_config(cfg)
    # Caption projections are created on the meta device (filled by the checkpoint loader); materialise them.
    model = model.to_empty(device="cpu").float().eval()
    if list(model.named_buffers()):
        raise RuntimeError("unexpected buffers in LTXModel; they would not be in the weights file")
    # golden_case.default_init_value fits every DiT parameter, the torch.empty scale_shift_table* included.
    seeded_init_(model, seed=_model_seed(style, video_only))
    return module_to_reference(model), cfg  # ModelLedger(dtype=bf16) in the production-tolerance run


def _model_seed(style: str, video_only: bool) -> int:
    return {"ltx2": 1000, "ltx23": 2000, "legacy_video_only": 3000}[style] + (1 if video_only else 0)


# A legacy (interleaved, float32 grid) DiT, one block, wide enough (96 / 6 = 16 frequencies) that torch's kernel sets
# round its grid differently (the fused linspace); made once per kernel set (KERNEL_SET_CASES). The rope group's
# freq_grids cases pin every grid size, the vectorized pow's edges included.
WIDE_GRID = {"num_attention_heads": 2, "attention_head_dim": 48, "cross_attention_dim": 96, "num_layers": 1}
# Audio and video streams with different head counts (video 2 x 16, audio 4 x 4): each stream's cross-modal RoPE
# is laid out over its own heads while the A<->V attentions split the audio width into the audio stream's heads.
UNEQUAL_HEADS = {"audio_num_attention_heads": 4, "audio_attention_head_dim": 4, "audio_connector_num_attention_heads": 4,
                 "audio_connector_attention_head_dim": 4}


def make_states(b: int, seed: int, sigma_v: float, sigma_a: float | None, video_conditionings=(), audio_frozen=False,
                video_shape=(8, 2, 2, 3), audio_shape=(2, 5, 4)):
    """Latent states as the pipelines build them (create_noised_state), plus the clean latents. video_shape is
    (channels, frames, height, width), audio_shape (channels, frames, mel_bins)."""
    from ltx_core.components.noisers import GaussianNoiser
    from ltx_core.components.patchifiers import AudioPatchifier, VideoLatentPatchifier
    from ltx_core.tools import AudioLatentTools, VideoLatentTools
    from ltx_core.types import AudioLatentShape, VideoLatentShape
    from ltx_pipelines.utils.helpers import create_noised_state

    vshape = VideoLatentShape(b, *video_shape)
    vtools = VideoLatentTools(VideoLatentPatchifier(patch_size=1), vshape, FPS)
    v_clean = seeded_randn(vshape.to_torch_shape(), seed + 1)
    v_state = create_noised_state(
        tools=vtools,
        conditionings=list(video_conditionings),
        noiser=GaussianNoiser(torch.Generator().manual_seed(seed + 2)),
        dtype=torch.float32,
        device=torch.device("cpu"),
        noise_scale=sigma_v,
        initial_latent=v_clean,
    )
    a_state = None
    if sigma_a is not None:
        ashape = AudioLatentShape(b, *audio_shape)
        atools = AudioLatentTools(AudioPatchifier(patch_size=1), ashape)
        a_clean = seeded_randn(ashape.to_torch_shape(), seed + 3)
        a_state = create_noised_state(
            tools=atools,
            conditionings=[],
            noiser=GaussianNoiser(torch.Generator().manual_seed(seed + 4)),
            dtype=torch.float32,
            device=torch.device("cpu"),
            noise_scale=0.0 if audio_frozen else sigma_a,
            initial_latent=a_clean,
        )
        if audio_frozen:
            # ltx_pipelines 1.0.0 denoise_video_only (a2vid_two_stage): the encoded input audio is "noised" with
            # noise_scale 0 and its denoise mask set to 0; its Modality still gets the shared sigma.
            from dataclasses import replace

            a_state = replace(a_state, denoise_mask=torch.zeros_like(a_state.denoise_mask))
    return v_state, a_state, vtools


def _modality(state, context: torch.Tensor, sigma: float, b: int, enabled: bool = True):
    """modality_from_latent_state with sigma as a [B] tensor (Modality's documented shape). The pipelines pass a
    0-d sigma with batch 1; for batch > 1 the per-token timesteps are broadcast per sample explicitly, because
    denoise_mask [B,T,1] * sigma [B] would broadcast over the wrong axis."""
    from dataclasses import replace

    from ltx_pipelines.utils.helpers import modality_from_latent_state

    sigmas = torch.full((b,), sigma)
    # A bf16 pipeline holds the latent in bf16 (the denoise mask stays float32); positions stay float32 in the
    # measuring run too (golden_case.float32_positions says why). Unchanged in the float32 run.
    state = replace(state, latent=to_reference(state.latent))
    mod = modality_from_latent_state(state, to_reference(context), sigmas, enabled=enabled)
    if b > 1:
        mod = replace(mod, timesteps=state.denoise_mask * sigmas.view(b, 1, 1))
    return mod


def _perturbations(spec: list[list[tuple[str, list[int] | None]]] | None, b: int):
    from ltx_core.guidance.perturbations import (
        BatchedPerturbationConfig,
        Perturbation,
        PerturbationConfig,
        PerturbationType,
    )

    if spec is None:
        return BatchedPerturbationConfig.empty(b)
    return BatchedPerturbationConfig(
        [PerturbationConfig([Perturbation(PerturbationType(t), blocks) for t, blocks in sample]) for sample in spec]
    )


def _adaln_pick(output):
    mod, emb = output
    return {"modulation": mod, "embedded_timestep": emb}


def run_and_record(model, video, audio, pert) -> tuple[dict, dict, dict]:
    """One X0Model(model) call on the given Modalities (audio may be None): the inputs it consumed, the velocity and
    denoised outputs, and the intermediates named in the module docstring."""
    from ltx_core.model.transformer.model import X0Model

    has_audio = audio is not None
    rec = Recorder()
    blocks = len(model.transformer_blocks)
    rec.capture(
        model,
        {f"transformer_blocks.{i}": "out" for i in range(blocks)},
        pick=lambda out: {k: v.x for k, v in zip(("video", "audio"), out) if v is not None},
    )
    modules = dict(model.named_modules())
    block0 = ["attn1", "attn2", "ff", "audio_attn1", "audio_attn2", "audio_ff", "audio_to_video_attn", "video_to_audio_attn"]
    rec.capture(model, {f"transformer_blocks.0.{m}": "out" for m in block0 if f"transformer_blocks.0.{m}" in modules})
    rec.capture(model, {m: "out" for m in ("patchify_proj", "audio_patchify_proj", "caption_projection", "audio_caption_projection") if m in modules})
    adaln = [
        "adaln_single",
        "audio_adaln_single",
        "prompt_adaln_single",
        "audio_prompt_adaln_single",
        "av_ca_video_scale_shift_adaln_single",
        "av_ca_audio_scale_shift_adaln_single",
        "av_ca_a2v_gate_adaln_single",
        "av_ca_v2a_gate_adaln_single",
    ]
    rec.capture(model, {m: "out" for m in adaln if m in modules}, pick=_adaln_pick)
    with torch.no_grad():
        velocity = {}
        handle = model.register_forward_hook(
            lambda _m, _a, out: velocity.update({k: v for k, v in zip(("video", "audio"), out) if v is not None})
        )
        denoised_v, denoised_a = X0Model(model)(video, audio, pert)
        handle.remove()
    rec.close()

    # The RoPE tables and the additive self-attention bias the preprocessors computed (pure functions of the
    # inputs; recomputed here because the preprocessors are not modules and cannot be hooked).
    with torch.no_grad():
        v_args = model.video_args_preprocessor.prepare(video, audio)
        rec.add("rope.video.cos", v_args.positional_embeddings[0])
        rec.add("rope.video.sin", v_args.positional_embeddings[1])
        if v_args.self_attention_mask is not None:
            rec.add("self_attention_bias.video", v_args.self_attention_mask)
        if has_audio:
            a_args = model.audio_args_preprocessor.prepare(audio, video)
            rec.add("rope.audio.cos", a_args.positional_embeddings[0])
            rec.add("rope.audio.sin", a_args.positional_embeddings[1])
            rec.add("rope.video_cross.cos", v_args.cross_positional_embeddings[0])
            rec.add("rope.video_cross.sin", v_args.cross_positional_embeddings[1])
            rec.add("rope.audio_cross.cos", a_args.cross_positional_embeddings[0])
            rec.add("rope.audio_cross.sin", a_args.cross_positional_embeddings[1])

    inputs, outputs = {}, {}
    for name, mod, den in (("video", video, denoised_v), ("audio", audio, denoised_a)):
        if mod is None:
            continue
        inputs.update(
            {
                f"{name}.latent": mod.latent,
                f"{name}.sigma": mod.sigma,
                f"{name}.timesteps": mod.timesteps,
                f"{name}.positions": mod.positions,
                f"{name}.context": mod.context,
            }
        )
        if mod.attention_mask is not None:
            inputs[f"{name}.attention_mask"] = mod.attention_mask
        outputs[f"{name}.velocity"] = velocity[name]
        outputs[f"{name}.denoised"] = den

    return inputs, outputs, rec.values


def run_case(
    case: str,
    description: str,
    style: str,
    video_only: bool,
    b: int = 1,
    sigma_v: float = 0.6,
    sigma_a: float = 0.6,
    seed: int = 0,
    video_conditionings=(),
    audio_frozen: bool = False,
    perturbations: list | None = None,
    extra_params: dict | None = None,
    overrides: dict | None = None,
    enabled: dict[str, bool] | None = None,
) -> GoldenCase:
    model, cfg = build_model(style, video_only, overrides)
    tcfg = cfg["transformer"]
    has_audio = not video_only
    v_state, a_state, _ = make_states(
        b, 10_000 + seed, sigma_v, sigma_a if has_audio else None, video_conditionings, audio_frozen
    )

    v_ctx_dim = tcfg.get("caption_channels", tcfg["num_attention_heads"] * tcfg["attention_head_dim"])
    a_ctx_dim = tcfg.get("caption_channels", tcfg["audio_num_attention_heads"] * tcfg["audio_attention_head_dim"])
    v_ctx = seeded_randn((b, CONTEXT_TOKENS, v_ctx_dim), 20_000 + seed)
    enabled = enabled or {}
    video = _modality(v_state, v_ctx, sigma_v, b, enabled.get("video", True))
    audio = None
    if has_audio:
        a_ctx = seeded_randn((b, CONTEXT_TOKENS, a_ctx_dim), 30_000 + seed)
        audio = _modality(a_state, a_ctx, sigma_a, b, enabled.get("audio", True))
    pert = _perturbations(perturbations, b)

    inputs, outputs, intermediates = run_and_record(model, video, audio, pert)

    params = {
        "style": {"ltx2": "LTX-2.0", "ltx23": "LTX-2.3", "legacy_video_only": "LTX-2.0 (legacy RoPE fallbacks)"}[style],
        "model_type": "video_only" if video_only else "audio_video",
        "weights_prefix": PREFIX,
        "fps": FPS,
        "video_latent_shape": [b, 8, 2, 2, 3],
        "perturbations": perturbations or [[] for _ in range(b)],
        "context_mask": None,
        "denoised": "x0 = latent - velocity * timesteps per token, in fp32 (X0Model / to_denoised)",
    }
    if has_audio:
        params["audio_latent_shape"] = [b, 2, 5, 4]
        params["av_timestep_semantics"] = AV_TIMESTEP_SEMANTICS
    if enabled:
        params["enabled"] = {"video": enabled.get("video", True), "audio": enabled.get("audio", True)}
    params.update(extra_params or {})
    weights = {PREFIX + k: v for k, v in model.state_dict().items()}
    return GoldenCase(
        group="dit",
        case=case,
        component="dit",
        description=description,
        generator=GENERATOR,
        weights=weights,
        weights_metadata={"config": canonical_json(cfg)},
        inputs=inputs,
        outputs=outputs,
        intermediates=intermediates,
        params=params,
        tolerance=TOLERANCE,
    )


def _first_frame(b: int, strength: float):
    from ltx_core.conditioning.types.latent_cond import VideoConditionByLatentIndex

    return VideoConditionByLatentIndex(latent=seeded_randn((b, 8, 1, 2, 3), 40_001), strength=strength, latent_idx=0)


def _keyframes(b: int):
    from ltx_core.conditioning.types.attention_strength_wrapper import ConditioningItemAttentionStrengthWrapper
    from ltx_core.conditioning.types.keyframe_cond import VideoConditionByKeyframeIndex

    first = ConditioningItemAttentionStrengthWrapper(
        VideoConditionByKeyframeIndex(keyframes=seeded_randn((b, 8, 1, 2, 3), 40_002), frame_idx=0, strength=1.0),
        attention_mask=torch.tensor([[1.0, 0.5, 0.0, 0.25, 0.75, 0.5]] * b),
    )
    second = VideoConditionByKeyframeIndex(keyframes=seeded_randn((b, 8, 1, 2, 3), 40_003), frame_idx=9, strength=0.8)
    return [first, second]


CASES = {
    "ltx2_av": lambda: run_case(
        "ltx2_av",
        "LTX-2.0-style audio+video DiT (2 blocks, caption projections inside, no gated attention, no cross-attention "
        "AdaLN, av_ca_timestep_scale_multiplier absent -> 1), text-to-video step at sigma 0.6.",
        "ltx2",
        video_only=False,
    ),
    "ltx2_video_only": lambda: run_case(
        "ltx2_video_only",
        "LTX-2.0-style video-only DiT (LTXVideoOnlyModelConfigurator), sigma 0.6.",
        "ltx2",
        video_only=True,
    ),
    "legacy_video_only": lambda: run_case(
        "legacy_video_only",
        "LTX-2.0-style video-only DiT with the config fallbacks rope_type=interleaved and a float32 frequency grid "
        "(no frequencies_precision key), sigma 0.6.",
        "legacy_video_only",
        video_only=True,
    ),
    "ltx23_av": lambda: run_case(
        "ltx23_av",
        "LTX-2.3-style audio+video DiT (gated attention, cross-attention AdaLN with prompt AdaLN, context already "
        "projected), text-to-video step with video sigma 0.6 and audio sigma 0.45.",
        "ltx23",
        video_only=False,
        sigma_a=0.45,
    ),
    "ltx23_video_only": lambda: run_case(
        "ltx23_video_only",
        "LTX-2.3-style video-only DiT, sigma 0.6.",
        "ltx23",
        video_only=True,
    ),
    "ltx23_av_first_frame": lambda: run_case(
        "ltx23_av_first_frame",
        "LTX-2.3 audio+video with the first latent frame conditioned (VideoConditionByLatentIndex, strength 1.0): "
        "its tokens have timestep 0 (per-token AdaLN) and denoised = latent.",
        "ltx23",
        video_only=False,
        seed=1,
        video_conditionings=[_first_frame(1, 1.0)],
    ),
    "ltx23_av_frozen_audio": lambda: run_case(
        "ltx23_av_frozen_audio",
        "LTX-2.3 audio+video as in ltx-pipelines 1.0.0 audio-to-video: clean audio latent with denoise mask 0 "
        "(timesteps 0) but the shared sigma 0.6 in its Modality, video sigma 0.6.",
        "ltx23",
        video_only=False,
        seed=2,
        audio_frozen=True,
    ),
    "ltx23_av_stg": lambda: run_case(
        "ltx23_av_stg",
        "LTX-2.3 audio+video STG pass as multi_modal_guider_denoising_func runs it (batch 1, every sample "
        "perturbed): video and audio self-attention skipped in block 1, so attn1/audio_attn1 return "
        "to_out(value projection) and q/k are never computed.",
        "ltx23",
        video_only=False,
        seed=3,
        perturbations=[[("skip_video_self_attn", [1]), ("skip_audio_self_attn", [1])]],
    ),
    "ltx23_av_isolated": lambda: run_case(
        "ltx23_av_isolated",
        "LTX-2.3 audio+video modality-isolation pass (batch 1): a2v and v2a cross-attention skipped in every block.",
        "ltx23",
        video_only=False,
        seed=4,
        perturbations=[[("skip_a2v_cross_attn", None), ("skip_v2a_cross_attn", None)]],
    ),
    "ltx23_av_batch_mixed": lambda: run_case(
        "ltx23_av_batch_mixed",
        "LTX-2.3 audio+video, batch of 3 guidance passes in one call: sample 0 unperturbed, sample 1 STG in block 1 "
        "(per-sample blend out*m + v*(1-m) with m=0), sample 2 modality isolation (a2v/v2a residuals times a "
        "per-sample 0 mask). Batching the passes is not what the pipelines do; it pins the per-sample masks.",
        "ltx23",
        video_only=False,
        b=3,
        seed=6,
        perturbations=[
            [],
            [("skip_video_self_attn", [1]), ("skip_audio_self_attn", [1])],
            [("skip_a2v_cross_attn", None), ("skip_v2a_cross_attn", None)],
        ],
    ),
    "ltx23_av_keyframes": lambda: run_case(
        "ltx23_av_keyframes",
        "LTX-2.3 audio+video with two appended keyframes (VideoConditionByKeyframeIndex): 6 tokens at frame 0 "
        "(strength 1.0, causal fix) wrapped in ConditioningItemAttentionStrengthWrapper with a per-token attention "
        "mask containing 0, fractions and 1, then 6 tokens at pixel frame 9 (strength 0.8, no causal fix). The "
        "[B,24,24] self-attention mask is an input; the model turns it into a log-space bias.",
        "ltx23",
        video_only=False,
        seed=5,
        video_conditionings=_keyframes(1),
        extra_params={
            "keyframe_time_span": "a one-frame keyframe at pixel frame k spans [k, k+8) before /fps (no causal fix "
            "unless k == 0), as ltx-core 1.0.0 computes it",
            "self_attention_bias": "mask > 0 -> log(mask) (clamped at finfo.tiny), mask == 0 -> finfo(float32).min",
        },
    ),
}


for _set in ("avx512", "default"):
    CASES[f"legacy_wide_grid_{_set}"] = (lambda s: lambda: run_case(
        f"legacy_wide_grid_{s}",
        f"LTX-2.0 legacy DiT (interleaved RoPE, float32 frequency grid) 96 wide, one block, made with torch's {s} "
        "CPU kernels: its 16-frequency grid rounds differently per kernel set (the fused linspace), which moves "
        "high-frequency angles by up to ~1e-3.",
        "legacy_video_only",
        video_only=True,
        seed=7,
        overrides=WIDE_GRID,
    ))(_set)
# The kernel set each case must be made with (torch reads ATEN_CPU_CAPABILITY once per process).
KERNEL_SET_CASES = {"legacy_wide_grid_avx512": "avx512", "legacy_wide_grid_default": "default"}
# A guider that skips a step for one stream only runs the DiT with that stream's Modality disabled
# (helpers.py:multi_modal_guider_denoising_func, enabled=not should_skip_step): its blocks leave it unchanged, while
# it still feeds the other stream's A<->V attention.
for _stream in ("video", "audio"):
    CASES[f"ltx23_av_{_stream}_disabled"] = (lambda s: lambda: run_case(
        f"ltx23_av_{s}_disabled",
        f"LTX-2.3 audio+video DiT with the {s} Modality disabled (enabled=False, as for a step only the {s} "
        f"guider skips): the {s} stream's self-, text and A<->V attention into it and its feed-forward are skipped, "
        "the other stream runs in full, attending to it.",
        "ltx23",
        video_only=False,
        seed=9 if s == "video" else 10,
        enabled={s: False},
    ))(_stream)
CASES["ltx23_av_unequal_heads"] = lambda: run_case(
    "ltx23_av_unequal_heads",
    "LTX-2.3 audio+video DiT whose streams have different head counts (video 2 x 16, audio 4 x 4), which "
    "ltx-core's configurator accepts: the video cross-modal RoPE is laid out over 2 heads of 8, the audio one over "
    "4 heads of 4, and the A<->V attentions use the audio stream's 4 heads.",
    "ltx23",
    video_only=False,
    seed=8,
    overrides=UNEQUAL_HEADS,
)


def generate(out_root: Path, only_cases: set[str] | None, groups: set[str]) -> list[Path]:
    if "dit" not in groups:
        return []
    written = []
    for name, make in CASES.items():
        if only_cases is None or name in only_cases:
            if name in KERNEL_SET_CASES:
                made = made_in_child_with_capability(KERNEL_SET_CASES[name], "dit", name, out_root)
                if made is not None:
                    written.append(made)
                    continue
            torch.manual_seed(0)
            written.append(with_measured_production(make).write(out_root))
    return written

"""Latent upsampler golden cases (group `upsampler`): ×2 spatial with both heads, ×1.5 spatial, ×2 temporal.

The weights file is laid out like a real upsampler file: keys with no prefix and the flat `config` metadata that
`LatentUpsamplerConfigurator` reads. The case runs the official `upsample_video` as the pipelines do: un-normalise
the (normalised) latent with the VAE encoder's per-channel statistics, run the upsampler, normalise again. The
statistics belong to the main checkpoint, so they are inputs here, under their checkpoint names
`vae.per_channel_statistics.{mean-of-means,std-of-means}`.

Component `latent_upsampler`; input `latent` [B,C,F,H,W]; output `latent` upsampled and re-normalised.
Intermediates: `initial_conv.in.x` (un-normalised input), `initial_conv.out`, `initial_norm.out`,
`res_blocks.{i}.out`, the head (`upsampler.0.out` conv and `upsampler.1.out` pixel shuffle for the plain heads;
`upsampler.conv.out`, `upsampler.pixel_shuffle.out`, `upsampler.blur_down.out` for the rational resampler; the 2-D
heads work per frame, so these are [B·F, C, H, W]; the temporal head's `upsampler.1.out` still holds the first
frame that the model then drops), `post_upsample_res_blocks.{i}.out`, `final_conv.out` (raw upsampled latent).
params.variant names the head.
"""

from __future__ import annotations

from pathlib import Path

import torch
from component_roundtrip import roundtrip, stats_rule
from golden_case import (
    GoldenCase,
    Recorder,
    canonical_json,
    name_seed,
    module_to_reference,
    seeded_randn,
    to_reference,
    with_measured_production,
)
from ltx_core.model.upsampler import LatentUpsamplerConfigurator, upsample_video
from ltx_core.model.video_vae import VideoEncoderConfigurator

GROUPS = ("upsampler",)
GENERATOR = "tools/reference/make_upsampler_goldens.py"
TOLERANCE = {"validation": {"atol": 1e-4, "rtol": 1e-4}, "production": {"atol": 5e-2, "rtol": 5e-2}}
LATENT_CHANNELS = 4


def upsampler_config(blocks: int, spatial: bool, temporal: bool, scale: float, rational: bool) -> dict:
    # mid_channels 32: the smallest width GroupNorm(32) allows (real files: 1024).
    return {
        "_class_name": "LatentUpsampler",
        "in_channels": LATENT_CHANNELS,
        "mid_channels": 32,
        "num_blocks_per_stage": blocks,
        "dims": 3,
        "spatial_upsample": spatial,
        "temporal_upsample": temporal,
        "spatial_scale": scale,
        "rational_resampler": rational,
    }


# (config, latent shape, seed, description). Only the first case has res blocks (the same ResBlock code runs in
# every variant); the others keep the size budget and exercise the heads.
VARIANTS = {
    "spatial_x2": (
        upsampler_config(1, True, False, 2.0, False), (1, LATENT_CHANNELS, 2, 3, 4), 2000,
        "LTX-2.3 x2 spatial head (upsampler.0 Conv2d -> PixelShuffle 2x2 per frame), 1 res block per stage",
    ),
    "spatial_x2_rational": (
        upsampler_config(0, True, False, 2.0, True), (1, LATENT_CHANNELS, 2, 3, 4), 2100,
        "LTX-2.0 x2 spatial head (rational resampler 2/1: upsampler.conv -> shuffle, blur stride 1 = no-op)",
    ),
    "spatial_x1_5": (
        upsampler_config(0, True, False, 1.5, True), (1, LATENT_CHANNELS, 2, 4, 4), 2200,
        "x1.5 spatial (rational 3/2: conv -> shuffle 3x3 -> 5x5 binomial blur, stride 2)",
    ),
    "temporal_x2": (
        upsampler_config(0, False, True, 2.0, False), (1, LATENT_CHANNELS, 3, 2, 3), 2300,
        "x2 temporal (Conv3d -> PixelShuffle over frames, first frame dropped: F -> 2F-1)",
    ),
}


def vae_statistics(seed: int) -> torch.nn.Module:
    """A VideoEncoder with no blocks: `upsample_video` only uses its per_channel_statistics."""
    enc = VideoEncoderConfigurator.from_config({"vae": {"latent_channels": LATENT_CHANNELS, "encoder_blocks": []}})
    with torch.no_grad():
        for name, buf in enc.per_channel_statistics.named_buffers():
            buf.copy_(stats_rule(name, tuple(buf.shape), name_seed(seed, "vae.per_channel_statistics." + name)))
    return enc


def upsampler_case(variant: str) -> GoldenCase:
    config, shape, seed, description = VARIANTS[variant]
    model, weights = roundtrip(config, LatentUpsamplerConfigurator, None, lambda k: k, seed)
    encoder = module_to_reference(vae_statistics(seed + 1))  # ModelLedger builds the encoder in its dtype
    latent = seeded_randn(shape, seed + 2)
    rec = Recorder()
    heads = [n for n, _ in model.named_modules() if n.startswith("upsampler.")]
    paths = ["initial_conv", "initial_norm", *[f"res_blocks.{i}" for i in range(len(model.res_blocks))], *heads,
             *[f"post_upsample_res_blocks.{i}" for i in range(len(model.post_upsample_res_blocks))], "final_conv"]
    rec.capture(model, {p: "out" for p in paths})
    pre = model.initial_conv.register_forward_pre_hook(lambda _m, a: rec.add("initial_conv.in.x", a[0]))
    with torch.no_grad():
        out = upsample_video(to_reference(latent), encoder, model)
    rec.close()
    pre.remove()
    stats = encoder.per_channel_statistics
    inputs = {
        "latent": latent,
        "vae.per_channel_statistics.mean-of-means": stats.get_buffer("mean-of-means").clone(),
        "vae.per_channel_statistics.std-of-means": stats.get_buffer("std-of-means").clone(),
    }
    return GoldenCase(
        group="upsampler", case=variant, component="latent_upsampler", description=description,
        generator=GENERATOR, weights=weights, weights_metadata={"config": canonical_json(config)}, inputs=inputs,
        outputs={"latent": out}, intermediates=rec.values, params={"variant": variant}, tolerance=TOLERANCE,
    )


def generate(out_root: Path, only_cases: set[str] | None, groups: set[str]) -> list[Path]:
    if "upsampler" not in groups:
        return []
    return [with_measured_production(lambda v=v: upsampler_case(v)).write(out_root) for v in VARIANTS
            if only_cases is None or v in only_cases]

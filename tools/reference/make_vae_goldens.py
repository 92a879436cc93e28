"""Video VAE golden cases (group `vae`): encoder and decoder of the LTX-2.0 and LTX-2.3 styles, tiny widths.

Each case builds the official module from a `{"vae": {...}}` config with the structure of a real checkpoint's
metadata, through ltx-core's configurator and checkpoint loader (see component_roundtrip.py). Weights carry the
real checkpoint names: `vae.encoder.*` / `vae.decoder.*` and the shared `vae.per_channel_statistics.*`.

Components and params
  video_vae_encoder  input `video` [B,3,F,H,W] in [-1,1]; output `latent` = normalised means [B,C,F',H',W'].
                     params.frames_cropped: frames the encoder drops because (F-1) % 8 != 0.
  video_vae_decoder  input `latent` (normalised); output `video` [B,3,8(F'-1)+1,32H',32W'] in about [-1,1].
                     With timestep conditioning the official decoder draws noise from a torch.Generator:
                     the drawn standard-normal tensors are recorded as inputs (`noise.latent` [B,C,F',H',W'],
                     `up_blocks.{i}.res_blocks.{j}.noise{1,2}` [H,W] for blocks with inject_noise) in draw order
                     (params.noise_draw_order); params.timestep / decode_noise_scale give the scalars used.

Intermediates: `conv_in.in.x` (decoder: the un-normalised latent), `conv_in.out`, every `down_blocks.{i}` /
`up_blocks.{i}` output and every `res_blocks.{j}` inside them, `conv_norm_out.out`, encoder `conv_out.out`
(means + the shared log-variance channel), decoder time embedders `*.time_embedder.out`, `last_time_embedder.out`.
"""

from __future__ import annotations

from pathlib import Path

import torch
from component_roundtrip import roundtrip, stats_rule
from golden_case import GoldenCase, Recorder, canonical_json, record_randn, seeded_uniform, to_reference, with_measured_production
from ltx_core.model.video_vae import (
    VAE_DECODER_COMFY_KEYS_FILTER,
    VAE_ENCODER_COMFY_KEYS_FILTER,
    VideoDecoderConfigurator,
    VideoEncoderConfigurator,
)

GROUPS = ("vae",)
GENERATOR = "tools/reference/make_vae_goldens.py"
STATS = ("per_channel_statistics.mean-of-means", "per_channel_statistics.std-of-means")
TOLERANCE = {"validation": {"atol": 1e-4, "rtol": 1e-4}, "production": {"atol": 5e-2, "rtol": 5e-2}}


def res(n: int) -> list:
    return ["res_x", {"num_layers": n}]


def comp(name: str, multiplier: int, **extra) -> list:
    return [name, {"multiplier": multiplier, **extra}]


# LTX-2.0 layout: encoder widths double four times (C → 16C), decoder three residual compress_all(m2),
# no spatial_padding_mode key (ltx-core then pads the encoder with zeros and the decoder with reflect).
CONFIG_2_0 = {
    "vae": {
        "_class_name": "CausalVideoAutoencoder",
        "dims": 3,
        "in_channels": 3,
        "out_channels": 3,
        "latent_channels": 2,
        "patch_size": 4,
        "norm_layer": "pixel_norm",
        "latent_log_var": "uniform",
        "causal_decoder": False,
        "timestep_conditioning": False,
        # The residual path of compress_all needs channels divisible by 8 at every stage: base 4 (32→16→8→4).
        "decoder_base_channels": 4,
        "encoder_blocks": [
            res(1), comp("compress_space_res", 2), res(1), comp("compress_time_res", 2), res(1),
            comp("compress_all_res", 2), res(1), comp("compress_all_res", 2), res(1),
        ],
        # Listed encoder-side, reversed by the decoder; layer counts differ so a missed reversal shows.
        "decoder_blocks": [
            res(1), comp("compress_all", 2, residual=True), res(2), comp("compress_all", 2, residual=True),
            res(1), comp("compress_all", 2, residual=True), res(1),
        ],
    }
}

# LTX-2.3 layout: space/time/all blocks, last encoder compression m1, non-residual decoder, zero padding.
CONFIG_2_3 = {
    "vae": {
        "_class_name": "CausalVideoAutoencoder",
        "dims": 3,
        "in_channels": 3,
        "out_channels": 3,
        "latent_channels": 2,
        "patch_size": 4,
        "norm_layer": "pixel_norm",
        "latent_log_var": "uniform",
        "causal_decoder": False,
        "timestep_conditioning": False,
        "spatial_padding_mode": "zeros",
        "decoder_base_channels": 2,
        "encoder_blocks": [
            res(1), comp("compress_space_res", 2), res(1), comp("compress_time_res", 2), res(1),
            comp("compress_all_res", 2), res(1), comp("compress_all_res", 1), res(1),
        ],
        "decoder_blocks": [
            res(1), comp("compress_space", 2), res(2), comp("compress_time", 2), res(1),
            comp("compress_all", 1), res(1), comp("compress_all", 2), res(1),
        ],
    }
}

# The 2.3 decoder cases use decoder base width 4 (stage widths 32, 16, 16, 8, 4) instead of CONFIG_2_3's 2, which
# the encoder case and the pipeline cases keep. With 2 channels in the last stage, the PixelNorms of the last res_x
# and conv_norm_out divide by a per-pixel RMS over 2 values, which at a few of 2304 pixels is ~0.04, amplifying f32
# rounding ~25x: torch's own max |f32 - f64| was 3.1e-4 on ltx2_3_decoder conv_norm_out.out (2x the 1e-4
# validation tolerance, the engine's error 1.9e-4) and 4.2e-5 on timestep_cond_decoder. With 4 channels it is
# 8.8e-6 and 1.7e-5, every output and intermediate at most 0.08 of its tolerance (atol + rtol*|expected|).
CONFIG_2_3_DECODER = {"vae": {**CONFIG_2_3["vae"], "decoder_base_channels": 4}}

# Decoder with timestep conditioning and noise injection (the LTX-Video 0.9.x features the official decoder still
# supports): 2.3 block layout, one res_x with inject_noise.
CONFIG_TC = {
    "vae": {
        **{k: v for k, v in CONFIG_2_3_DECODER["vae"].items() if k != "decoder_blocks"},
        "latent_channels": 4,
        "timestep_conditioning": True,
        "decoder_blocks": [
            res(1), comp("compress_space", 2), ["res_x", {"num_layers": 2, "inject_noise": True}],
            comp("compress_time", 2), res(1), comp("compress_all", 1), res(1), comp("compress_all", 2), res(1),
        ],
    }
}


def vae_key(part: str):
    return lambda k: "vae." + k if k.startswith("per_channel_statistics.") else f"vae.{part}." + k


def scale_multiplier_rule(name: str, shape: tuple[int, ...], seed: int):
    # The decoder's timestep multiplier is a learned scalar stored in the checkpoint; real value 1000.
    if name == "timestep_scale_multiplier":
        return torch.tensor(1000.0)
    return None


def block_paths(model: torch.nn.Module, blocks: str) -> list[str]:
    """`<blocks>.{i}` and every `<blocks>.{i}.res_blocks.{j}` of the module, in order."""
    names = [n for n, _ in model.named_modules()]
    out = []
    for n in names:
        parts = n.split(".")
        if parts[0] != blocks:
            continue
        if len(parts) == 2 or (len(parts) == 4 and parts[2] == "res_blocks"):
            out.append(n)
    return out


def encoder_case(case: str, config: dict, video_shape: tuple, seed: int, description: str) -> GoldenCase:
    model, weights = roundtrip(
        config, VideoEncoderConfigurator, VAE_ENCODER_COMFY_KEYS_FILTER, vae_key("encoder"), seed,
        rules=[stats_rule], seeded_buffers=STATS,
    )
    video = seeded_uniform(video_shape, seed + 1, -1.0, 1.0)
    rec = Recorder()
    paths = ["conv_in", *block_paths(model, "down_blocks"), "conv_norm_out", "conv_out"]
    rec.capture(model, {p: "out" for p in paths})
    with torch.no_grad():
        latent = model(to_reference(video))
    rec.close()
    return GoldenCase(
        group="vae", case=case, component="video_vae_encoder", description=description, generator=GENERATOR,
        weights=weights, weights_metadata={"config": canonical_json(config)}, inputs={"video": video},
        outputs={"latent": latent}, intermediates=rec.values,
        params={"frames_cropped": (video_shape[2] - 1) % 8, "style": case.split("_encoder")[0]},
        tolerance=TOLERANCE,
    )


def decoder_case(case: str, config: dict, latent_shape: tuple, seed: int, description: str) -> GoldenCase:
    model, weights = roundtrip(
        config, VideoDecoderConfigurator, VAE_DECODER_COMFY_KEYS_FILTER, vae_key("decoder"), seed,
        rules=[stats_rule, scale_multiplier_rule], seeded_buffers=STATS,
    )
    latent = torch.randn(latent_shape, generator=torch.Generator().manual_seed(seed + 1))
    rec = Recorder()
    paths = ["conv_in", *block_paths(model, "up_blocks"), "conv_norm_out"]
    rec.capture(model, {p: "out" for p in paths})
    rec_in = model.conv_in.register_forward_pre_hook(lambda _m, args: rec.add("conv_in.in.x", args[0]))
    tc = model.timestep_conditioning
    if tc:
        emb = [n for n, _ in model.named_modules() if n.endswith("time_embedder")]
        rec.capture(model, {p: "out" for p in emb})
    draws: list = []
    noise_seed = seed + 2
    with torch.no_grad(), record_randn(draws):
        video = model(to_reference(latent), generator=torch.Generator().manual_seed(noise_seed))
    rec.close()
    rec_in.remove()
    inputs = {"latent": latent}
    params: dict = {"style": case.split("_decoder")[0], "timestep_conditioning": tc}
    if tc:
        names = ["noise.latent"]
        for i, block in enumerate(model.up_blocks):
            for j, rb in enumerate(getattr(block, "res_blocks", [])):
                if rb.inject_noise:
                    names += [f"up_blocks.{i}.res_blocks.{j}.noise1", f"up_blocks.{i}.res_blocks.{j}.noise2"]
        if len(names) != len(draws):
            raise RuntimeError(f"{case}: expected {len(names)} noise draws, saw {len(draws)}")
        inputs.update(dict(zip(names, draws, strict=True)))
        params.update(
            noise_draw_order=names, noise_generator_seed=noise_seed, timestep=model.decode_timestep,
            decode_noise_scale=model.decode_noise_scale,
        )
    elif draws:
        raise RuntimeError(f"{case}: unexpected noise draws")
    return GoldenCase(
        group="vae", case=case, component="video_vae_decoder", description=description, generator=GENERATOR,
        weights=weights, weights_metadata={"config": canonical_json(config)}, inputs=inputs,
        outputs={"video": video}, intermediates=rec.values, params=params, tolerance=TOLERANCE,
    )


CASES = {
    "ltx2_0_encoder": lambda: encoder_case(
        "ltx2_0_encoder", CONFIG_2_0, (1, 3, 9, 32, 64), 100,
        "LTX-2.0 style encoder (compress_*_res ×4, widths C..16C, zero padding), 9 frames 32x64 -> latent 2x1x2",
    ),
    "ltx2_3_encoder": lambda: encoder_case(
        "ltx2_3_encoder", CONFIG_2_3, (1, 3, 10, 32, 32), 200,
        "LTX-2.3 style encoder (last compress_all_res m1), 10 frames (last one cropped) 32x32 -> latent 2x1x1",
    ),
    "ltx2_0_decoder": lambda: decoder_case(
        "ltx2_0_decoder", CONFIG_2_0, (1, 2, 2, 2, 2), 300,
        "LTX-2.0 style decoder (3 residual compress_all m2, reflect padding), latent 2x2x2 -> 9 frames 64x64",
    ),
    "ltx2_3_decoder": lambda: decoder_case(
        "ltx2_3_decoder", CONFIG_2_3_DECODER, (1, 2, 2, 1, 2), 400,
        "LTX-2.3 style decoder (all m2, all m1, time m2, space m2; zero padding), latent 2x1x2 -> 9 frames 32x64",
    ),
    "timestep_cond_decoder": lambda: decoder_case(
        "timestep_cond_decoder", CONFIG_TC, (1, 4, 2, 1, 2), 500,
        "LTX-2.3 layout decoder with timestep conditioning (noise mix, t=0.05, AdaLN in res blocks and before "
        "conv_out) and inject_noise in one res_x; all drawn noise recorded as inputs",
    ),
}


def generate(out_root: Path, only_cases: set[str] | None, groups: set[str]) -> list[Path]:
    if "vae" not in groups:
        return []
    written = []
    for name, make in CASES.items():
        if only_cases is not None and name not in only_cases:
            continue
        written.append(with_measured_production(make).write(out_root))
    return written

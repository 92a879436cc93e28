"""Replay the pipeline golden cases from their files alone, the way the engine must: recorded noise instead of a
generator, the guidance and Euler arithmetic written out here (not ltx_pipelines' loop), and only the networks
(X0Model, upsampler, decoders) taken from ltx_core, loaded from weights.safetensors through ltx_core's key maps and
the `config` metadata. Every recorded latent and x0 is compared with expected.safetensors; exits non-zero when a
tensor is outside the case's validation tolerance.

    .venv/bin/python tools/reference/check_replay_pipeline.py [golden_root]
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

import torch

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from golden_case import read_safetensors, setup_determinism, write_safetensors  # noqa: E402


class Case:
    def __init__(self, d: Path, tmp: Path):
        from ltx_pipelines.utils.model_ledger import ModelLedger

        self.manifest = json.loads((d / "manifest.json").read_text())
        self.params = self.manifest["params"]
        weights, meta = read_safetensors(d / "weights.safetensors")
        self.inputs, _ = read_safetensors(d / "inputs.safetensors")
        self.expected, _ = read_safetensors(d / "expected.safetensors")
        tol = self.manifest["tolerance"]["validation"]
        self.atol, self.rtol = tol["atol"], tol["rtol"]
        self.config = json.loads(meta["config"])
        up_prefix = "spatial_upsampler."
        main = {k: v for k, v in weights.items() if not k.startswith(up_prefix)}
        write_safetensors(tmp / "main.safetensors", main, {"config": meta["config"]})
        up_path = None
        if "upsampler_config" in meta:
            up_path = tmp / "upsampler.safetensors"
            up = {k[len(up_prefix):]: v for k, v in weights.items() if k.startswith(up_prefix)}
            write_safetensors(up_path, up, {"config": meta["upsampler_config"]})
        self.ledger = ModelLedger(dtype=torch.float32, device=torch.device("cpu"),
                                  checkpoint_path=str(tmp / "main.safetensors"),
                                  spatial_upsampler_path=str(up_path) if up_path else None)
        self.stats = {k: weights["vae.per_channel_statistics." + k] for k in ("mean-of-means", "std-of-means")}
        self.worst = 0.0
        self.failed: list[str] = []

    def check(self, name: str, value: torch.Tensor) -> torch.Tensor:
        """Compares with the recorded tensor and continues from the recorded one (step-by-step replay)."""
        exp = self.expected[name]
        if tuple(value.shape) != tuple(exp.shape):
            raise RuntimeError(f"{name}: shape {tuple(value.shape)} vs {tuple(exp.shape)}")
        excess = ((value - exp).abs() - (self.atol + self.rtol * exp.abs())).max().item()
        self.worst = max(self.worst, (value - exp).abs().max().item())
        if excess > 0:
            self.failed.append(name)
        return exp


def tokens_video(x: torch.Tensor) -> torch.Tensor:
    b, c, f, h, w = x.shape  # [B,C,F,H,W] -> [B,F*H*W,C], tokens in (f,h,w) order
    return x.permute(0, 2, 3, 4, 1).reshape(b, f * h * w, c)


def tokens_audio(x: torch.Tensor) -> torch.Tensor:
    b, c, t, m = x.shape  # [B,C,T,M] -> [B,T,C*M]
    return x.permute(0, 2, 1, 3).reshape(b, t, c * m)


def dit_pass(model, case: Case, prefix: str, lat: dict, sigma: torch.Tensor, ctx: str, perturbation):
    from ltx_core.model.transformer.modality import Modality

    mods = {}
    for s in ("video", "audio"):
        mods[s] = Modality(enabled=True, latent=lat[s], sigma=sigma, timesteps=torch.ones_like(lat[s][..., :1]) * sigma,
                           positions=case.expected[f"{prefix}positions.{s}"],
                           context=case.inputs[f"context.{s}.{ctx}"], context_mask=None, attention_mask=None)
    return dict(zip(("video", "audio"), model(mods["video"], mods["audio"], perturbation), strict=True))


def perturbations(kinds: list[str], blocks):
    from ltx_core.guidance.perturbations import (
        BatchedPerturbationConfig,
        Perturbation,
        PerturbationConfig,
        PerturbationType,
    )

    if not kinds:
        return None
    return BatchedPerturbationConfig([PerturbationConfig([Perturbation(PerturbationType(k), blocks) for k in kinds])])


def replay_stage(case: Case, prefix: str, model, sigmas: torch.Tensor, init: dict, noise: dict, noise_scale, guidance):
    lat = {s: noise[s] * noise_scale + init[s] * (1 - noise_scale) for s in ("video", "audio")}
    lat = {s: case.check(f"{prefix}latents.{s}.initial", lat[s]) for s in lat}
    for k in range(len(sigmas) - 1):
        step = f"step{k:02d}"
        sigma = sigmas[k]
        if guidance is None:
            guided = dit_pass(model, case, prefix, lat, sigma, "positive", None)
        else:
            blocks = guidance["video"]["stg_blocks"]
            passes = {
                "cond": dit_pass(model, case, prefix, lat, sigma, "positive", None),
                "uncond": dit_pass(model, case, prefix, lat, sigma, "negative", None),
                "perturbed": dit_pass(model, case, prefix, lat, sigma, "positive",
                                      perturbations(["skip_video_self_attn", "skip_audio_self_attn"], blocks)),
                "isolated": dit_pass(model, case, prefix, lat, sigma, "positive",
                                     perturbations(["skip_a2v_cross_attn", "skip_v2a_cross_attn"], None)),
            }
            guided = {}
            for s in ("video", "audio"):
                p = {n: case.check(f"{prefix}x0.{s}.{step}.{n}", passes[n][s]) for n in passes}
                g = guidance[s]
                c = p["cond"]
                pred = (c + (g["cfg_scale"] - 1) * (c - p["uncond"]) + g["stg_scale"] * (c - p["perturbed"])
                        + (g["modality_scale"] - 1) * (c - p["isolated"]))
                r = g["rescale_scale"]
                guided[s] = pred * (r * c.std() / pred.std() + (1 - r)) if r != 0 else pred
        for s in ("video", "audio"):
            x0 = case.check(f"{prefix}x0.{s}.{step}.guided", guided[s])
            v = (lat[s] - x0) / sigma.item()
            lat[s] = case.check(f"{prefix}latents.{s}.{step}", lat[s] + v * (sigmas[k + 1] - sigma))
    return lat


def replay(d: Path) -> Case:
    from ltx_core.components.schedulers import LTX2Scheduler
    from ltx_core.model.upsampler import upsample_video
    from ltx_core.model.video_vae import VideoEncoderConfigurator

    with tempfile.TemporaryDirectory() as tmp, torch.no_grad():
        case = Case(d, Path(tmp))
        p = case.params
        model = case.ledger.transformer()
        two = "stage_2_sigmas" in p
        prefix = "stage1." if two else ""
        sigmas = case.check(f"{prefix}sigmas", LTX2Scheduler().execute(steps=p["num_inference_steps"]))
        noise = {"video": case.inputs["noise.0000"], "audio": case.inputs["noise.0001"]}
        zeros = {s: torch.zeros_like(noise[s]) for s in noise}
        guidance = p["guidance"]["stage_1"] if two else p["guidance"]
        lat = replay_stage(case, prefix, model, sigmas, zeros, noise, 1.0, guidance)
        if two:
            f, h, w = p["stage_1_video_latent_shape"][2:]
            c = lat["video"].shape[-1]
            video = lat["video"].reshape(1, f, h, w, c).permute(0, 4, 1, 2, 3)
            audio_shape = p["audio_latent_shape"]
            audio = lat["audio"].reshape(1, audio_shape[2], audio_shape[1], audio_shape[3]).permute(0, 2, 1, 3)
            video = case.check("stage1.latents.video.final", video)
            audio = case.check("stage1.latents.audio.final", audio)
            encoder = VideoEncoderConfigurator.from_config({"vae": {"latent_channels": c, "encoder_blocks": []}})
            for k, v in case.stats.items():
                encoder.per_channel_statistics.get_buffer(k).copy_(v)
            up = case.check("upsampled.video", upsample_video(video, encoder, case.ledger.spatial_upsampler()))
            s2 = case.check("stage2.sigmas", torch.tensor(p["stage_2_sigmas"], dtype=torch.float32))
            noise = {"video": case.inputs["noise.0002"], "audio": case.inputs["noise.0003"]}
            init = {"video": tokens_video(up), "audio": tokens_audio(audio)}
            lat = replay_stage(case, "stage2.", model, s2, init, noise, s2[0], None)
        vs, as_ = p["video_latent_shape"], p["audio_latent_shape"]
        video = case.check("latents.video.final", lat["video"].reshape(1, *vs[2:], vs[1]).permute(0, 4, 1, 2, 3))
        audio = case.check("latents.audio.final",
                           lat["audio"].reshape(1, as_[2], as_[1], as_[3]).permute(0, 2, 1, 3))
        if "video.decoded" in case.expected:
            case.check("video.decoded", case.ledger.video_decoder()(video))
            mel = case.check("audio.mel", case.ledger.audio_decoder()(audio))
            case.check("audio.waveform", case.ledger.vocoder()(mel).squeeze(0))
    return case


def main() -> int:
    setup_determinism(0)
    root = Path(sys.argv[1]) if len(sys.argv) > 1 else HERE.parent.parent / "tests" / "golden"
    status = 0
    for d in sorted((root / "pipeline").iterdir()):
        case = replay(d)
        verdict = "ok" if not case.failed else f"FAILED {case.failed}"
        print(f"{d.name}: max |replay - expected| {case.worst:.3g} ({verdict})")
        status |= bool(case.failed)
    return status


if __name__ == "__main__":
    raise SystemExit(main())

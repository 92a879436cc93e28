"""Reload every vae / audio / upsampler / schedule golden case from its files alone and reproduce its outputs.

Each case is rebuilt through ltx-core's own checkpoint loader (SingleGPUModelBuilder with the official key
filters and the `config` metadata), run on inputs.safetensors and compared with expected.safetensors. The
timestep-conditioned video decoder replays the recorded noise instead of drawing it: this shows the recorded
noise is exactly what the decoder consumed, so an engine that replays it must match.

    .venv/bin/python tools/reference/check_reload_media.py [golden_root]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import torch

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from golden_case import read_safetensors, setup_determinism  # noqa: E402


def build(case_dir: Path, configurator, sd_ops):
    from ltx_core.loader.single_gpu_model_builder import SingleGPUModelBuilder

    builder = SingleGPUModelBuilder(
        model_class_configurator=configurator, model_path=str(case_dir / "weights.safetensors"), model_sd_ops=sd_ops
    )
    return builder.build(device=torch.device("cpu"), dtype=torch.float32).eval()


def replay_randn(draws: list[torch.Tensor]):
    original = torch.randn

    def replay(*args, **kwargs):
        if kwargs.get("generator") is None:
            return original(*args, **kwargs)
        t = draws.pop(0)
        if tuple(t.shape) != tuple(args[0]):
            raise RuntimeError(f"noise replay: expected shape {tuple(args[0])}, recorded {tuple(t.shape)}")
        return t.clone()

    return original, replay


def run_case(d: Path) -> dict[str, torch.Tensor]:
    from ltx_core.components.schedulers import LTX2Scheduler
    from ltx_core.model.audio_vae import (
        AUDIO_VAE_DECODER_COMFY_KEYS_FILTER,
        AUDIO_VAE_ENCODER_COMFY_KEYS_FILTER,
        VOCODER_COMFY_KEYS_FILTER,
        AudioDecoderConfigurator,
        AudioEncoderConfigurator,
        AudioProcessor,
        VocoderConfigurator,
    )
    from ltx_core.model.upsampler import LatentUpsamplerConfigurator
    from ltx_core.model.video_vae import (
        VAE_DECODER_COMFY_KEYS_FILTER,
        VAE_ENCODER_COMFY_KEYS_FILTER,
        VideoDecoderConfigurator,
        VideoEncoderConfigurator,
    )
    from ltx_core.types import Audio
    from ltx_pipelines.utils.constants import DISTILLED_SIGMA_VALUES, STAGE_2_DISTILLED_SIGMA_VALUES

    manifest = json.loads((d / "manifest.json").read_text())
    inputs = read_safetensors(d / "inputs.safetensors")[0]
    comp = manifest["component"]
    with torch.no_grad():
        if comp == "video_vae_encoder":
            return {"latent": build(d, VideoEncoderConfigurator, VAE_ENCODER_COMFY_KEYS_FILTER)(inputs["video"])}
        if comp == "video_vae_decoder":
            model = build(d, VideoDecoderConfigurator, VAE_DECODER_COMFY_KEYS_FILTER)
            if not manifest["params"]["timestep_conditioning"]:
                return {"video": model(inputs["latent"])}
            draws = [inputs[n] for n in manifest["params"]["noise_draw_order"]]
            original, replay = replay_randn(draws)
            torch.randn = replay
            try:
                # Any generator: every draw is replaced by the recorded tensor.
                out = model(inputs["latent"], generator=torch.Generator())
            finally:
                torch.randn = original
            if draws:
                raise RuntimeError(f"{d.name}: {len(draws)} recorded noise tensors not consumed")
            return {"video": out}
        if comp == "audio_vae_encoder":
            return {"latent": build(d, AudioEncoderConfigurator, AUDIO_VAE_ENCODER_COMFY_KEYS_FILTER)(inputs["mel"])}
        if comp == "audio_vae_decoder":
            return {"mel": build(d, AudioDecoderConfigurator, AUDIO_VAE_DECODER_COMFY_KEYS_FILTER)(inputs["latent"])}
        if comp == "vocoder":
            return {"waveform": build(d, VocoderConfigurator, VOCODER_COMFY_KEYS_FILTER)(inputs["mel"])}
        if comp == "audio_mel_frontend":
            cfg = json.loads(read_safetensors(d / "weights.safetensors")[1]["config"])
            enc = AudioEncoderConfigurator.from_config(cfg)
            proc = AudioProcessor(enc.sample_rate, enc.mel_bins, enc.mel_hop_length, enc.n_fft)
            rate = manifest["params"]["input_sampling_rate"]
            return {"mel": proc.waveform_to_mel(Audio(waveform=inputs["waveform"], sampling_rate=rate))}
        if comp == "latent_upsampler":
            model = build(d, LatentUpsamplerConfigurator, None)
            mean = inputs["vae.per_channel_statistics.mean-of-means"].view(1, -1, 1, 1, 1)
            std = inputs["vae.per_channel_statistics.std-of-means"].view(1, -1, 1, 1, 1)
            return {"latent": (model(inputs["latent"] * std + mean) - mean) / std}
        if comp == "ltx2_scheduler":
            out = {}
            for name, c in manifest["params"]["calls"].items():
                latent = torch.empty(c["latent_shape"]) if c["latent_shape"] is not None else None
                out[f"sigmas.{name}"] = LTX2Scheduler().execute(
                    steps=c["steps"], latent=latent, max_shift=c["max_shift"], base_shift=c["base_shift"],
                    stretch=c["stretch"], terminal=c["terminal"],
                )
            return out
        if comp == "distilled_sigmas":
            return {
                "sigmas.stage_1": torch.Tensor(DISTILLED_SIGMA_VALUES),
                "sigmas.stage_2": torch.Tensor(STAGE_2_DISTILLED_SIGMA_VALUES),
            }
    raise ValueError(f"{d}: unknown component {comp}")


def main() -> int:
    root = Path(sys.argv[1]) if len(sys.argv) > 1 else HERE.parent.parent / "tests" / "golden"
    setup_determinism(0)
    failed = 0
    for group in ("vae", "audio", "upsampler", "schedule"):
        for d in sorted((root / group).iterdir()) if (root / group).is_dir() else []:
            manifest = json.loads((d / "manifest.json").read_text())
            expected = read_safetensors(d / "expected.safetensors")[0]
            got = run_case(d)
            if sorted(got) != sorted(manifest["outputs"]):
                raise RuntimeError(f"{d}: outputs {sorted(got)} vs manifest {manifest['outputs']}")
            err = max((got[k] - expected[k]).abs().max().item() for k in got)
            ok = err <= 1e-6
            failed += not ok
            print(f"{'ok  ' if ok else 'FAIL'} {group}/{d.name}: max |diff| {err:.3g}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())

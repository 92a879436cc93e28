"""The issue-6 decode benchmark, PyTorch side: ltx-core's LTX-2.3 video decoder and BigVGAN-v2 + BWE vocoder.

Both at the published LTX-2.3 widths (ltx2-spec.md sections 4.1 and 5.2) with seeded random weights:
- video decoder: 128 latent channels, base 128 (stage widths 1024, 512, 512, 256, 128), decoder blocks
  res_x{4}, compress_space{m2}, res_x{6}, compress_time{m2}, res_x{4}, compress_all{m1}, res_x{2},
  compress_all{m2}, res_x{2} (listed encoder-side), patch 4, zero spatial padding, causal_decoder false, no timestep
  conditioning; decodes a latent [1, 128, 3, 16, 24] to 17 frames of 512x768;
- vocoder: BigVGAN-v2 (1536 wide, rates [5,2,2,2,2,2]) + BWE (512 wide, rates [6,5,2,2,2], n_fft 512, hop 80) on a
  5 s mel [1, 2, 500, 64] (100 mel frames/s) -> 240000 samples at 48 kHz.

  generate DIR   writes DIR/weights.safetensors (official keys `vae.decoder.*`, `vae.per_channel_statistics.*`,
                 `vocoder.*`; `config` metadata; stored bf16 as the pipelines load them) and DIR/inputs.safetensors
                 (`latent`, `mel`, f32)
  run DIR {video,vocoder} [--reps N]
                 in this (fresh) process: builds the module through ltx-core's checkpoint loader in bf16 (the dtype
                 ltx-pipelines builds the decoders and the vocoder in: ModelLedger dtype=torch.bfloat16), feeds the
                 input in bf16, times N calls (no warm-up: each call of the video decoder is minutes) and prints
                 `key=value` lines: time_s (median wall seconds per call), baseline_rss_kb (VmRSS before loading),
                 peak_rss_kb (VmHWM at the end), threads

bench/vae_decode.sh runs both sides and prints the table. The weights (~1.1 GB) belong in /tmp, never in the
repository.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))

from golden_case import canonical_json, seeded_init_, seeded_randn  # noqa: E402
from published_configs import LTX23_VOCODER as VOCODER  # noqa: E402

SEED = 6000
LATENT = (1, 128, 3, 16, 24)
MEL = (1, 2, 500, 64)


def res(n: int) -> list:
    return ["res_x", {"num_layers": n}]


def comp(name: str, multiplier: int) -> list:
    return [name, {"multiplier": multiplier}]


VAE = {
    "_class_name": "CausalVideoAutoencoder",
    "dims": 3,
    "in_channels": 3,
    "out_channels": 3,
    "latent_channels": 128,
    "patch_size": 4,
    "norm_layer": "pixel_norm",
    "latent_log_var": "uniform",
    "causal_decoder": False,
    "timestep_conditioning": False,
    "spatial_padding_mode": "zeros",
    "decoder_base_channels": 128,
    "encoder_blocks": [
        res(4), comp("compress_space_res", 2), res(6), comp("compress_time_res", 2), res(4),
        comp("compress_all_res", 2), res(2), comp("compress_all_res", 1), res(2),
    ],
    "decoder_blocks": [
        res(4), comp("compress_space", 2), res(6), comp("compress_time", 2), res(4),
        comp("compress_all", 1), res(2), comp("compress_all", 2), res(2),
    ],
}

def config() -> dict:
    return {"vae": dict(VAE), "vocoder": dict(VOCODER)}


def vm_kb(key: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"no {key} in /proc/self/status")


def weight_rule(name: str, shape: tuple[int, ...], seed: int) -> torch.Tensor | None:
    """Statistics as in the golden cases; BigVGAN's conv_post and second residual convs quieter, as in the
    vocoder golden case (make_audio_goldens.py bigvgan_bwe_rule), so the output is not all clamped."""
    if name.endswith("std-of-means"):
        return torch.rand(shape, generator=torch.Generator().manual_seed(seed)) + 0.5
    if name.endswith("mean-of-means"):
        return seeded_randn(shape, seed, 0.3)
    if name.endswith("conv_post.weight"):
        gain = 0.015 if "bwe_generator." in name else 0.15
        return seeded_randn(shape, seed, gain / math.sqrt(shape[1] * shape[2]))
    if ".convs2." in name and name.endswith(".weight"):
        return seeded_randn(shape, seed, 0.2 / math.sqrt(shape[1] * shape[2]))
    return None


def generate(out: Path) -> None:
    from ltx_core.model.audio_vae import VocoderConfigurator
    from ltx_core.model.video_vae import VideoDecoderConfigurator
    from make_audio_goldens import fill_mel_stft
    from safetensors.torch import save_file

    out.mkdir(parents=True, exist_ok=True)
    cfg = config()
    weights = {}
    decoder = VideoDecoderConfigurator.from_config(cfg)
    seeded_init_(decoder, seed=SEED, rules=[weight_rule], buffers=True)
    for k, v in decoder.state_dict().items():
        key = "vae." + k if k.startswith("per_channel_statistics.") else "vae.decoder." + k
        weights[key] = v.to(torch.bfloat16).contiguous()
    del decoder
    vocoder = VocoderConfigurator.from_config(cfg)
    seeded_init_(vocoder, seed=SEED + 1, rules=[weight_rule])
    fill_mel_stft(vocoder)
    for k, v in vocoder.state_dict().items():
        if k.startswith("resampler."):
            continue  # not stored in checkpoints (persistent=False)
        weights["vocoder." + k] = v.to(torch.bfloat16).contiguous()
    del vocoder
    save_file(weights, str(out / "weights.safetensors"), metadata={"config": canonical_json(cfg)})
    inputs = {"latent": seeded_randn(LATENT, SEED + 2), "mel": seeded_randn(MEL, SEED + 3, 2.0) - 4.0}
    save_file(inputs, str(out / "inputs.safetensors"))
    print({k: list(v.shape) for k, v in inputs.items()}, f"{sum(v.numel() for v in weights.values())} parameters")


def build(path: Path, part: str) -> torch.nn.Module:
    from ltx_core.loader.single_gpu_model_builder import SingleGPUModelBuilder
    from ltx_core.model.audio_vae import VOCODER_COMFY_KEYS_FILTER, VocoderConfigurator
    from ltx_core.model.video_vae import VAE_DECODER_COMFY_KEYS_FILTER, VideoDecoderConfigurator

    configurator, ops = (
        (VideoDecoderConfigurator, VAE_DECODER_COMFY_KEYS_FILTER)
        if part == "video"
        else (VocoderConfigurator, VOCODER_COMFY_KEYS_FILTER)
    )
    builder = SingleGPUModelBuilder(model_class_configurator=configurator, model_path=str(path), model_sd_ops=ops)
    return builder.build(device=torch.device("cpu"), dtype=torch.bfloat16).eval()


def run(out: Path, part: str, reps: int) -> None:
    from safetensors.torch import load_file

    baseline = vm_kb("VmRSS")
    model = build(out / "weights.safetensors", part)
    x = load_file(str(out / "inputs.safetensors"))["latent" if part == "video" else "mel"].to(torch.bfloat16)
    times = []
    with torch.inference_mode():
        for i in range(reps):
            t0 = time.perf_counter()
            y = model(x)
            dt = time.perf_counter() - t0
            times.append(dt)
            print(f"# {part} call {i}: {dt:.3f} s -> {tuple(y.shape)}", file=sys.stderr)
    assert torch.isfinite(y.float()).all()
    print(f"time_s={statistics.median(times):.4f}")
    print(f"baseline_rss_kb={baseline}")
    print(f"peak_rss_kb={vm_kb('VmHWM')}")
    print(f"threads={torch.get_num_threads()}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("mode", choices=("generate", "run"))
    p.add_argument("dir", type=Path)
    p.add_argument("part", nargs="?", choices=("video", "vocoder"), default="video")
    p.add_argument("--reps", type=int, default=1)
    args = p.parse_args()
    if args.mode == "generate":
        generate(args.dir)
    else:
        run(args.dir, args.part, max(1, args.reps))


if __name__ == "__main__":
    main()

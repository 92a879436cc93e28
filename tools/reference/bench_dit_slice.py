"""The issue-5 DiT slice benchmark, PyTorch side (ltx-core's LTXModel on the CPU in bf16).

A shape-faithful slice of LTX-2.3: the real transformer config (video 32 heads x 128 = 4096, audio 32 x 64 = 2048,
gated attention, cross-attention AdaLN) with num_layers 2, seeded random bf16 weights, a 768x512 px x 25 frame
video (latent 4 x 16 x 24 = 1536 tokens), the matching 26 audio tokens (25/24 s at 25 latents/s), 1024-token text
contexts and one sigma for both streams.

  generate DIR   writes DIR/weights.safetensors (official keys under model.diffusion_model., `config` metadata)
                 and DIR/inputs.safetensors (the golden DiT input names), both read by `ltx bench --dit-slice DIR`
  run DIR [--reps N]
                 in this (fresh) process: loads the weights in bf16, runs one warm-up call and N timed calls, and
                 prints `key=value` lines: time_s (median wall seconds per call), cpu_s (median process CPU seconds per
                 call), baseline_rss_kb (VmRSS before
                 loading), peak_rss_kb (VmHWM at the end), threads

bench/dit_slice.sh runs both and prints the table. The weights (~1.5 GB) belong in /tmp, never in the repository.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))

from golden_case import canonical_json, seeded_init_, seeded_randn  # noqa: E402
from tiny_configs import LTX23_TRANSFORMER  # noqa: E402

PREFIX = "model.diffusion_model."
FPS = 24.0
PIXELS = (25, 512, 768)  # frames, height, width
CONTEXT_TOKENS = 1024
SIGMA = 0.6
SEED = 5000

# The published LTX-2.3 (22B) transformer config (spec section 3.1), cut to two blocks. Only the widths differ from
# the tiny 2.3 structure in tiny_configs.py.
TRANSFORMER = {
    **LTX23_TRANSFORMER,
    "num_attention_heads": 32,
    "attention_head_dim": 128,
    "in_channels": 128,
    "out_channels": 128,
    "num_layers": 2,
    "cross_attention_dim": 4096,
    "audio_num_attention_heads": 32,
    "audio_attention_head_dim": 64,
    "audio_in_channels": 128,
    "audio_out_channels": 128,
    "audio_cross_attention_dim": 2048,
    "connector_num_attention_heads": 32,
    "connector_attention_head_dim": 128,
    "audio_connector_num_attention_heads": 32,
    "audio_connector_attention_head_dim": 64,
}


def config() -> dict:
    return {"transformer": dict(TRANSFORMER)}


def vm_kb(key: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"no {key} in /proc/self/status")


def make_inputs() -> dict[str, torch.Tensor]:
    """Positions as the pipelines make them (VideoLatentTools / AudioLatentTools), seeded random latents and
    contexts, timesteps = sigma on every token."""
    from ltx_core.components.patchifiers import AudioPatchifier, VideoLatentPatchifier
    from ltx_core.tools import AudioLatentTools, VideoLatentTools
    from ltx_core.types import AudioLatentShape, VideoLatentShape, VideoPixelShape

    pixel = VideoPixelShape(batch=1, frames=PIXELS[0], height=PIXELS[1], width=PIXELS[2], fps=FPS)
    vshape = VideoLatentShape.from_pixel_shape(pixel, latent_channels=128)
    ashape = AudioLatentShape.from_video_pixel_shape(pixel)
    vstate = VideoLatentTools(VideoLatentPatchifier(patch_size=1), vshape, FPS).create_initial_state(
        torch.device("cpu"), torch.float32
    )
    astate = AudioLatentTools(AudioPatchifier(patch_size=1), ashape).create_initial_state(
        torch.device("cpu"), torch.float32
    )
    out = {}
    for i, (name, state, ctx_dim) in enumerate((("video", vstate, 4096), ("audio", astate, 2048))):
        b, t, c = state.latent.shape
        out[f"{name}.latent"] = seeded_randn((b, t, c), SEED + 10 * i + 1)
        out[f"{name}.sigma"] = torch.full((b,), SIGMA)
        out[f"{name}.timesteps"] = torch.full((b, t, 1), SIGMA)
        out[f"{name}.positions"] = state.positions.float().contiguous()
        out[f"{name}.context"] = seeded_randn((b, CONTEXT_TOKENS, ctx_dim), SEED + 10 * i + 2)
    return out


def generate(out: Path) -> None:
    from ltx_core.model.transformer.model_configurator import LTXModelConfigurator
    from safetensors.torch import save_file

    out.mkdir(parents=True, exist_ok=True)
    cfg = config()
    with torch.device("meta"):
        model = LTXModelConfigurator.from_config(cfg)
    model = model.to_empty(device="cpu").to(torch.bfloat16)
    seeded_init_(model, seed=SEED)
    weights = {PREFIX + k: v.contiguous() for k, v in model.state_dict().items()}
    save_file(weights, str(out / "weights.safetensors"), metadata={"config": canonical_json(cfg)})
    del model, weights
    inputs = make_inputs()
    save_file(inputs, str(out / "inputs.safetensors"))
    print({k: list(v.shape) for k, v in inputs.items()})


def run(out: Path, reps: int) -> None:
    from ltx_core.model.transformer.model_configurator import LTXModelConfigurator
    from ltx_core.model.transformer.modality import Modality
    from safetensors.torch import load_file

    baseline = vm_kb("VmRSS")
    with torch.device("meta"):
        model = LTXModelConfigurator.from_config(config())
    sd = {k[len(PREFIX) :]: v for k, v in load_file(str(out / "weights.safetensors")).items()}
    model.load_state_dict(sd, assign=True, strict=True)
    del sd
    model = model.to(torch.bfloat16).eval()
    inp = load_file(str(out / "inputs.safetensors"))

    def modality(name: str) -> Modality:
        # As the pipelines feed a bf16 model: latent, timesteps and context in bf16; positions in float32.
        bf = lambda k: inp[f"{name}.{k}"].to(torch.bfloat16)  # noqa: E731
        return Modality(
            latent=bf("latent"),
            sigma=bf("sigma"),
            timesteps=bf("timesteps"),
            positions=inp[f"{name}.positions"],
            context=bf("context"),
        )

    video, audio = modality("video"), modality("audio")
    times, cpu_times = [], []
    with torch.inference_mode():
        for i in range(reps + 1):
            c0, t0 = time.process_time(), time.perf_counter()
            v, a = model(video, audio, None)
            dt, cpu = time.perf_counter() - t0, time.process_time() - c0
            if i > 0:
                times.append(dt)
                cpu_times.append(cpu)
            print(f"# call {i}: {dt:.3f} s wall, {cpu:.3f} s CPU", file=sys.stderr)
    assert torch.isfinite(v.float()).all() and torch.isfinite(a.float()).all()
    print(f"time_s={statistics.median(times):.4f}")
    print(f"cpu_s={statistics.median(cpu_times):.4f}")
    print(f"baseline_rss_kb={baseline}")
    print(f"peak_rss_kb={vm_kb('VmHWM')}")
    print(f"threads={torch.get_num_threads()}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("mode", choices=("generate", "run"))
    p.add_argument("dir", type=Path)
    p.add_argument("--reps", type=int, default=3)
    args = p.parse_args()
    if args.mode == "generate":
        generate(args.dir)
    else:
        run(args.dir, max(1, args.reps))


if __name__ == "__main__":
    main()

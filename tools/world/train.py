"""Trains the embedded default on the world of tools/world/world.py with the official ltx-core classes at the tiny
configuration of tools/world/model_config.json, one component at a time, each stage bounded in minutes and resumable:
its state (weights, optimizer, step, random streams) is saved in the state folder every few minutes and at the end,
and the next run of the stage continues from it. Seeds are fixed, so a stage's weights depend only on its steps.

    python3 tools/world/train.py video_vae --state /work/world-train --minutes 30

Stages (in order; later ones read the earlier ones' weights):
  video_vae   the video VAE as an autoencoder on the world's clips (MSE; the latent kept near unit scale and
              perturbed by noise so that the decoder tolerates the sampler's small errors); at the end of each run
              the per-channel latent statistics are measured on 256 clips and stored in both halves.
  audio_vae   the audio VAE on the clips' log-mel spectrograms (ltx-core's AudioProcessor: 16 kHz, 64 bins),
              the same way; its statistics over the patchified latent's features.
  vocoder     BigVGAN with bandwidth extension, log-mel (of the true sound) to 48 kHz stereo, by a multi-resolution
              STFT loss plus L1 on the waveform.

Needs torch and ltx-core (tools/reference/requirements.txt); ltx-core's sources may be given by LTX_CORE_SRC (a
folder holding ltx_core/).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from pathlib import Path

import numpy as np
import torch

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
if os.environ.get("LTX_CORE_SRC"):
    sys.path.insert(0, os.environ["LTX_CORE_SRC"])
import world  # noqa: E402

CONFIG = json.loads((HERE / "model_config.json").read_text())
TRAIN_SCENES = [s for s in world.all_scenes() if not world.is_held_out(s)]
SAVE_EVERY_S = 300


def clip_batch(rng: random.Random, size: int) -> tuple[torch.Tensor, list[world.Clip]]:
    """`size` clips of random training scenes and seeds: pixels [B, 3, F, H, W] in [-1, 1], and the clips."""
    clips = [world.make_clip(rng.choice(TRAIN_SCENES), rng.randrange(1 << 30)) for _ in range(size)]
    frames = np.stack([c.frames for c in clips]).astype(np.float32) / 127.5 - 1.0  # [B, F, H, W, 3]
    return torch.from_numpy(frames).permute(0, 4, 1, 2, 3).contiguous(), clips


class Stage:
    """A resumable training run: `modules` trained by `step()` under AdamW, state in STATE/<name>.pt."""

    def __init__(self, name: str, state: Path, modules: dict[str, torch.nn.Module], lr: float, seed: int):
        self.name, self.path, self.modules = name, state / f"{name}.pt", modules
        params = [p for m in modules.values() for p in m.parameters() if p.requires_grad]
        self.optimizer = torch.optim.AdamW(params, lr=lr, weight_decay=0.0)
        self.step_count, self.rng = 0, random.Random(seed)
        torch.manual_seed(seed)
        self.log = state / f"{name}.log"
        if self.path.exists():
            saved = torch.load(self.path, weights_only=False)
            for k, m in modules.items():
                m.load_state_dict(saved["modules"][k])
            self.optimizer.load_state_dict(saved["optimizer"])
            self.step_count = saved["step"]
            self.rng.setstate(saved["rng"])
            torch.set_rng_state(saved["torch_rng"])
            print(f"{name}: resumed at step {self.step_count}")

    def save(self) -> None:
        tmp = self.path.with_suffix(".tmp")
        torch.save({"modules": {k: m.state_dict() for k, m in self.modules.items()},
                    "optimizer": self.optimizer.state_dict(), "step": self.step_count, "rng": self.rng.getstate(),
                    "torch_rng": torch.get_rng_state()}, tmp)
        tmp.replace(self.path)

    def run(self, minutes: float, step) -> None:
        start = last_save = time.time()
        window: list[float] = []
        while time.time() - start < minutes * 60:
            loss = step(self)
            self.optimizer.zero_grad(set_to_none=True)
            loss.backward()
            self.optimizer.step()
            self.step_count += 1
            window.append(float(loss.detach()))
            if self.step_count % 50 == 0:
                line = f"{self.name} step {self.step_count} loss {np.mean(window):.5f} ({time.time() - start:.0f} s)"
                print(line, flush=True)
                with self.log.open("a") as f:
                    f.write(line + "\n")
                window = []
            if time.time() - last_save > SAVE_EVERY_S:
                self.save()
                last_save = time.time()
        self.save()


# ---------------------------------------------------------------------------------------------------------------
# The video VAE


def video_vae_modules() -> dict[str, torch.nn.Module]:
    from ltx_core.model.video_vae import VideoDecoderConfigurator, VideoEncoderConfigurator

    torch.manual_seed(100)
    encoder, decoder = VideoEncoderConfigurator.from_config(CONFIG), VideoDecoderConfigurator.from_config(CONFIG)
    for m in (encoder, decoder):  # identity statistics while training (torch.empty otherwise)
        m.per_channel_statistics.get_buffer("mean-of-means").zero_()
        m.per_channel_statistics.get_buffer("std-of-means").fill_(1.0)
    return {"encoder": encoder, "decoder": decoder}


def train_video_vae(state: Path, minutes: float) -> None:
    modules = video_vae_modules()
    stage = Stage("video_vae", state, modules, lr=1e-3, seed=101)
    encoder, decoder = modules["encoder"], modules["decoder"]
    for m in (encoder, decoder):  # the statistics of a previous run's end are re-measured below
        m.per_channel_statistics.get_buffer("mean-of-means").zero_()
        m.per_channel_statistics.get_buffer("std-of-means").fill_(1.0)

    def step(s: Stage) -> torch.Tensor:
        x, _ = clip_batch(s.rng, 2)
        z = encoder(x)
        y = decoder(z + 0.1 * torch.randn_like(z))
        return torch.mean((y - x) ** 2) + 1e-3 * torch.mean(z ** 2)

    stage.run(minutes, step)
    with torch.no_grad():  # the latent statistics, as the official checkpoints carry them
        rng = random.Random(102)
        z = torch.cat([encoder(clip_batch(rng, 8)[0]) for _ in range(32)])
        mean, std = z.mean(dim=(0, 2, 3, 4)), z.std(dim=(0, 2, 3, 4)).clamp_min(1e-3)
        x, _ = clip_batch(rng, 4)
        psnr = 10 * torch.log10(4.0 / torch.mean((decoder(encoder(x)) - x) ** 2))
    stage.save()
    torch.save({"mean-of-means": mean, "std-of-means": std}, state / "video_vae_statistics.pt")
    print(f"video_vae: step {stage.step_count}, reconstruction PSNR {psnr:.1f} dB, latent mean {mean.abs().mean():.3f}"
          f" std {std.mean():.3f}")


# ---------------------------------------------------------------------------------------------------------------
# The audio VAE and the vocoder


def audio_batch(rng: random.Random, size: int) -> torch.Tensor:
    """`size` clips' sound: [B, 2, SAMPLES] at 48 kHz."""
    return torch.from_numpy(np.stack([world.make_clip(rng.choice(TRAIN_SCENES), rng.randrange(1 << 30)).audio
                                      for _ in range(size)]))


def mel_processor():
    """ltx-core's AudioProcessor as encode_audio builds it from the encoder's settings (audio_vae.py)."""
    from ltx_core.model.audio_vae import AudioProcessor

    ddconfig = CONFIG["audio_vae"]["model"]["params"]["ddconfig"]
    stft = CONFIG["audio_vae"]["preprocessing"]["stft"]
    return AudioProcessor(target_sample_rate=CONFIG["audio_vae"]["model"]["params"]["sampling_rate"],
                          mel_bins=ddconfig["mel_bins"], mel_hop_length=stft["hop_length"],
                          n_fft=stft["filter_length"])


def log_mel(processor, waveform: torch.Tensor) -> torch.Tensor:
    from ltx_core.types import Audio

    return processor.waveform_to_mel(Audio(waveform=waveform, sampling_rate=world.SAMPLE_RATE))


def audio_vae_modules() -> dict[str, torch.nn.Module]:
    from ltx_core.model.audio_vae import AudioDecoderConfigurator, AudioEncoderConfigurator

    torch.manual_seed(200)
    encoder, decoder = AudioEncoderConfigurator.from_config(CONFIG), AudioDecoderConfigurator.from_config(CONFIG)
    for m in (encoder, decoder):
        m.per_channel_statistics.get_buffer("mean-of-means").zero_()
        m.per_channel_statistics.get_buffer("std-of-means").fill_(1.0)
    return {"encoder": encoder, "decoder": decoder}


def train_audio_vae(state: Path, minutes: float) -> None:
    modules = audio_vae_modules()
    stage = Stage("audio_vae", state, modules, lr=1e-3, seed=201)
    encoder, decoder = modules["encoder"], modules["decoder"]
    for m in (encoder, decoder):
        m.per_channel_statistics.get_buffer("mean-of-means").zero_()
        m.per_channel_statistics.get_buffer("std-of-means").fill_(1.0)
    processor = mel_processor()

    def step(s: Stage) -> torch.Tensor:
        mel = log_mel(processor, audio_batch(s.rng, 4))
        z = encoder(mel)
        out = decoder(z + 0.1 * torch.randn_like(z))
        return torch.mean((out - mel[:, :, :out.shape[2]]) ** 2) + 1e-3 * torch.mean(z ** 2)

    stage.run(minutes, step)
    with torch.no_grad():  # statistics over the patchified latent's features (channels x mel bins)
        rng = random.Random(202)
        z = torch.cat([encoder(log_mel(processor, audio_batch(rng, 16))) for _ in range(16)])
        features = z.permute(0, 2, 1, 3).reshape(-1, z.shape[1] * z.shape[3])
        mean, std = features.mean(dim=0), features.std(dim=0).clamp_min(1e-3)
    torch.save({"mean-of-means": mean, "std-of-means": std}, state / "audio_vae_statistics.pt")
    print(f"audio_vae: step {stage.step_count}, loss {float(step(stage).detach()):.4f}")


def stft_loss(y: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """Multi-resolution STFT magnitude loss (spectral convergence + log magnitude), the usual vocoder objective."""
    total = torch.zeros(())
    for n_fft, hop in ((2048, 512), (1024, 256), (512, 128), (256, 64)):
        window = torch.hann_window(n_fft)
        a = torch.stft(y.reshape(-1, y.shape[-1]), n_fft, hop, window=window, return_complex=True).abs()
        b = torch.stft(x.reshape(-1, x.shape[-1]), n_fft, hop, window=window, return_complex=True).abs()
        total = total + torch.norm(a - b) / torch.norm(b).clamp_min(1e-5)
        total = total + torch.mean(torch.abs(torch.log(a.clamp_min(1e-5)) - torch.log(b.clamp_min(1e-5))))
    return total


def train_vocoder(state: Path, minutes: float) -> None:
    from ltx_core.model.audio_vae import VocoderConfigurator

    torch.manual_seed(300)
    vocoder = VocoderConfigurator.from_config(CONFIG)
    stage = Stage("vocoder", state, {"vocoder": vocoder}, lr=5e-4, seed=301)
    processor = mel_processor()

    def step(s: Stage) -> torch.Tensor:
        wave = audio_batch(s.rng, 2)
        out = vocoder(log_mel(processor, wave))
        n = min(out.shape[-1], wave.shape[-1])
        return stft_loss(out[..., :n], wave[..., :n]) + torch.mean(torch.abs(out[..., :n] - wave[..., :n]))

    stage.run(minutes, step)


STAGES = {"video_vae": train_video_vae, "audio_vae": train_audio_vae, "vocoder": train_vocoder}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("stage", choices=list(STAGES))
    ap.add_argument("--state", type=Path, required=True, help="the folder of the stages' saved states")
    ap.add_argument("--minutes", type=float, default=10.0)
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    args.state.mkdir(parents=True, exist_ok=True)
    STAGES[args.stage](args.state, args.minutes)


if __name__ == "__main__":
    main()

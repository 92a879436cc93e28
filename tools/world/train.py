"""Trains the embedded default on the world of tools/world/world.py with the official ltx-core classes at the tiny
configuration of tools/world/model_config.json, one component at a time, each stage bounded in minutes and resumable:
its state (weights, optimizer, step, random streams) is saved in the state folder every few minutes and at the end,
and the next run of the stage continues from it. Seeds are fixed, so a stage's weights depend only on its steps (and
on float summation order, which changes with --threads).

    python3 tools/world/train.py video_vae --state /work/world-train --minutes 30

Stages (in order; later ones read the earlier ones' weights):
  video_vae   the video VAE as an autoencoder on the world's clips (MSE, the object's pixels weighted; the latent
              perturbed by noise so that the decoder tolerates the sampler's small errors, its first nine channels
              anchored to the cells' colors and the object's: see train_video_vae); at the end of each run the
              per-channel latent statistics are measured on 256 clips (STATE/video_vae_statistics.pt, set in both
              halves at export). The encoder is final from here on: the latents are made from it.
  audio_vae   the audio VAE on the clips' log-mel spectrograms (ltx-core's AudioProcessor: 16 kHz, 64 bins),
              MSE with noise on the latent; its statistics over the patchified latent's features.
  vocoder     BigVGAN with bandwidth extension, crops of log-mel (of the true sound) to 48 kHz stereo, by a
              multi-resolution STFT magnitude loss (see train_vocoder).
  captions    (not a training stage) Gemma 3 270M's hidden states of three paraphrases of every training scene and of
              the default negative prompt, through `ltx encode --hidden-states --unpadded` (--ltx, --gemma,
              --checkpoint), kept as bf16.
  latents     (not a training stage) the frozen VAEs' latents of three clips of every training scene.
  dit         the transformer with the feature extractor and the connectors, by flow matching on those latents
              (see train_dit).
  video_decoder  the video decoder alone on the frozen encoder's latents (run beside dit; export prefers it).
  export      (not a training stage) every component in the official single-file layout, bf16, to --out, each
              loaded back through ltx-core's loader and compared.

Needs torch and ltx-core (tools/reference/requirements.txt); ltx-core's sources may be given by LTX_CORE_SRC (a
folder holding ltx_core/).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import random
import re
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
    return clip_pixels(clips), clips


def clip_pixels(clips: list[world.Clip]) -> torch.Tensor:
    """The clips' frames as the VAE takes them: [B, 3, F, H, W] in [-1, 1]."""
    frames = np.stack([c.frames for c in clips]).astype(np.float32) / 127.5 - 1.0  # [B, F, H, W, 3]
    return torch.from_numpy(frames).permute(0, 4, 1, 2, 3).contiguous()


@dataclasses.dataclass
class Budget:
    """How long a stage's run goes on: `minutes` of wall time, or until the stage's step count reaches `until_step`
    (the recipe's way: the same steps give the same weights on any machine), whichever comes first."""
    minutes: float
    until_step: int | None = None


class Stage:
    """A resumable training run: `modules` trained by `step()` under AdamW, state in STATE/<name>.pt."""

    def __init__(self, name: str, state: Path, modules: dict[str, torch.nn.Module], lr: float, seed: int,
                 lr_at=None):
        """`lr_at(step)`, when given, sets the learning rate of every step (a schedule); else `lr` throughout."""
        self.name, self.path, self.modules, self.lr_at = name, state / f"{name}.pt", modules, lr_at
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

    def run(self, budget: Budget, step) -> None:
        start = last_save = time.time()
        window: list[float] = []
        while time.time() - start < budget.minutes * 60 and (budget.until_step is None or
                                                             self.step_count < budget.until_step):
            if self.lr_at is not None:
                for group in self.optimizer.param_groups:
                    group["lr"] = self.lr_at(self.step_count)
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


def vae_halves(encoder_configurator, decoder_configurator, seed: int) -> dict[str, torch.nn.Module]:
    """A VAE's halves built from CONFIG with identity latent statistics (ltx-core makes them torch.empty) while it
    trains; the measured ones are kept beside the state (STATE/<vae>_statistics.pt) and set at export."""
    torch.manual_seed(seed)
    halves = {"encoder": encoder_configurator.from_config(CONFIG), "decoder": decoder_configurator.from_config(CONFIG)}
    for m in halves.values():
        m.per_channel_statistics.get_buffer("mean-of-means").zero_()
        m.per_channel_statistics.get_buffer("std-of-means").fill_(1.0)
    return halves


def video_vae_modules() -> dict[str, torch.nn.Module]:
    """The video VAE's halves, every residual block's last convolution starting at zero so that each block starts as
    the identity (without it, and at lr 1e-3, the decoder stalls at MSE 0.3 even given the clips' mean colors as its
    latent; with it and lr 1e-4 it reaches 0.07 in 400 steps)."""
    from ltx_core.model.video_vae import VideoDecoderConfigurator, VideoEncoderConfigurator

    halves = vae_halves(VideoEncoderConfigurator, VideoDecoderConfigurator, seed=100)
    for m in halves.values():
        for name, p in m.named_parameters():
            if ".conv2." in name:
                torch.nn.init.zeros_(p)
    return halves


def cell_pool(x: torch.Tensor) -> torch.Tensor:
    """Means over each latent cell: 32x32 pixels, the first frame alone, then 8 frames each (as the causal encoder
    groups them): [B, C, F, H, W] -> [B, C, F', H', W']."""
    first = torch.nn.functional.avg_pool3d(x[:, :, :1], (1, 32, 32))
    rest = torch.nn.functional.avg_pool3d(x[:, :, 1:], (8, 32, 32))
    return torch.cat([first, rest], dim=2)


def cell_colors(x: torch.Tensor) -> torch.Tensor:
    """The clip's mean color over each latent cell, x2: [B, 3, F', H', W']."""
    return 2.0 * cell_pool(x)


def object_anchors(x: torch.Tensor, object_mask: torch.Tensor) -> torch.Tensor:
    """Per latent cell: the object's coverage (x2), its mean color (x2) and the centre of its pixels relative to the
    cell's (x and y in [-1, 1]), zero where the cell holds none of it: [B, 6, F', H', W']."""
    coverage = cell_pool(object_mask)
    inside = (coverage > 0).float()
    safe = coverage.clamp_min(1e-6)
    color = cell_pool(x * object_mask) / safe
    u = (torch.arange(32, dtype=x.dtype) + 0.5) / 16 - 1  # position within a cell, [-1, 1]
    u_x = u.repeat(x.shape[-1] // 32)[None, None, None, None, :]
    u_y = u.repeat(x.shape[-2] // 32)[None, None, None, :, None]
    centre = torch.cat([cell_pool(object_mask * u_x), cell_pool(object_mask * u_y)], dim=1) / safe
    return torch.cat([2.0 * coverage, 2.0 * color * inside, centre * inside], dim=1)


def object_mask_of(x: torch.Tensor, clips: list[world.Clip]) -> torch.Tensor:
    """1 where a pixel differs from its clip's background color (the object), else 0: [B, 1, F, H, W]."""
    background = torch.tensor([world.COLORS[c.scene.background] for c in clips]) / 127.5 - 1.0
    return ((x - background[:, :, None, None, None]).abs().amax(dim=1, keepdim=True) > 0.1).float()


def train_video_vae(state: Path, budget: Budget) -> None:
    """MSE autoencoding with noise on the latent, plus anchors: the latent's first three channels are asked to be
    the cells' mean colors (cell_colors), the next six the object's coverage, color and place in each cell
    (object_anchors), and the object's pixels (those away from the background color) weigh 10x. Without the color
    anchor the encoder and decoder stall together at MSE 0.3 (the clips' variance is 0.46): a decoder given the cell
    colors learns at once, an encoder learning with it does not start. Without the object terms the object is 5% of
    the pixels and is lost: an earlier run that added them only from steps 2000 and 2514 had every background right
    and no object at 2000 steps. With all three from the start, 2421 steps (1 thread, 30 minutes) read back 18/18
    backgrounds, 12/18 object colors and 14/18 motions of held-out clips; the video_decoder stage then takes the
    colors to 16/18."""
    modules = video_vae_modules()
    stage = Stage("video_vae", state, modules, lr=1e-4, seed=101)
    encoder, decoder = modules["encoder"], modules["decoder"]

    def step(s: Stage) -> torch.Tensor:
        x, clips = clip_batch(s.rng, 2)
        z = encoder(x)
        y = decoder(z + 0.1 * torch.randn_like(z))
        mask = object_mask_of(x, clips)
        anchor = torch.mean((z[:, :3] - cell_colors(x)) ** 2) + torch.mean((z[:, 3:9] - object_anchors(x, mask)) ** 2)
        weight = 1.0 + 9.0 * mask
        return torch.mean(weight * (y - x) ** 2) + anchor + 1e-3 * torch.mean(z ** 2)

    stage.run(budget, step)
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


def train_video_decoder(state: Path, budget: Budget) -> None:
    """The video decoder alone, on the latents of the video_vae stage's encoder, frozen from then on (the
    transformer trains on its latents meanwhile: the latent space no longer moves), by the same weighted MSE with the
    same noise on the latent. Starts from the video_vae stage's decoder; STATE/video_decoder.pt, which export
    prefers."""
    modules = video_vae_modules()
    saved = torch.load(state / "video_vae.pt", weights_only=False)["modules"]
    for k, m in modules.items():
        m.load_state_dict(saved[k])
    encoder, decoder = modules["encoder"].eval().requires_grad_(False), modules["decoder"]
    stage = Stage("video_decoder", state, {"decoder": decoder}, lr=1e-4, seed=103)

    def step(s: Stage) -> torch.Tensor:
        x, clips = clip_batch(s.rng, 2)
        with torch.no_grad():
            z = encoder(x)
        y = decoder(z + 0.1 * torch.randn_like(z))
        weight = 1.0 + 9.0 * object_mask_of(x, clips)
        return torch.mean(weight * (y - x) ** 2)

    stage.run(budget, step)
    with torch.no_grad():
        x, _ = clip_batch(random.Random(102), 4)
        psnr = 10 * torch.log10(4.0 / torch.mean((decoder(encoder(x)) - x) ** 2))
    print(f"video_decoder: step {stage.step_count}, reconstruction PSNR {psnr:.1f} dB")


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

    return vae_halves(AudioEncoderConfigurator, AudioDecoderConfigurator, seed=200)


def train_audio_vae(state: Path, budget: Budget) -> None:
    modules = audio_vae_modules()
    stage = Stage("audio_vae", state, modules, lr=1e-3, seed=201)
    encoder, decoder = modules["encoder"], modules["decoder"]
    processor = mel_processor()

    def step(s: Stage) -> torch.Tensor:
        mel = log_mel(processor, audio_batch(s.rng, 4))
        z = encoder(mel)
        out = decoder(z + 0.1 * torch.randn_like(z))
        return torch.mean((out - mel[:, :, :out.shape[2]]) ** 2) + 1e-3 * torch.mean(z ** 2)

    stage.run(budget, step)
    with torch.no_grad():  # statistics over the patchified latent's features (channels x mel bins)
        loss = float(step(stage))
        rng = random.Random(202)
        z = torch.cat([encoder(log_mel(processor, audio_batch(rng, 16))) for _ in range(16)])
        features = z.permute(0, 2, 1, 3).reshape(-1, z.shape[1] * z.shape[3])
        mean, std = features.mean(dim=0), features.std(dim=0).clamp_min(1e-3)
    torch.save({"mean-of-means": mean, "std-of-means": std}, state / "audio_vae_statistics.pt")
    print(f"audio_vae: step {stage.step_count}, loss {loss:.4f}")


def stft_loss(y: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """Multi-resolution STFT magnitude loss: L1 on magnitudes and on log(magnitude + 0.01). Not spectral convergence,
    which divides by the target's norm (the world's still scenes are silent); not the log of the magnitude clamped
    at 1e-5, which the silent bins dominate (the vocoder then learns silence first and stays there); no waveform L1
    (the tone's phase is random)."""
    total = torch.zeros(())
    for n_fft, hop in ((1024, 256), (512, 128), (256, 64)):
        window = torch.hann_window(n_fft)
        a = torch.stft(y.reshape(-1, y.shape[-1]), n_fft, hop, window=window, return_complex=True).abs()
        b = torch.stft(x.reshape(-1, x.shape[-1]), n_fft, hop, window=window, return_complex=True).abs()
        total = total + torch.mean(torch.abs(a - b))
        total = total + torch.mean(torch.abs(torch.log(a + 0.01) - torch.log(b + 0.01)))
    return total


VOCODER_CROP = 32  # mel frames (0.32 s) per training example: the vocoder is convolutional
VOCODER_MID_FROM = 769  # from this step the channels' mix is compared too (they had come out in opposition)


def train_vocoder(state: Path, budget: Budget) -> None:
    """BigVGAN + bandwidth extension on crops of the clips' true log-mel (VOCODER_CROP frames, batch 4) against the
    matching stretch of the 48 kHz waveform, by stft_loss. The main vocoder's last convolution starts at 0.05x
    torch's init (its default saturates the final clamp(-1, 1), where no gradient flows), the BWE's at zero (its
    residual then starts silent, the output being the resampled 16 kHz vocoder's; otherwise the untrained BWE's
    output, input-independent, dominates)."""
    from ltx_core.model.audio_vae import VocoderConfigurator

    sys.path.insert(0, str(HERE.parent / "reference"))
    from make_audio_goldens import fill_mel_stft

    torch.manual_seed(300)
    vocoder = VocoderConfigurator.from_config(CONFIG)
    fill_mel_stft(vocoder)  # the BWE's STFT and mel buffers: torch.zeros in ltx-core, stored in real checkpoints
    with torch.no_grad():
        vocoder.vocoder.conv_post.weight.mul_(0.05)
        vocoder.bwe_generator.conv_post.weight.zero_()
    stage = Stage("vocoder", state, {"vocoder": vocoder}, lr=3e-4, seed=301)
    processor = mel_processor()
    samples_per_frame = world.SAMPLE_RATE * CONFIG["audio_vae"]["preprocessing"]["stft"]["hop_length"] // \
        CONFIG["audio_vae"]["model"]["params"]["sampling_rate"]

    def step(s: Stage) -> torch.Tensor:
        wave = audio_batch(s.rng, 4)
        mel = log_mel(processor, wave)
        start = s.rng.randrange(mel.shape[2] - VOCODER_CROP)
        out = vocoder(mel[:, :, start:start + VOCODER_CROP])
        target = wave[..., start * samples_per_frame:start * samples_per_frame + out.shape[-1]]
        n = min(out.shape[-1], target.shape[-1])
        loss = stft_loss(out[..., :n], target[..., :n])
        if s.step_count >= VOCODER_MID_FROM:  # magnitudes alone let the channels drift out of phase
            loss = loss + stft_loss(out[..., :n].mean(dim=1), target[..., :n].mean(dim=1))
        return loss

    stage.run(budget, step)


# ---------------------------------------------------------------------------------------------------------------
# Captions through Gemma


CAPTION_VARIANTS = 3  # paraphrases per training scene (of world.caption's 48)
GEMMA_STATES, GEMMA_WIDTH = 19, 640  # the 270M's hidden states (layers + 1) and width


def default_negative_prompt() -> str:
    """The engine's default negative prompt (src/pipeline/params.cpp default_negative_prompt, the official one): the
    unconditional text CFG contrasts with, so the model is trained on it as the null caption."""
    source = (HERE.parent.parent / "src/pipeline/params.cpp").read_text()
    body = source[source.index("default_negative_prompt() {"):]
    body = body[:body.index(";")]
    return "".join(re.findall(r'"((?:[^"\\]|\\.)*)"', body))


def scene_captions() -> dict[world.Scene, list[str]]:
    """The paraphrases trained on, per training scene (CAPTION_VARIANTS of world.caption's 48, fixed by a seed)."""
    rng = random.Random(400)
    return {scene: [world.caption(scene, v) for v in rng.sample(range(48), CAPTION_VARIANTS)] for scene in TRAIN_SCENES}


def training_captions() -> list[str]:
    return [default_negative_prompt()] + [c for captions in scene_captions().values() for c in captions]


def train_captions(state: Path, ltx: str, gemma: str, checkpoint: str) -> None:
    """Gemma's hidden states of every training caption (`ltx encode --hidden-states --unpadded`, production
    precision as the default runs), their own tokens only, as the bf16 they are (float16 overflows: the 270M's
    middle layers reach 1e5): STATE/captions.npy [tokens, 19, 640] of bf16 bits (uint16) and STATE/captions.json
    (caption -> first row, count)."""
    import subprocess
    import tempfile

    from safetensors.torch import load_file

    captions = training_captions()
    rows, index, at = [], {}, 0
    with tempfile.TemporaryDirectory() as tmp:
        for start in range(0, len(captions), 200):
            chunk = captions[start:start + 200]
            prompts, out = Path(tmp) / "prompts.txt", Path(tmp) / "states.safetensors"
            prompts.write_text("\n".join(chunk) + "\n")
            subprocess.run([ltx, "encode", "--prompts-file", str(prompts), "--text-encoder", gemma, "--checkpoint",
                            checkpoint, "--out", str(out), "--hidden-states", "--unpadded", "--precision",
                            "production"], check=True, stdout=subprocess.DEVNULL)
            tensors = load_file(str(out))
            for i, text in enumerate(chunk):
                states = torch.stack([tensors[f"prompt.{i}.hidden_states.{l}"][0].to(torch.bfloat16)
                                      for l in range(GEMMA_STATES)], dim=1)
                rows.append(states.view(torch.int16).numpy().view(np.uint16))
                index[text] = [at, states.shape[0]]
                at += states.shape[0]
            print(f"captions: {start + len(chunk)} of {len(captions)}", flush=True)
    np.save(state / "captions.npy", np.concatenate(rows))
    (state / "captions.json").write_text(json.dumps(index))


class CaptionStates:
    """The stored hidden states of the training captions."""

    def __init__(self, state: Path, columns: int = 1024):
        self.states = np.load(state / "captions.npy", mmap_mode="r")
        self.index = json.loads((state / "captions.json").read_text())
        self.columns = columns

    def tokens(self, text: str) -> torch.Tensor:
        """A caption's own tokens' states, [1, n, 640, 19]."""
        first, n = self.index[text]
        bits = self.states[first:first + n].astype(np.uint32) << 16  # bf16 -> f32, exactly
        return torch.from_numpy(bits.view(np.float32)).permute(0, 2, 1)[None]

    def padded(self, text: str) -> tuple[tuple[torch.Tensor, ...], torch.Tensor]:
        """As the engine feeds them: 19 tensors [1, columns, 640] left-padded with zeros, and the mask [1, columns]."""
        t = self.tokens(text)
        out = torch.zeros(1, self.columns, *t.shape[2:])
        out[:, self.columns - t.shape[1]:] = t
        mask = torch.zeros(1, self.columns, dtype=torch.int64)
        mask[:, self.columns - t.shape[1]:] = 1
        return tuple(out[..., l] for l in range(out.shape[-1])), mask

    def encode(self, text_modules: torch.nn.Module, text: str):
        """What text_modules.process_hidden_states(*self.padded(text)) returns, 20x cheaper: the feature extractor
        works per token and zeroes the pads, so it runs on the caption's own tokens and the pads' rows are its
        projections' biases (check_encode compares the two)."""
        tokens = self.tokens(text)
        n = tokens.shape[1]
        extractor = text_modules.feature_extractor
        video, audio = extractor(tokens, torch.ones(1, n, dtype=torch.int64))
        pads = self.columns - n
        video = torch.cat([extractor.video_aggregate_embed.bias.expand(1, pads, -1), video], dim=1)
        audio = torch.cat([extractor.audio_aggregate_embed.bias.expand(1, pads, -1), audio], dim=1)
        mask = torch.zeros(1, self.columns, dtype=torch.int64)
        mask[:, pads:] = 1
        from ltx_core.text_encoders.gemma.embeddings_processor import convert_to_additive_mask

        video, audio, _ = text_modules.create_embeddings(video, audio, convert_to_additive_mask(mask, video.dtype))
        return video, audio

    def check_encode(self, text_modules: torch.nn.Module, text: str) -> None:
        with torch.no_grad():
            full = text_modules.process_hidden_states(*self.padded(text))
            video, audio = self.encode(text_modules, text)
        for a, b in ((full.video_encoding, video), (full.audio_encoding, audio)):
            if not torch.allclose(a, b, rtol=1e-4, atol=1e-5):
                raise RuntimeError(f"the cheap caption encoding differs from ltx-core's by {(a - b).abs().max()}")


# ---------------------------------------------------------------------------------------------------------------
# The transformer, the feature extractor and the connectors


def text_modules() -> torch.nn.Module:
    """ltx-core's EmbeddingsProcessor for the 270M's states: the V2 feature extractor (per-token RMS norm, one
    aggregate embed per modality) sized for 19 x 640 instead of the 12B's 49 x 3840 that its configurator assumes,
    and the connectors as configured."""
    from ltx_core.text_encoders.gemma.embeddings_connector import (
        AudioEmbeddings1DConnectorConfigurator,
        Embeddings1DConnectorConfigurator,
    )
    from ltx_core.text_encoders.gemma.embeddings_processor import EmbeddingsProcessor
    from ltx_core.text_encoders.gemma.feature_extractor import FeatureExtractorV2

    t = CONFIG["transformer"]
    flat = GEMMA_STATES * GEMMA_WIDTH
    extractor = FeatureExtractorV2(
        video_aggregate_embed=torch.nn.Linear(flat, t["num_attention_heads"] * t["attention_head_dim"]),
        embedding_dim=GEMMA_WIDTH,
        audio_aggregate_embed=torch.nn.Linear(flat, t["audio_num_attention_heads"] * t["audio_attention_head_dim"]))
    return EmbeddingsProcessor(feature_extractor=extractor,
                               video_connector=Embeddings1DConnectorConfigurator.from_config(CONFIG),
                               audio_connector=AudioEmbeddings1DConnectorConfigurator.from_config(CONFIG))


def frozen_encoders(state: Path) -> tuple[torch.nn.Module, torch.nn.Module]:
    """The trained video and audio VAE encoders with their measured statistics, frozen."""
    video, audio = video_vae_modules()["encoder"], audio_vae_modules()["encoder"]
    video.load_state_dict(torch.load(state / "video_vae.pt", weights_only=False)["modules"]["encoder"])
    audio.load_state_dict(torch.load(state / "audio_vae.pt", weights_only=False)["modules"]["encoder"])
    for module, name in ((video, "video_vae"), (audio, "audio_vae")):
        stats = torch.load(state / f"{name}_statistics.pt")
        for k, v in stats.items():
            module.per_channel_statistics.get_buffer(k).copy_(v)
        module.eval().requires_grad_(False)
    return video, audio


def latent_tools(batch: int, video_shape: tuple[int, ...], audio_shape: tuple[int, ...]):
    """ltx-core's latent tools for the default's clip (positions as the pipelines compute them)."""
    from ltx_core.components.patchifiers import AudioPatchifier, VideoLatentPatchifier
    from ltx_core.tools import AudioLatentTools, VideoLatentTools
    from ltx_core.types import AudioLatentShape, VideoLatentShape

    video = VideoLatentTools(VideoLatentPatchifier(patch_size=1), VideoLatentShape(batch, *video_shape), world.FPS)
    audio = AudioLatentTools(AudioPatchifier(patch_size=1), AudioLatentShape(batch, *audio_shape))
    return video, audio


def audio_latent_frames() -> int:
    """The audio latent frames the pipelines make for the clip's duration (AudioLatentShape.from_duration)."""
    from ltx_core.types import AudioLatentShape

    return AudioLatentShape.from_duration(batch=1, duration=world.FRAMES / world.FPS).frames


CLIPS_PER_SCENE = 3  # the clips whose latents the transformer trains on, per training scene


def encode_latents(state: Path) -> None:
    """The frozen VAEs' latents of CLIPS_PER_SCENE clips of every training scene (fixed seeds), encoded once:
    STATE/latents.pt holds video [N, C, F', H', W'] and audio [N, C, T, mel] latents and each clip's scene key. The
    transformer's steps then cost the transformer alone."""
    video_encoder, audio_encoder = frozen_encoders(state)
    processor, frames = mel_processor(), audio_latent_frames()
    rng = random.Random(450)
    jobs = [(scene, rng.randrange(1 << 30)) for scene in TRAIN_SCENES for _ in range(CLIPS_PER_SCENE)]
    videos, audios = [], []
    start = time.time()
    with torch.no_grad():
        for at in range(0, len(jobs), 8):
            clips = [world.make_clip(scene, seed) for scene, seed in jobs[at:at + 8]]
            videos.append(video_encoder(clip_pixels(clips)))
            z = audio_encoder(log_mel(processor, torch.from_numpy(np.stack([c.audio for c in clips]))))
            audios.append(torch.nn.functional.pad(z, (0, 0, 0, max(0, frames - z.shape[2])))[:, :, :frames])
            if at % 400 == 0:
                print(f"latents: {at + len(clips)} of {len(jobs)} ({time.time() - start:.0f} s)", flush=True)
    torch.save({"video": torch.cat(videos), "audio": torch.cat(audios), "scenes": [s.key() for s, _ in jobs]},
               state / "latents.pt")


def dit_learning_rate(step: int) -> float:
    """3e-4, then 1e-3 from step 4600: at 4092 steps the right caption lowered the video loss at sigma 0.9 by 11%
    against a wrong one (it had by 10% at 3545), the sampler's backgrounds were right 1 time in 12, and the loss had
    flattened at 0.7. The text reaches the video only through cross-attention over 1024 context tokens of which the
    caption's own are about 20 (the rest the connectors' registers): a slow signal to learn."""
    return 3e-4 if step < 4600 else 1e-3


DIT_HIGH_NOISE_FROM = 8281  # the step from which half of each batch is drawn at high noise (dit_sigmas)


def dit_sigmas(step: int, b: int) -> torch.Tensor:
    """The noise levels of a batch: logit-normal (sigmoid of a standard normal), and from DIT_HIGH_NOISE_FROM half
    of the clips from sigmoid(N(2, 1)), mostly above 0.8. At 8281 steps the transformer predicted the background
    from the noisy latent itself, not from the caption: at sigma 0.99 its clean-latent estimate of the background
    was the same for the caption and for the negative prompt, and the sampler, which starts at 1, drew backgrounds
    from its noise (0/12 right). Logit-normal(0, 1) puts 1.4% of the steps above 0.9, where only the caption can say
    the background's color. 1500 steps after the switch the estimate at 0.99 had the caption's background, and at
    15559 steps the sampler drew 36 of 36 held-out backgrounds right (tools/world/README.md)."""
    shift = 2.0 * (torch.rand(b) < 0.5) if step >= DIT_HIGH_NOISE_FROM else torch.zeros(b)
    return torch.sigmoid(torch.randn(b) + shift)


def train_dit(state: Path, budget: Budget) -> None:
    """Flow matching (x_t = (1 - s) x0 + s eps, the velocity eps - x0 as target, s from dit_sigmas) on the stored
    latents (encode_latents), one caption per pair of clips of a scene from its paraphrases (the negative prompt
    instead one time in ten: CFG's unconditional), the first latent frame kept clean one time in four
    (image-to-video: those tokens get timestep 0 and no loss, as an image condition at frame 0 makes them)."""
    from ltx_core.guidance.perturbations import BatchedPerturbationConfig
    from ltx_core.model.transformer.model_configurator import LTXModelConfigurator
    from ltx_core.model.transformer.modality import Modality

    latents = torch.load(state / "latents.pt", weights_only=False)
    scenes = {s.key(): s for s in TRAIN_SCENES}
    captions = CaptionStates(state)
    by_scene = scene_captions()
    negative = default_negative_prompt()
    torch.manual_seed(500)
    modules = {"transformer": LTXModelConfigurator.from_config(CONFIG), "text": text_modules()}
    with torch.no_grad():  # ltx-core leaves the AdaLN tables torch.empty: randn / sqrt(dim), as LTX-Video did
        for name, p in modules["transformer"].named_parameters():
            if "scale_shift_table" in name:
                p.copy_(torch.randn_like(p) / p.shape[-1] ** 0.5)
    stage = Stage("dit", state, modules, lr=3e-4, seed=501, lr_at=dit_learning_rate)
    captions.check_encode(modules["text"], negative)
    b = 8
    video_tools, audio_tools = latent_tools(b, tuple(latents["video"].shape[1:]), tuple(latents["audio"].shape[1:]))

    def step(s: Stage) -> torch.Tensor:
        # b // 2 scenes, two of a scene's clips under one caption each (the caption's encoding, the step's largest
        # cost, is shared by the pair).
        rows, texts = [], []
        for _ in range(b // 2):
            scene = s.rng.randrange(len(latents["scenes"]) // CLIPS_PER_SCENE)
            rows += [scene * CLIPS_PER_SCENE + c for c in s.rng.sample(range(CLIPS_PER_SCENE), 2)]
            texts.append(negative if s.rng.random() < 0.1 else
                         s.rng.choice(by_scene[scenes[latents["scenes"][rows[-1]]]]))
        z_video, z_audio = latents["video"][rows], latents["audio"][rows]
        # One caption at a time, as the pipelines encode prompts (the connectors' register fill takes batch 1).
        encoded = [captions.encode(modules["text"], t) for t in texts]
        video_context = torch.cat([v for v, _ in encoded]).repeat_interleave(2, dim=0)
        audio_context = torch.cat([a for _, a in encoded]).repeat_interleave(2, dim=0)
        v_state = video_tools.create_initial_state("cpu", torch.float32, z_video)
        a_state = audio_tools.create_initial_state("cpu", torch.float32, z_audio)
        sigma = dit_sigmas(s.step_count, b)
        keep_first = torch.tensor([s.rng.random() < 0.25 for _ in range(b)])
        tokens_per_frame = z_video.shape[3] * z_video.shape[4]
        v_mask = torch.ones(b, v_state.latent.shape[1])
        v_mask[keep_first, :tokens_per_frame] = 0.0
        v_noise, a_noise = torch.randn_like(v_state.latent), torch.randn_like(a_state.latent)
        v_sigma = sigma[:, None, None] * v_mask[..., None]
        v_noisy = (1 - v_sigma) * v_state.latent + v_sigma * v_noise
        a_noisy = (1 - sigma[:, None, None]) * a_state.latent + sigma[:, None, None] * a_noise
        # Modality as modality_from_latent_state builds it, with a sigma per clip: timesteps = denoise mask x sigma.
        video = Modality(latent=v_noisy, sigma=sigma, timesteps=v_mask[..., None] * sigma[:, None, None],
                         positions=v_state.positions, context=video_context)
        audio = Modality(latent=a_noisy, sigma=sigma,
                         timesteps=torch.ones_like(a_noisy[..., :1]) * sigma[:, None, None],
                         positions=a_state.positions, context=audio_context)
        v_velocity, a_velocity = modules["transformer"](video, audio, BatchedPerturbationConfig.empty(b))
        v_err = ((v_velocity - (v_noise - v_state.latent)) ** 2).mean(dim=-1)
        a_err = ((a_velocity - (a_noise - a_state.latent)) ** 2).mean()
        return (v_err * v_mask).sum() / v_mask.sum() + a_err

    stage.run(budget, step)


# ---------------------------------------------------------------------------------------------------------------
# The checkpoint


def export(state: Path, out: Path) -> None:
    """Every stage's weights under the names the official files use (each module key through the inverse of the
    SDOps ltx-pipelines' ModelLedger loads that component with: make_layouts.py ltx_parts / file_key_for), bf16 as
    released files are, with the `config` and `model_version` metadata; then each component is built back through
    ltx-core's loader from the file and compared with what was trained."""
    sys.path.insert(0, str(HERE.parent / "reference"))
    from component_roundtrip import load_official
    from ltx_core.model.audio_vae import VocoderConfigurator
    from ltx_core.model.transformer.model_configurator import LTXModelConfigurator
    from make_audio_goldens import fill_mel_stft
    from make_layouts import file_key_for, forward_key, ltx_parts
    from safetensors.torch import save_file

    def saved(name: str) -> dict:
        return torch.load(state / f"{name}.pt", weights_only=False)["modules"]

    video, audio = video_vae_modules(), audio_vae_modules()
    for modules, name in ((video, "video_vae"), (audio, "audio_vae")):
        for k, m in modules.items():
            m.load_state_dict(saved(name)[k])
            if name == "video_vae" and k == "decoder" and (state / "video_decoder.pt").exists():
                m.load_state_dict(saved("video_decoder")["decoder"])  # trained further on the frozen latents
            for stat, v in torch.load(state / f"{name}_statistics.pt").items():
                m.per_channel_statistics.get_buffer(stat).copy_(v)
    vocoder = VocoderConfigurator.from_config(CONFIG)
    fill_mel_stft(vocoder)
    vocoder.load_state_dict(saved("vocoder")["vocoder"])
    transformer, text = LTXModelConfigurator.from_config(CONFIG), text_modules()
    transformer.load_state_dict(saved("dit")["transformer"])
    text.load_state_dict(saved("dit")["text"])
    trained = {"transformer": transformer, "embeddings_processor": text, "video_vae_encoder": video["encoder"],
               "video_vae_decoder": video["decoder"], "audio_vae_encoder": audio["encoder"],
               "audio_vae_decoder": audio["decoder"], "vocoder": vocoder}

    weights: dict[str, torch.Tensor] = {}
    for name, _, sd_ops, _ in ltx_parts():
        for k, v in trained[name].state_dict().items():
            key, v = file_key_for(sd_ops, k), v.detach().to(torch.bfloat16).contiguous()
            if key in weights and not torch.equal(weights[key], v):  # the latent statistics, shared by both halves
                raise RuntimeError(f"{key} differs between the components that share it")
            weights[key] = v
    steps = {name: torch.load(state / f"{name}.pt", weights_only=False)["step"]
             for name in STAGES if (state / f"{name}.pt").exists()}
    metadata = {"config": json.dumps(CONFIG, sort_keys=True, separators=(",", ":")), "model_version": "2.3.0",
                "ltx_default_model": "world", "ltx_world_steps": json.dumps(steps, sort_keys=True)}
    tmp = out.with_suffix(".partial")
    save_file(weights, str(tmp), metadata)
    tmp.replace(out)

    # Built back through the official loader: every trained tensor arrives where it was trained (in bf16). The
    # embeddings processor's configurator sizes its feature extractor for the 12B Gemma, so its keys are checked
    # through the SDOps alone.
    as_saved = {k: v.float() for k, v in weights.items()}
    for name, configurator, sd_ops, _ in ltx_parts():
        expected = {k: v.to(torch.bfloat16).float() for k, v in trained[name].state_dict().items()}
        if name == "embeddings_processor":
            loaded = {m: as_saved[f] for f in as_saved for m in forward_key(sd_ops, f)}
        else:
            loaded = load_official(as_saved, CONFIG, configurator, sd_ops).state_dict()
        for k, v in expected.items():
            if not torch.equal(loaded[k].float(), v):
                raise RuntimeError(f"{name}: {k} differs after loading the exported file")
    print(f"export: {len(weights)} tensors, {out.stat().st_size / 1e6:.1f} MB -> {out}; every component loads back")


def import_export(state: Path, source: Path) -> None:
    """The reverse of export, to go on training from a committed model when the state folder is lost: every stage's
    weights from the file (bf16, as exported), its step count from the file's `ltx_world_steps` metadata (so the
    schedules go on where they were), a fresh optimizer and fresh random streams (the run is no longer the recipe's
    to the bit). The captions and latents stages must be run again (the latents from the imported encoder)."""
    sys.path.insert(0, str(HERE.parent / "reference"))
    from ltx_core.model.audio_vae import VocoderConfigurator
    from ltx_core.model.transformer.model_configurator import LTXModelConfigurator
    from make_audio_goldens import fill_mel_stft
    from make_layouts import forward_key, ltx_parts
    from safetensors import safe_open

    with safe_open(str(source), "pt") as f:
        weights = {k: f.get_tensor(k).float() for k in f.keys()}
        steps = json.loads(f.metadata()["ltx_world_steps"])
    video, audio = video_vae_modules(), audio_vae_modules()
    vocoder = VocoderConfigurator.from_config(CONFIG)
    fill_mel_stft(vocoder)
    modules = {"transformer": LTXModelConfigurator.from_config(CONFIG), "embeddings_processor": text_modules(),
               "video_vae_encoder": video["encoder"], "video_vae_decoder": video["decoder"],
               "audio_vae_encoder": audio["encoder"], "audio_vae_decoder": audio["decoder"], "vocoder": vocoder}
    for name, _, sd_ops, _ in ltx_parts():
        loaded = {m: weights[f] for f in weights for m in forward_key(sd_ops, f)}
        expected = modules[name].state_dict()
        missing = [k for k in expected if k not in loaded]
        if missing:
            raise RuntimeError(f"{source}: {name} lacks {missing[:5]}")
        modules[name].load_state_dict({k: loaded[k] for k in expected})
    for halves, name in ((video, "video_vae"), (audio, "audio_vae")):  # statistics apart, identity in training
        stats = {k: v.clone() for k, v in halves["encoder"].per_channel_statistics.named_buffers()}
        torch.save(stats, state / f"{name}_statistics.pt")
        for m in halves.values():
            m.per_channel_statistics.get_buffer("mean-of-means").zero_()
            m.per_channel_statistics.get_buffer("std-of-means").fill_(1.0)
    stages = {"video_vae": video, "video_decoder": {"decoder": video["decoder"]}, "audio_vae": audio,
              "vocoder": {"vocoder": vocoder},
              "dit": {"transformer": modules["transformer"], "text": modules["embeddings_processor"]}}
    for name, parts in stages.items():
        params = [p for m in parts.values() for p in m.parameters() if p.requires_grad]
        torch.save({"modules": {k: m.state_dict() for k, m in parts.items()},
                    "optimizer": torch.optim.AdamW(params).state_dict(), "step": steps.get(name, 0),
                    "rng": random.Random(0).getstate(), "torch_rng": torch.get_rng_state()}, state / f"{name}.pt")
    print(f"import: {source} -> {state} at steps {steps}; now run the captions and latents stages")


STAGES = {"video_vae": train_video_vae, "video_decoder": train_video_decoder, "audio_vae": train_audio_vae,
          "vocoder": train_vocoder, "dit": train_dit}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("stage", choices=[*STAGES, "captions", "latents", "export", "import"])
    ap.add_argument("--out", type=Path, help="export: the checkpoint file to write")
    ap.add_argument("--from", dest="source", type=Path, help="import: an exported checkpoint to go on from")
    ap.add_argument("--ltx", help="captions: the ltx binary")
    ap.add_argument("--gemma", help="captions: the Gemma 3 270M GGUF")
    ap.add_argument("--checkpoint", help="captions: any checkpoint of the default's config (for ltx encode)")
    ap.add_argument("--state", type=Path, required=True, help="the folder of the stages' saved states")
    ap.add_argument("--minutes", type=float, default=10.0)
    ap.add_argument("--until-step", type=int, help="stop when the stage has trained this many steps in all")
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    args.state.mkdir(parents=True, exist_ok=True)
    if args.stage == "captions":
        train_captions(args.state, args.ltx, args.gemma, args.checkpoint)
    elif args.stage == "latents":
        encode_latents(args.state)
    elif args.stage == "export":
        export(args.state, args.out)
    elif args.stage == "import":
        import_export(args.state, args.source)
    else:
        STAGES[args.stage](args.state, Budget(args.minutes, args.until_step))


if __name__ == "__main__":
    main()

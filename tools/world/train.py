"""Trains the embedded default on the world of tools/world/world.py with the official ltx-core classes at the tiny
configuration of tools/world/model_config.json, one component at a time, each stage bounded in minutes and resumable:
its state (weights, optimizer, step, random streams) is saved in the state folder every few minutes and at the end,
and the next run of the stage continues from it. Seeds are fixed, so a stage's weights depend only on its steps (and
on float summation order, which changes with --threads).

    python3 tools/world/train.py video_vae --state /work/world-train --minutes 30

Stages (in order; later ones read the earlier ones' weights):
  video_vae   the video VAE as an autoencoder on the world's clips (MSE; the latent kept near unit scale and
              perturbed by noise so that the decoder tolerates the sampler's small errors); at the end of each run
              the per-channel latent statistics are measured on 256 clips (STATE/video_vae_statistics.pt, set in
              both halves at export).
  audio_vae   the audio VAE on the clips' log-mel spectrograms (ltx-core's AudioProcessor: 16 kHz, 64 bins),
              the same way; its statistics over the patchified latent's features.
  vocoder     BigVGAN with bandwidth extension, log-mel (of the true sound) to 48 kHz stereo, by a multi-resolution
              STFT loss plus L1 on the waveform.
  captions    (not a training stage) Gemma 3 270M's hidden states of three paraphrases of every training scene and of
              the default negative prompt, through `ltx encode --hidden-states --unpadded` (--ltx, --gemma,
              --checkpoint), kept as bf16.
  dit         the transformer with the feature extractor and the connectors, by flow matching on the frozen VAEs'
              latents (see train_dit).
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
    from ltx_core.model.video_vae import VideoDecoderConfigurator, VideoEncoderConfigurator

    return vae_halves(VideoEncoderConfigurator, VideoDecoderConfigurator, seed=100)


def train_video_vae(state: Path, minutes: float) -> None:
    modules = video_vae_modules()
    stage = Stage("video_vae", state, modules, lr=1e-3, seed=101)
    encoder, decoder = modules["encoder"], modules["decoder"]

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

    return vae_halves(AudioEncoderConfigurator, AudioDecoderConfigurator, seed=200)


def train_audio_vae(state: Path, minutes: float) -> None:
    modules = audio_vae_modules()
    stage = Stage("audio_vae", state, modules, lr=1e-3, seed=201)
    encoder, decoder = modules["encoder"], modules["decoder"]
    processor = mel_processor()

    def step(s: Stage) -> torch.Tensor:
        mel = log_mel(processor, audio_batch(s.rng, 4))
        z = encoder(mel)
        out = decoder(z + 0.1 * torch.randn_like(z))
        return torch.mean((out - mel[:, :, :out.shape[2]]) ** 2) + 1e-3 * torch.mean(z ** 2)

    stage.run(minutes, step)
    with torch.no_grad():  # statistics over the patchified latent's features (channels x mel bins)
        loss = float(step(stage))
        rng = random.Random(202)
        z = torch.cat([encoder(log_mel(processor, audio_batch(rng, 16))) for _ in range(16)])
        features = z.permute(0, 2, 1, 3).reshape(-1, z.shape[1] * z.shape[3])
        mean, std = features.mean(dim=0), features.std(dim=0).clamp_min(1e-3)
    torch.save({"mean-of-means": mean, "std-of-means": std}, state / "audio_vae_statistics.pt")
    print(f"audio_vae: step {stage.step_count}, loss {loss:.4f}")


def stft_loss(y: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """Multi-resolution STFT magnitude loss (L1 on magnitudes and on log magnitudes; not spectral convergence, which
    divides by the target's norm: the world's still scenes are silent)."""
    total = torch.zeros(())
    for n_fft, hop in ((2048, 512), (1024, 256), (512, 128), (256, 64)):
        window = torch.hann_window(n_fft)
        a = torch.stft(y.reshape(-1, y.shape[-1]), n_fft, hop, window=window, return_complex=True).abs()
        b = torch.stft(x.reshape(-1, x.shape[-1]), n_fft, hop, window=window, return_complex=True).abs()
        total = total + torch.mean(torch.abs(a - b))
        total = total + torch.mean(torch.abs(torch.log(a.clamp_min(1e-5)) - torch.log(b.clamp_min(1e-5))))
    return total


def train_vocoder(state: Path, minutes: float) -> None:
    from ltx_core.model.audio_vae import VocoderConfigurator

    sys.path.insert(0, str(HERE.parent / "reference"))
    from make_audio_goldens import fill_mel_stft

    torch.manual_seed(300)
    vocoder = VocoderConfigurator.from_config(CONFIG)
    fill_mel_stft(vocoder)  # the BWE's STFT and mel buffers: torch.zeros in ltx-core, stored in real checkpoints
    with torch.no_grad():  # torch's default init saturates the final clamp(-1, 1), where no gradient flows
        for name, p in vocoder.named_parameters():
            if name.endswith("conv_post.weight"):
                p.mul_(0.05)
    stage = Stage("vocoder", state, {"vocoder": vocoder}, lr=5e-4, seed=301)
    processor = mel_processor()

    def step(s: Stage) -> torch.Tensor:
        wave = audio_batch(s.rng, 2)
        out = vocoder(log_mel(processor, wave))
        n = min(out.shape[-1], wave.shape[-1])
        return stft_loss(out[..., :n], wave[..., :n]) + torch.mean(torch.abs(out[..., :n] - wave[..., :n]))

    stage.run(minutes, step)


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
    """The stored hidden states, as the engine feeds them: left-padded to 1024 columns, zeros at the pads."""

    def __init__(self, state: Path, columns: int = 1024):
        self.states = np.load(state / "captions.npy", mmap_mode="r")
        self.index = json.loads((state / "captions.json").read_text())
        self.columns = columns

    def batch(self, captions: list[str]) -> tuple[tuple[torch.Tensor, ...], torch.Tensor]:
        """(19 tensors [B, columns, 640], mask [B, columns])."""
        out = np.zeros((len(captions), self.columns, GEMMA_STATES, GEMMA_WIDTH), np.float32)
        mask = np.zeros((len(captions), self.columns), np.int64)
        for b, text in enumerate(captions):
            first, n = self.index[text]
            bits = self.states[first:first + n].astype(np.uint32) << 16  # bf16 -> f32, exactly
            out[b, self.columns - n:] = bits.view(np.float32)
            mask[b, self.columns - n:] = 1
        t = torch.from_numpy(out)
        return tuple(t[:, :, l] for l in range(GEMMA_STATES)), torch.from_numpy(mask)


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


def train_dit(state: Path, minutes: float) -> None:
    """Flow matching (x_t = (1 - s) x0 + s eps, the velocity eps - x0 as target, s logit-normal) on the frozen VAEs'
    latents of training clips, one caption per clip from its stored paraphrases (the negative prompt instead one
    time in ten: CFG's unconditional), the first latent frame kept clean one time in four (image-to-video: those
    tokens get timestep 0 and no loss, as an image condition at frame 0 makes them)."""
    from ltx_core.guidance.perturbations import BatchedPerturbationConfig
    from ltx_core.model.transformer.model_configurator import LTXModelConfigurator
    from ltx_core.model.transformer.modality import Modality

    video_encoder, audio_encoder = frozen_encoders(state)
    processor = mel_processor()
    captions = CaptionStates(state)
    by_scene = scene_captions()
    negative = default_negative_prompt()
    torch.manual_seed(500)
    modules = {"transformer": LTXModelConfigurator.from_config(CONFIG), "text": text_modules()}
    with torch.no_grad():  # ltx-core leaves the AdaLN tables torch.empty: randn / sqrt(dim), as LTX-Video did
        for name, p in modules["transformer"].named_parameters():
            if "scale_shift_table" in name:
                p.copy_(torch.randn_like(p) / p.shape[-1] ** 0.5)
    stage = Stage("dit", state, modules, lr=3e-4, seed=501)
    frames = audio_latent_frames()

    def step(s: Stage) -> torch.Tensor:
        b = 4
        pixels, clips = clip_batch(s.rng, b)
        with torch.no_grad():
            z_video = video_encoder(pixels)
            z_audio = audio_encoder(log_mel(processor, torch.from_numpy(np.stack([c.audio for c in clips]))))
            z_audio = torch.nn.functional.pad(z_audio, (0, 0, 0, max(0, frames - z_audio.shape[2])))[:, :, :frames]
        texts = [negative if s.rng.random() < 0.1 else s.rng.choice(by_scene[c.scene]) for c in clips]
        # One caption at a time, as the pipelines encode prompts (the connectors' register fill takes batch 1).
        encoded = [modules["text"].process_hidden_states(*captions.batch([t])) for t in texts]
        video_context = torch.cat([e.video_encoding for e in encoded])
        audio_context = torch.cat([e.audio_encoding for e in encoded])
        video_tools, audio_tools = latent_tools(b, tuple(z_video.shape[1:]), tuple(z_audio.shape[1:]))
        v_state = video_tools.create_initial_state("cpu", torch.float32, z_video)
        a_state = audio_tools.create_initial_state("cpu", torch.float32, z_audio)
        sigma = torch.sigmoid(torch.randn(b))
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

    stage.run(minutes, step)


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
    metadata = {"config": json.dumps(CONFIG, sort_keys=True, separators=(",", ":")), "model_version": "2.3.0",
                "ltx_default_model": "world"}
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


STAGES = {"video_vae": train_video_vae, "audio_vae": train_audio_vae, "vocoder": train_vocoder, "dit": train_dit}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("stage", choices=[*STAGES, "captions", "export"])
    ap.add_argument("--out", type=Path, help="export: the checkpoint file to write")
    ap.add_argument("--ltx", help="captions: the ltx binary")
    ap.add_argument("--gemma", help="captions: the Gemma 3 270M GGUF")
    ap.add_argument("--checkpoint", help="captions: any checkpoint of the default's config (for ltx encode)")
    ap.add_argument("--state", type=Path, required=True, help="the folder of the stages' saved states")
    ap.add_argument("--minutes", type=float, default=10.0)
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    args.state.mkdir(parents=True, exist_ok=True)
    if args.stage == "captions":
        train_captions(args.state, args.ltx, args.gemma, args.checkpoint)
    elif args.stage == "export":
        export(args.state, args.out)
    else:
        STAGES[args.stage](args.state, args.minutes)


if __name__ == "__main__":
    main()

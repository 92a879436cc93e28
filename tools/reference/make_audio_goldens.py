"""Audio golden cases (group `audio`): mel front end, audio VAE encoder/decoder, HiFi-GAN and BigVGAN+BWE vocoders.

Components and params
  audio_mel_frontend  the official audio preprocessing (`ltx_core.model.audio_vae.ops.AudioProcessor`, built as
                      `encode_audio` builds it from the audio encoder's config): resample to the VAE rate with
                      torchaudio.functional.resample (only when the rates differ), MelSpectrogram (Hann, center,
                      reflect, magnitude, slaney mel scale and norm), log(clamp(·, 1e-5)), transposed to
                      [B, C, T, mel]. Input `waveform` [B,2,N] at params.input_sampling_rate; output `mel`.
                      Weights file: no tensors, only the `config` ({"audio_vae": ...}) the parameters come from.
                      Intermediates: `resampled` (waveform at the target rate), `mel_transform.spectrogram.out`
                      [B,C,n_fft/2+1,T], `mel_transform.mel_scale.out` [B,C,mel,T]; the 48 kHz case also records the
                      constant filterbank `mel_transform.mel_scale.fb` [n_fft/2+1, mel].
  audio_vae_encoder   input `mel` [B,2,T,mel] (T = 4k+1); output `latent` [B,z,k+1,mel/4], normalised with the
                      per-channel statistics in the patchified [B,T,z·mel/4] layout.
  audio_vae_decoder   input `latent` [B,z,T_a,mel/4]; output `mel` [B,2,4·T_a-3,mel].
  vocoder             input `mel` [B,2,T,64]; output `waveform` [B,2,N]. params.variant: "hifigan" (2.0, flat
                      config) or "bigvgan_bwe" (2.3, nested {"vocoder", "bwe"} config; output clamp(residual + skip)).

Weights carry the real checkpoint names: `audio_vae.encoder.*`, `audio_vae.decoder.*`,
`audio_vae.per_channel_statistics.*`, `vocoder.*` (2.3: `vocoder.vocoder.*`, `vocoder.bwe_generator.*`,
`vocoder.mel_stft.*`). The BWE STFT/mel buffers (zeros in the constructor, loaded from the checkpoint) hold a
Hann-windowed DFT basis and a slaney mel filterbank rounded to bf16, as the real checkpoint stores them.
"""

from __future__ import annotations

import math
from pathlib import Path

import torch
import torchaudio
from component_roundtrip import roundtrip, stats_rule
from golden_case import GoldenCase, Recorder, canonical_json, seeded_randn, to_reference, with_measured_production
from ltx_core.model.audio_vae import (
    AUDIO_VAE_DECODER_COMFY_KEYS_FILTER,
    AUDIO_VAE_ENCODER_COMFY_KEYS_FILTER,
    VOCODER_COMFY_KEYS_FILTER,
    AudioDecoderConfigurator,
    AudioEncoderConfigurator,
    AudioProcessor,
    VocoderConfigurator,
)
from ltx_core.types import Audio

GROUPS = ("audio",)
GENERATOR = "tools/reference/make_audio_goldens.py"
STATS = ("per_channel_statistics.mean-of-means", "per_channel_statistics.std-of-means")
TOLERANCE = {"validation": {"atol": 1e-4, "rtol": 1e-4}, "production": {"atol": 5e-2, "rtol": 5e-2}}


def audio_vae_config(ch: int, ch_mult: list[int], z_channels: int, mel_bins: int, num_res_blocks: int) -> dict:
    """`config.audio_vae` with the real nesting; ch must equal z_channels·mel_bins/4 (the statistics length)."""
    assert ch == z_channels * mel_bins // 4
    return {
        "audio_vae": {
            "model": {
                "params": {
                    "sampling_rate": 16000,
                    "ddconfig": {
                        "double_z": True,
                        "mel_bins": mel_bins,
                        "z_channels": z_channels,
                        "resolution": 256,
                        "downsample_time": False,
                        "in_channels": 2,
                        "out_ch": 2,
                        "ch": ch,
                        "ch_mult": ch_mult,
                        "num_res_blocks": num_res_blocks,
                        "attn_resolutions": [],
                        "dropout": 0.0,
                        "mid_block_add_attention": False,
                        "norm_type": "pixel",
                        "causality_axis": "height",
                    },
                }
            },
            "preprocessing": {
                "stft": {"filter_length": 1024, "hop_length": 160, "win_length": 1024, "causal": True},
                "mel": {"n_mel_channels": mel_bins, "mel_fmin": 0, "mel_fmax": 8000},
            },
        }
    }


# Real ch_mult and block counts, tiny width: ch 8 = z 2 × (16 mel bins / 4).
AUDIO_VAE_TINY = audio_vae_config(ch=8, ch_mult=[1, 2, 4], z_channels=2, mel_bins=16, num_res_blocks=2)
# The front end runs at the real sizes (n_fft 1024, hop 160, 64 mel bins); it has no weights.
AUDIO_VAE_FRONTEND = audio_vae_config(ch=128, ch_mult=[1, 2, 4], z_channels=8, mel_bins=64, num_res_blocks=2)

# LTX-2.0 HiFi-GAN: real rates/kernels/resblocks, initial width 32 (real 1024).
VOCODER_2_0 = {
    "vocoder": {
        "resblock": "1",
        "stereo": True,
        "upsample_initial_channel": 32,
        "upsample_rates": [6, 5, 2, 2, 2],
        "upsample_kernel_sizes": [16, 15, 8, 4, 4],
        "resblock_kernel_sizes": [3, 7, 11],
        "resblock_dilation_sizes": [[1, 3, 5], [1, 3, 5], [1, 3, 5]],
        "output_sampling_rate": 24000,
    }
}

# LTX-2.3 BigVGAN-v2 + bandwidth extension. Main generator: 4 stages with the real ×160, width 16 (real: 6 stages,
# 1536 wide). BWE: real rates/kernels (×240), width 32 (real 512); STFT n_fft 128 (real 512) with the real hop 80.
_AMP = {
    "resblock": "AMP1",
    "activation": "snakebeta",
    "stereo": True,
    "resblock_kernel_sizes": [3, 7, 11],
    "resblock_dilation_sizes": [[1, 3, 5], [1, 3, 5], [1, 3, 5]],
    "use_tanh_at_final": False,
    "use_bias_at_final": False,
}
VOCODER_2_3 = {
    "vocoder": {
        "vocoder": {
            **_AMP,
            "upsample_initial_channel": 16,
            "upsample_rates": [5, 4, 4, 2],
            "upsample_kernel_sizes": [11, 8, 8, 4],
            "output_sampling_rate": 16000,
        },
        "bwe": {
            **_AMP,
            "upsample_initial_channel": 32,
            "upsample_rates": [6, 5, 2, 2, 2],
            "upsample_kernel_sizes": [12, 11, 4, 4, 4],
            "input_sampling_rate": 16000,
            "output_sampling_rate": 48000,
            "n_fft": 128,
            "hop_length": 80,
            "num_mels": 64,
        },
    }
}


def audio_vae_key(part: str):
    return lambda k: "audio_vae." + k if k.startswith("per_channel_statistics.") else f"audio_vae.{part}." + k


def module_paths(model: torch.nn.Module, keep) -> list[str]:
    return [n for n, _ in model.named_modules() if n and keep(n)]


def _is_block(n: str, stage: str) -> bool:
    p = n.split(".")
    return p[0] == stage and (
        (len(p) == 4 and p[2] == "block") or (len(p) == 3 and p[2] in ("downsample", "upsample"))
    )


def encoder_case() -> GoldenCase:
    seed = 1000
    model, weights = roundtrip(
        AUDIO_VAE_TINY, AudioEncoderConfigurator, AUDIO_VAE_ENCODER_COMFY_KEYS_FILTER, audio_vae_key("encoder"),
        seed, rules=[stats_rule], seeded_buffers=STATS,
    )
    mel = seeded_randn((1, 2, 17, 16), seed + 1, 2.0) - 4.0  # log-mel-like values
    rec = Recorder()
    paths = ["conv_in", *module_paths(model, lambda n: _is_block(n, "down")), "mid.block_1", "mid.block_2",
             "norm_out", "conv_out"]
    rec.capture(model, {p: "out" for p in paths})
    with torch.no_grad():
        latent = model(to_reference(mel))
    rec.close()
    return GoldenCase(
        group="audio", case="audio_vae_encoder", component="audio_vae_encoder",
        description="Audio VAE encoder, real ch_mult (1,2,4) and 2 res blocks, ch 8, z 2, 16 mel bins: "
        "mel 17 frames -> latent 5 frames",
        generator=GENERATOR, weights=weights, weights_metadata={"config": canonical_json(AUDIO_VAE_TINY)},
        inputs={"mel": mel}, outputs={"latent": latent}, intermediates=rec.values, params={}, tolerance=TOLERANCE,
    )


def decoder_case() -> GoldenCase:
    seed = 1100
    model, weights = roundtrip(
        AUDIO_VAE_TINY, AudioDecoderConfigurator, AUDIO_VAE_DECODER_COMFY_KEYS_FILTER, audio_vae_key("decoder"),
        seed, rules=[stats_rule], seeded_buffers=STATS,
    )
    latent = seeded_randn((1, 2, 5, 4), seed + 1)
    rec = Recorder()
    paths = ["conv_in", "mid.block_1", "mid.block_2", *module_paths(model, lambda n: _is_block(n, "up")),
             "norm_out", "conv_out"]
    rec.capture(model, {p: "out" for p in paths})
    pre = model.conv_in.register_forward_pre_hook(lambda _m, a: rec.add("conv_in.in.x", a[0]))
    with torch.no_grad():
        mel = model(to_reference(latent))
    rec.close()
    pre.remove()
    return GoldenCase(
        group="audio", case="audio_vae_decoder", component="audio_vae_decoder",
        description="Audio VAE decoder (same tiny config as the encoder case): latent 5 frames -> mel 17 frames "
        "(conv_out.out is before the crop/pad to 4*T-3)",
        generator=GENERATOR, weights=weights, weights_metadata={"config": canonical_json(AUDIO_VAE_TINY)},
        inputs={"latent": latent}, outputs={"mel": mel}, intermediates=rec.values, params={}, tolerance=TOLERANCE,
    )


def test_waveform(rate: int, seconds: float, seed: int) -> torch.Tensor:
    """Stereo tones (one above the 8 kHz cut-off of the 16 kHz target) plus a little noise, peak ≈ 0.8."""
    n = int(round(rate * seconds))
    t = torch.arange(n, dtype=torch.float64) / rate
    left = 0.4 * torch.sin(2 * math.pi * 440.0 * t) + 0.2 * torch.sin(2 * math.pi * 3150.0 * t)
    right = 0.3 * torch.sin(2 * math.pi * 1234.5 * t + 0.5) + 0.2 * torch.sin(2 * math.pi * 9500.0 * t)
    wave = torch.stack([left, right]).to(torch.float32)[None]
    return wave + seeded_randn(wave.shape, seed, 0.05)


def frontend_case(rate: int, seed: int, record_constants: bool) -> GoldenCase:
    config = AUDIO_VAE_FRONTEND
    encoder = AudioEncoderConfigurator.from_config(config)  # only for its preprocessing attributes
    processor = AudioProcessor(
        target_sample_rate=encoder.sample_rate, mel_bins=encoder.mel_bins, mel_hop_length=encoder.mel_hop_length,
        n_fft=encoder.n_fft,
    )
    wave = test_waveform(rate, 0.2, seed)
    rec = Recorder()
    rec.capture(processor, {"mel_transform.spectrogram": "out", "mel_transform.mel_scale": "out"})
    with torch.no_grad():
        mel = processor.waveform_to_mel(Audio(waveform=wave, sampling_rate=rate))
        resampled = processor.resample_audio(Audio(waveform=wave, sampling_rate=rate)).waveform
    rec.close()
    rec.add("resampled", resampled)
    if record_constants:
        rec.add("mel_transform.mel_scale.fb", processor.mel_transform.mel_scale.fb)
    return GoldenCase(
        group="audio", case=f"mel_frontend_{rate // 1000}k" if rate % 1000 == 0 else f"mel_frontend_{rate}",
        component="audio_mel_frontend",
        description=f"Official audio preprocessing: stereo 0.2 s at {rate} Hz -> resample to 16 kHz -> "
        "log-mel [1,2,T,64] (n_fft 1024, hop 160)",
        generator=GENERATOR, weights={}, weights_metadata={"config": canonical_json(config)},
        inputs={"waveform": wave}, outputs={"mel": mel}, intermediates=rec.values,
        params={"input_sampling_rate": rate, "target_sampling_rate": encoder.sample_rate,
                "resample": "torchaudio.functional.resample defaults (sinc_interp_hann, lowpass_filter_width 6, "
                "rolloff 0.99)"},
        tolerance={"validation": {"atol": 1e-4, "rtol": 1e-4}, "production": {"atol": 1e-3, "rtol": 1e-3}},
    )


def fill_mel_stft(module: torch.nn.Module) -> None:
    """The BWE's causal STFT and mel buffers (real checkpoints store them in bf16): rows 0..n/2 of the forward
    basis are cos·window, the next n/2+1 rows -sin·window (periodic Hann); the inverse basis is the matching
    synthesis basis (unused in the forward pass); mel_basis is a slaney filterbank up to 8 kHz."""
    stft = module.mel_stft
    n_fft = stft.stft_fn.forward_basis.shape[-1]
    n_freqs = n_fft // 2 + 1
    k = torch.arange(n_freqs, dtype=torch.float64)[:, None]
    n = torch.arange(n_fft, dtype=torch.float64)[None, :]
    window = torch.hann_window(n_fft, periodic=True, dtype=torch.float64)
    angle = 2 * math.pi * k * n / n_fft
    forward = torch.cat([torch.cos(angle), -torch.sin(angle)]) * window
    weight = torch.full((n_freqs, 1), 2.0, dtype=torch.float64)
    weight[0] = weight[-1] = 1.0
    inverse = torch.cat([torch.cos(angle) * weight, -torch.sin(angle) * weight]) * window / n_fft
    mel = torchaudio.functional.melscale_fbanks(n_freqs, 0.0, 8000.0, stft.mel_basis.shape[0], 16000, "slaney", "slaney")
    with torch.no_grad():
        for buf, value in ((stft.stft_fn.forward_basis, forward[:, None, :]),
                           (stft.stft_fn.inverse_basis, inverse[:, None, :]),
                           (stft.mel_basis, mel.T)):
            buf.copy_(value.to(torch.bfloat16).to(torch.float32))


def quiet_conv_post_rule(name: str, shape: tuple[int, ...], seed: int) -> torch.Tensor | None:
    """BigVGAN+BWE ends in clamp(-1, 1): smaller conv_post weights (x0.03 main, x0.015 BWE) keep the tiny model's
    output mostly inside the range (a saturated output would hide errors)."""
    if name.endswith("conv_post.weight"):
        gain = 0.015 if name.startswith("bwe_generator.") else 0.03
        return seeded_randn(shape, seed, gain / math.sqrt(shape[1] * shape[2]))
    return None


def bigvgan_bwe_rule(name: str, shape: tuple[int, ...], seed: int) -> torch.Tensor | None:
    """Weight scales that keep the tiny BigVGAN+BWE of the vocoder case well-conditioned in f32 (the pipeline cases
    keep quiet_conv_post_rule).

    Residual branches: the second conv of every AMP residual branch (`resblocks.*.convs2.*.weight`) at 0.2 of the
    default N(0, 1/fan_in) scale. At full scale each of the 3 residual adds per block doubles the activations'
    variance and the Jacobian's gain, so activations reached rms 35 and f32 rounding (plus the log-mel's
    amplification of the vocoder's rounding at bands near the 1e-5 clamp) grew chaotically: torch's own
    max |f32 - f64| was 3.3e-4 on bwe_generator.resblocks.14.out, 1.3x the 1e-4 validation tolerance
    (atol + rtol*|expected|), 7.9e-5 on bwe_generator.in.mel, and the engine's error 4.8e-4. Scaled, activations
    stay at rms 3-4 and the worst element of any output or intermediate is 0.074 of its tolerance (in.mel 6.8e-6).
    conv_post: as in quiet_conv_post_rule, but x0.15 on the main generator, whose residual branches are now quieter:
    output rms 0.17, none of it clamped.
    """
    if name.endswith("conv_post.weight"):
        gain = 0.015 if name.startswith("bwe_generator.") else 0.15
        return seeded_randn(shape, seed, gain / math.sqrt(shape[1] * shape[2]))
    if ".convs2." in name and name.endswith(".weight"):
        return seeded_randn(shape, seed, 0.2 / math.sqrt(shape[1] * shape[2]))
    return None


def vocoder_case(variant: str) -> GoldenCase:
    seed = 1200 if variant == "hifigan" else 1300
    config = VOCODER_2_0 if variant == "hifigan" else VOCODER_2_3
    model, weights = roundtrip(
        config, VocoderConfigurator, VOCODER_COMFY_KEYS_FILTER, lambda k: "vocoder." + k, seed,
        rules=[bigvgan_bwe_rule] if variant == "bigvgan_bwe" else [],
        fill=fill_mel_stft if variant == "bigvgan_bwe" else None,
    )
    mel = seeded_randn((1, 2, 5, 64), seed + 1, 1.5) - 3.0
    rec = Recorder()
    gens = [("", model)] if variant == "hifigan" else [("vocoder.", model.vocoder), ("bwe_generator.", model.bwe_generator)]
    paths = []
    for s, gen in gens:
        paths += [f"{s}conv_pre", *[f"{s}ups.{i}" for i in range(len(gen.ups))]]
        paths += [f"{s}resblocks.{i}" for i in range(len(gen.resblocks))] + [f"{s}act_post", f"{s}conv_post"]
    params = {"variant": variant}
    if variant == "bigvgan_bwe":
        paths += ["vocoder", "bwe_generator", "resampler"]
        rec.capture(model, {"mel_stft.stft_fn": "out"})  # first element of (magnitude, phase)
        pre = model.bwe_generator.register_forward_pre_hook(lambda _m, a: rec.add("bwe_generator.in.mel", a[0]))
        params.update(input_sampling_rate=16000, output_sampling_rate=48000, hop_length=80)
    rec.capture(model, {p: "out" for p in paths})
    with torch.no_grad():
        wave = model(to_reference(mel))
    rec.close()
    if variant == "bigvgan_bwe":
        pre.remove()
    desc = (
        "LTX-2.0 HiFi-GAN vocoder (real rates [6,5,2,2,2] and ResBlock1 [3,7,11]x(1,3,5), width 32): "
        "mel 5 frames -> 1200 samples at 24 kHz"
        if variant == "hifigan"
        else "LTX-2.3 BigVGAN-v2 (AMP1, anti-aliased SnakeBeta, no final bias, clamp) + bandwidth extension "
        "(causal STFT n_fft 128 hop 80, BWE generator x240, Hann-sinc x3 skip): mel 5 frames -> 2400 samples at 48 kHz"
    )
    return GoldenCase(
        group="audio", case=f"vocoder_{variant}", component="vocoder", description=desc, generator=GENERATOR,
        weights=weights, weights_metadata={"config": canonical_json(config)}, inputs={"mel": mel},
        outputs={"waveform": wave}, intermediates=rec.values, params=params, tolerance=TOLERANCE,
    )


CASES = {
    "audio_vae_encoder": encoder_case,
    "audio_vae_decoder": decoder_case,
    "mel_frontend_48k": lambda: frontend_case(48000, 1400, record_constants=True),
    "mel_frontend_44100": lambda: frontend_case(44100, 1500, record_constants=False),
    "vocoder_hifigan": lambda: vocoder_case("hifigan"),
    "vocoder_bigvgan_bwe": lambda: vocoder_case("bigvgan_bwe"),
}


def generate(out_root: Path, only_cases: set[str] | None, groups: set[str]) -> list[Path]:
    if "audio" not in groups:
        return []
    written = []
    for name, make in CASES.items():
        if only_cases is not None and name not in only_cases:
            continue
        written.append(with_measured_production(make).write(out_root))
    return written

"""Audio-to-video golden case (group `pipeline`, component `pipeline_a2v`): A2VidPipelineTwoStage.__call__
(ltx_pipelines/a2vid_two_stage.py, 1.0.0) on the two-stage case's tiny models plus a tiny audio VAE encoder.

  a2v_two_stage  the input audio (input.wav: 0.7 s of stereo 16-bit PCM at 44.1 kHz, a chirp and noise, written
                 here) read by utils/media_io.py decode_audio_from_file from params.audio_start for at most
                 params.audio_max_duration seconds -> `audio.clip` [2, N]; encode_audio (AudioProcessor: resample to
                 16 kHz, log-mel; the audio VAE encoder) -> `audio.encoded`, cut to the audio latent's frames;
                 stage 1 at half size by denoise_video_only: the video noised as usual, the audio state started from
                 the encoded latent with noise_scale 0 (its noise still drawn) and denoise mask 0, the video guided
                 (CFG, STG, modality, rescale) and the audio guider MultiModalGuiderParams() (no guidance); x2
                 upsample; stage 2 with the distilled sigmas (no LoRA) and the same frozen audio. Outputs: the final
                 video latent, the frozen audio latent and the clip the pipeline returns in place of decoded audio.
  a2v_default_duration  the same run with no --audio-max-duration: the value the pipeline gets is what
                 a2vid_two_stage.py main() passes when the option is absent (num_frames / frame_rate), found by
                 running main()'s own argument handling (official_cli_audio_max_duration); params.audio_input has no
                 max_duration, so the engine's default must give the same clip. Weights: ../a2v_two_stage's.
Intermediates as the two-stage case's (latents after every step, x0 of every pass).
"""

from __future__ import annotations

import io
import math
import sys
import tempfile
import wave
from pathlib import Path
from unittest import mock

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))

from component_roundtrip import roundtrip, stats_rule  # noqa: E402
from golden_case import (  # noqa: E402
    GoldenCase,
    Recorder,
    canonical_json,
    record_randn,
    reference_dtype,
    to_reference,
    with_measured_production,
)
from make_audio_goldens import STATS, audio_vae_config, audio_vae_key  # noqa: E402
from make_pipeline_goldens import (  # noqa: E402
    AUDIO_LATENT_MEL,
    AUDIO_TOKEN_WIDTH,
    AUDIO_Z,
    GUIDED_PASSES,
    SEED,
    UPSAMPLER_PREFIX,
    VIDEO_CHANNELS,
    Ledger,
    StepRecorder,
    build_weights,
    common_params,
    component_configs,
    contexts,
    guidance_params,
    guider_params,
    noise_inputs,
    pipeline_components,
    pixel_shape,
    statistics_encoder,
)
from make_pipeline_goldens import TOLERANCE as PIPELINE_TOLERANCE  # noqa: E402

GROUPS = ("pipeline",)
GENERATOR = "tools/reference/make_a2v_goldens.py"
AUDIO_START, AUDIO_MAX_DURATION, WAV_RATE, WAV_SECONDS = 0.05, 0.5, 44100, 0.7
SHARED_WEIGHTS = "a2v_two_stage"  # the default-duration case runs the explicit case's file


def input_wav() -> bytes:
    """0.7 s of stereo 16-bit PCM: a rising chirp on the left, seeded noise on the right."""
    n = int(WAV_RATE * WAV_SECONDS)
    t = np.arange(n) / WAV_RATE
    left = 0.4 * np.sin(2 * math.pi * (300 * t + 900 * t * t))
    right = 0.3 * np.random.default_rng(5).standard_normal(n).clip(-3, 3) / 3
    pcm = (np.stack([left, right], axis=1) * 32767).round().astype("<i2")
    buf = io.BytesIO()
    with wave.open(buf, "wb") as w:
        w.setnchannels(2)
        w.setsampwidth(2)
        w.setframerate(WAV_RATE)
        w.writeframes(pcm.tobytes())
    return buf.getvalue()


def official_cli_audio_max_duration(wav_path: Path, num_frames: int, fps: float) -> float | None:
    """The audio_max_duration that ltx_pipelines/a2vid_two_stage.py main() passes to the pipeline when the command
    line names no --audio-max-duration: main() run on such a command line, with the pipeline class replaced by a
    recorder of its arguments and the video writer by a no-op."""
    import ltx_pipelines.a2vid_two_stage as a2v

    seen: dict = {}

    class Recorder:
        def __init__(self, **_kwargs):
            pass

        def __call__(self, **kwargs):
            seen.update(kwargs)
            return iter(()), None

    argv = ["a2vid_two_stage", "--checkpoint-path", "unused", "--gemma-root", "unused", "--prompt", "unused",
            "--output-path", "unused.mp4", "--spatial-upsampler-path", "unused", "--distilled-lora", "unused", "1.0",
            "--audio-path", str(wav_path), "--audio-start-time", str(AUDIO_START),
            "--num-frames", str(num_frames), "--frame-rate", str(fps)]
    with mock.patch.object(a2v, "A2VidPipelineTwoStage", Recorder), \
            mock.patch.object(a2v, "encode_video", lambda **_kwargs: None), mock.patch.object(sys, "argv", argv):
        a2v.main()
    if seen.get("audio_start_time") != AUDIO_START or seen.get("num_frames") != num_frames:
        raise RuntimeError(f"a2vid_two_stage main() passed {seen}")
    return seen["audio_max_duration"]


def denoise_video_only_tiny(output_shape, noiser, sigmas, stepper, denoise_fn, components, steps: StepRecorder,
                            audio_latent, noise_scale: float = 1.0, initial_video_latent=None):
    """ltx_pipelines.utils.helpers.denoise_video_only with the tiny audio latent's channels (the pipeline's own
    noise_audio_state fixes 8): video as noise_video_state makes it, audio from the encoded latent with noise_scale
    0 and denoise mask 0, then euler_denoising_loop."""
    from dataclasses import replace

    from ltx_core.tools import AudioLatentTools
    from ltx_core.types import AudioLatentShape
    from ltx_pipelines.utils.helpers import create_noised_state, noise_video_state
    from ltx_pipelines.utils.samplers import euler_denoising_loop

    dtype, device = reference_dtype(), torch.device("cpu")
    video_state, video_tools = noise_video_state(
        output_shape=output_shape, noiser=noiser, conditionings=[], components=components, dtype=dtype,
        device=device, noise_scale=noise_scale, initial_latent=initial_video_latent,
    )
    audio_shape = AudioLatentShape.from_video_pixel_shape(output_shape, channels=AUDIO_Z, mel_bins=AUDIO_LATENT_MEL)
    audio_tools = AudioLatentTools(components.audio_patchifier, audio_shape)
    audio_state = create_noised_state(tools=audio_tools, conditionings=[], noiser=noiser, dtype=dtype, device=device,
                                      noise_scale=0.0, initial_latent=audio_latent)
    audio_state = replace(audio_state, denoise_mask=torch.zeros_like(audio_state.denoise_mask))
    steps.rec.add(f"{steps.prefix}positions.video", video_state.positions)
    steps.rec.add(f"{steps.prefix}positions.audio", audio_state.positions)
    steps.record_latents(video_state, audio_state, "initial")
    video_state, audio_state = euler_denoising_loop(sigmas=sigmas, video_state=video_state, audio_state=audio_state,
                                                    stepper=stepper, denoise_fn=steps.wrap(denoise_fn))
    steps.record_latents(video_state, audio_state, f"step{len(sigmas) - 2:02d}")
    return video_tools.unpatchify(video_tools.clear_conditioning(video_state)), audio_tools.unpatchify(audio_state)


def a2v_case(case: str = "a2v_two_stage", max_duration_option: float | None = AUDIO_MAX_DURATION) -> GoldenCase:
    """`max_duration_option`: the command line's --audio-max-duration (None: not given)."""
    from ltx_core.components.diffusion_steps import EulerDiffusionStep
    from ltx_core.components.guiders import MultiModalGuider, MultiModalGuiderParams
    from ltx_core.components.noisers import GaussianNoiser
    from ltx_core.components.schedulers import LTX2Scheduler
    from ltx_core.model.audio_vae import AUDIO_VAE_ENCODER_COMFY_KEYS_FILTER, AudioEncoderConfigurator, encode_audio
    from ltx_core.model.upsampler import upsample_video
    from ltx_core.types import AudioLatentShape
    from ltx_pipelines.utils.constants import STAGE_2_DISTILLED_SIGMA_VALUES
    from ltx_pipelines.utils.helpers import multi_modal_guider_denoising_func, simple_denoising_func
    from ltx_pipelines.utils.media_io import decode_audio_from_file

    from make_pipeline_goldens import FPS, NUM_FRAMES

    height, width, steps, stg_block = 128, 192, 3, 1  # stage 1 at 64x96
    config, up_config = component_configs(decode=False, upsample=True)
    config.update(audio_vae_config(ch=AUDIO_TOKEN_WIDTH, ch_mult=[1, 1, 1], z_channels=AUDIO_Z,
                                   mel_bins=4 * AUDIO_LATENT_MEL, num_res_blocks=1))
    weights, up_weights = build_weights(config, False, up_config)
    _, enc_weights = roundtrip(config, AudioEncoderConfigurator, AUDIO_VAE_ENCODER_COMFY_KEYS_FILTER,
                               audio_vae_key("encoder"), 7500, rules=[stats_rule], seeded_buffers=STATS)
    weights.update(enc_weights)
    ctx = contexts(8200)
    wav = input_wav()
    rec = Recorder()
    draws: list = []
    with tempfile.TemporaryDirectory() as tmp, torch.no_grad(), record_randn(draws):
        wav_path = Path(tmp) / "input.wav"
        wav_path.write_bytes(wav)
        max_duration = max_duration_option
        if max_duration is None:
            max_duration = official_cli_audio_max_duration(wav_path, NUM_FRAMES, FPS)
        ledger = Ledger(Path(tmp), config, weights, up_config, up_weights)
        clip = decode_audio_from_file(str(wav_path), torch.device("cpu"), AUDIO_START, max_duration)
        encoded = encode_audio(clip, ledger.get("audio_encoder"))
        frames = AudioLatentShape.from_duration(batch=1, duration=NUM_FRAMES / FPS, channels=8, mel_bins=16).frames
        encoded = encoded[:, :, :frames]
        rec.add("audio.encoded", encoded)
        generator = torch.Generator(device="cpu").manual_seed(SEED)
        noiser = GaussianNoiser(generator=generator)
        transformer = ledger.get("transformer")
        video_params, _ = guider_params(stg_block)
        c = {k: to_reference(v) for k, v in ctx.items()}
        sigmas = LTX2Scheduler().execute(steps=steps).to(dtype=torch.float32)
        rec.add("stage1.sigmas", sigmas)
        steps_rec = StepRecorder(rec, "stage1.", transformer, GUIDED_PASSES)
        video_state, _ = denoise_video_only_tiny(
            pixel_shape(height // 2, width // 2), noiser, sigmas, EulerDiffusionStep(),
            multi_modal_guider_denoising_func(
                video_guider=MultiModalGuider(params=video_params, negative_context=c["context.video.negative"]),
                audio_guider=MultiModalGuider(params=MultiModalGuiderParams()),
                v_context=c["context.video.positive"], a_context=c["context.audio.positive"], transformer=transformer),
            pipeline_components(), steps_rec, to_reference(encoded))
        steps_rec.close()
        rec.add("stage1.latents.video.final", video_state.latent)
        upscaled = upsample_video(latent=video_state.latent[:1], video_encoder=statistics_encoder(config, weights=weights),
                                  upsampler=ledger.get("spatial_upsampler"))
        rec.add("upsampled.video", upscaled)
        transformer = ledger.get("transformer")
        sigmas = torch.Tensor(STAGE_2_DISTILLED_SIGMA_VALUES)
        rec.add("stage2.sigmas", sigmas)
        steps_rec = StepRecorder(rec, "stage2.", transformer, ["cond"])
        video_state, audio_state = denoise_video_only_tiny(
            pixel_shape(height, width), noiser, sigmas, EulerDiffusionStep(),
            simple_denoising_func(video_context=c["context.video.positive"], audio_context=c["context.audio.positive"],
                                  transformer=transformer),
            pipeline_components(), steps_rec, to_reference(encoded), noise_scale=sigmas[0],
            initial_video_latent=upscaled)
        steps_rec.close()
    n1, n_audio = 2 * (height // 64) * (width // 64), encoded.shape[2]
    noise, described = noise_inputs(draws, [
        ("stage 1 video initial noise", (1, n1, VIDEO_CHANNELS)),
        ("stage 1 audio noise (drawn, applied with noise_scale 0)", (1, n_audio, AUDIO_TOKEN_WIDTH)),
        ("stage 2 video noise (re-injection into the upsampled latent)", (1, 4 * n1, VIDEO_CHANNELS)),
        ("stage 2 audio noise (drawn, applied with noise_scale 0)", (1, n_audio, AUDIO_TOKEN_WIDTH)),
    ])
    outputs = {"latents.video.final": video_state.latent, "latents.audio.final": audio_state.latent,
               "audio.clip": clip.waveform.squeeze(0)}
    params = {
        **common_params(up_config),
        "pipeline": "A2VidPipelineTwoStage (ltx-pipelines 1.0.0), no images, distilled_lora=[] (stage 2 uses the "
        "stage-1 weights), tiling off; the returned audio is the decoded input clip",
        "height": height, "width": width, "stage_1_height": height // 2, "stage_1_width": width // 2,
        "num_inference_steps": steps,
        "stage_2_sigmas": list(STAGE_2_DISTILLED_SIGMA_VALUES),
        "audio_input": {"file": "input.wav", "start": AUDIO_START,
                        **({} if max_duration_option is None else {"max_duration": max_duration_option})},
        "audio_sampling_rate": clip.sampling_rate,
        "video_latent_shape": list(video_state.latent.shape),
        "audio_latent_shape": list(audio_state.latent.shape),
        "guidance": {"stage_1": {"video": guidance_params(stg_block)["video"],
                                 "audio": "MultiModalGuiderParams() (none)"},
                     "stage_2": "none (simple_denoising_func)"},
        "noise_draws": described,
    }
    all_weights = {**weights, **{UPSAMPLER_PREFIX + k: v for k, v in up_weights.items()}}
    metadata = {"config": canonical_json(config), "upsampler_config": canonical_json(up_config)}
    clip_text = f"{AUDIO_MAX_DURATION} s"
    if max_duration_option is None:  # the explicit case's weights, not written twice
        params["shared_weights"] = SHARED_WEIGHTS
        params["official_cli"] = {"audio_max_duration_passed": max_duration, "argument_handling":
                                  "ltx_pipelines/a2vid_two_stage.py main() with no --audio-max-duration"}
        all_weights, metadata = {}, {"config": canonical_json(config)}
        clip_text = f"{max_duration:.4g} s (no --audio-max-duration: the official command line's default)"
    return GoldenCase(
        group="pipeline", case=case, component="pipeline_a2v",
        description=f"Tiny LTX-2.3 audio-to-video run (A2VidPipelineTwoStage): {clip_text} of a stereo 44.1 kHz "
        "WAV from 0.05 s, encoded by the audio VAE and held fixed; stage 1 at 64x96 with 3 video-guided Euler "
        "steps, x2 upsample, stage 2 at 128x192 with the distilled sigmas; 9 frames at 24 fps; final latents and "
        "the clip",
        generator=GENERATOR, weights=all_weights, weights_metadata=metadata,
        inputs={**noise, **ctx}, outputs=outputs, intermediates=rec.values, params=params,
        tolerance=PIPELINE_TOLERANCE, extra_files={"input.wav": wav},
    )


CASES = {"a2v_two_stage": AUDIO_MAX_DURATION, "a2v_default_duration": None}


def generate(out_root: Path, only_cases: set[str] | None, groups: set[str]) -> list[Path]:
    if "pipeline" not in groups:
        return []
    written = []
    for case, max_duration_option in CASES.items():
        if only_cases is None or case in only_cases:
            torch.manual_seed(0)
            written.append(with_measured_production(lambda: a2v_case(case, max_duration_option)).write(out_root))
    return written

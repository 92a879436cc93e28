"""Retake golden case (group `pipeline`, component `pipeline_retake`): RetakePipeline.__call__
(ltx_pipelines/retake.py, 1.0.0) on the tiny configs, step by step with the official pieces it is made of.

  retake  input.mov (written here: 25 lossless RGB frames of 96x64 at 24 fps, so PyAV and FFmpeg decode the same
          pixels, with 0.8 s of stereo 16-bit PCM at 22.05 kHz, a chirp over a noise floor and noise, shorter than the 1.04 s of
          video) read as the
          pipeline reads it: get_videostream_metadata, load_video_conditioning at the file's own size and
          _encode_video_for_retake (`video.encoded`); decode_audio_from_file from 0 (`audio.clip`) and
          _encode_audio_for_retake, which zero-pads the encoded audio to the video's length (`audio.encoded`);
          TemporalRegionMask(0.2, 0.5) on both states (`denoise_mask.video`, `denoise_mask.audio`): the latent frames
          and audio tokens whose time span meets [0.2, 0.5) s are regenerated from noise, the rest keep the encoded
          source; 3 guided Euler steps (LTX-2.3 guiders with the STG block in the tiny DiT, negative contexts for
          both streams) through multi_modal_guider_denoising_func. Recorded: every step's latents and x0, the final
          latents.

  retake_silent  the same with input.mov's audio stream left out: retake.py then has no initial audio latent and no
          audio region mask (decode_audio_from_file gives None), so the whole audio is generated from noise.

The DiT is the two_stage case's, the video encoder the keyframe_interpolation case's and the audio encoder the
a2v_two_stage case's (the same generator code and seeds, checked): this case stores only input.mov.
"""

from __future__ import annotations

import math
import sys
import tempfile
from pathlib import Path

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
    I2V_ENCODER_BLOCKS,
    SEED,
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
    vae_key,
)
from make_pipeline_goldens import TOLERANCE as PIPELINE_TOLERANCE  # noqa: E402

GROUPS = ("pipeline",)
GENERATOR = "tools/reference/make_retake_goldens.py"
FRAMES, HEIGHT, WIDTH, FPS = 25, 64, 96, 24
START, END, STEPS, STG_BLOCK = 0.2, 0.5, 3, 1
AUDIO_RATE, AUDIO_SECONDS = 22050, 0.8
SHARED = {"dit": "two_stage", "video_encoder": "keyframe_interpolation", "audio_encoder": "a2v_two_stage"}


def frame_pixels(f: int) -> np.ndarray:
    """Frame f: smooth ramps that move with f (PNG keeps them small), uint8 [H, W, 3]."""
    y, x = np.mgrid[0:HEIGHT, 0:WIDTH]
    base = np.stack([128 + 100 * np.sin((x + 3 * f) / 9.0), 128 + 100 * np.cos((y - 2 * f) / 7.0),
                     (x + y + 5 * f) % 256], axis=-1)
    return np.clip(base, 0, 255).round().astype(np.uint8)


def input_mov(path: Path, with_audio: bool = True) -> None:
    """Lossless RGB frames (PNG in MOV: the decoded pixels are these bits in any FFmpeg) and PCM audio (unless not
    `with_audio`); MOV records the frame count and the streams' durations, which the reference reads."""
    import av

    n = int(AUDIO_RATE * AUDIO_SECONDS)
    t = np.arange(n) / AUDIO_RATE
    rng = np.random.default_rng(6)
    # A noise floor under the chirp (-46 dBFS, as any recording has): over a pure tone the high mel bins sit just
    # above log-mel's 1e-5 clamp, where the reference's float32 STFT rounding alone moves the log by up to 0.18 from
    # the exact value (measured against the same chain in float64); no implementation reproduces those bits.
    left = 0.4 * np.sin(2 * math.pi * (250 * t + 700 * t * t)) + 0.005 * rng.standard_normal(n).clip(-3, 3)
    right = 0.3 * rng.standard_normal(n).clip(-3, 3) / 3
    pcm = (np.stack([left, right], axis=0) * 32767).round().astype(np.int16)  # [2, n]
    with av.open(str(path), "w", format="mov") as c:
        v = c.add_stream("png", rate=FPS)
        v.width, v.height, v.pix_fmt = WIDTH, HEIGHT, "rgb24"
        a = c.add_stream("pcm_s16le", rate=AUDIO_RATE, layout="stereo") if with_audio else None
        for f in range(FRAMES):
            for p in v.encode(av.VideoFrame.from_ndarray(frame_pixels(f), format="rgb24")):
                c.mux(p)
        for p in v.encode():
            c.mux(p)
        if a is None:
            return
        frame = av.AudioFrame.from_ndarray(pcm.T.reshape(1, -1).copy(), format="s16", layout="stereo")
        frame.sample_rate, frame.pts = AUDIO_RATE, 0
        for p in a.encode(frame):
            c.mux(p)
        for p in a.encode():
            c.mux(p)


def checked_same(mine: dict, case: str, what: str) -> None:
    """The tensors equal the committed case's weights file (the same generator code and seeds)."""
    from safetensors.torch import load_file

    path = Path(__file__).resolve().parents[2] / "tests/golden/pipeline" / case / "weights.safetensors"
    if not path.exists() or reference_dtype() != torch.float32:
        return
    stored = load_file(str(path))
    for k, v in mine.items():
        if k in stored and not torch.equal(stored[k], v):
            raise RuntimeError(f"{what} tensor {k} differs from {path}")


def retake_case(case: str = "retake", with_audio: bool = True) -> GoldenCase:
    """The retake case, or retake_silent: the same source without its audio stream."""
    import ltx_pipelines.retake as R
    from ltx_core.components.diffusion_steps import EulerDiffusionStep
    from ltx_core.components.guiders import MultiModalGuider
    from ltx_core.components.noisers import GaussianNoiser
    from ltx_core.components.schedulers import LTX2Scheduler
    from ltx_core.model.audio_vae import AUDIO_VAE_ENCODER_COMFY_KEYS_FILTER, AudioEncoderConfigurator
    from ltx_core.model.video_vae import VAE_ENCODER_COMFY_KEYS_FILTER, VideoEncoderConfigurator
    from ltx_core.tools import AudioLatentTools
    from ltx_core.types import AudioLatentShape, VideoPixelShape
    from ltx_pipelines.utils.helpers import create_noised_state, multi_modal_guider_denoising_func, noise_video_state
    from ltx_pipelines.utils.media_io import decode_audio_from_file, get_videostream_metadata
    from ltx_pipelines.utils.samplers import euler_denoising_loop
    from make_vae_goldens import STATS as VAE_STATS

    config, _ = component_configs(decode=False, upsample=False)
    dit_weights, _ = build_weights(config, False, None)
    checked_same({k: v for k, v in dit_weights.items() if k.startswith("model.")}, SHARED["dit"], "DiT")
    config["vae"]["encoder_blocks"] = I2V_ENCODER_BLOCKS
    _, venc = roundtrip(config, VideoEncoderConfigurator, VAE_ENCODER_COMFY_KEYS_FILTER, vae_key("encoder"), 7100,
                        rules=[stats_rule], seeded_buffers=VAE_STATS)
    checked_same(venc, SHARED["video_encoder"], "video encoder")
    config.update(audio_vae_config(ch=AUDIO_TOKEN_WIDTH, ch_mult=[1, 1, 1], z_channels=AUDIO_Z,
                                   mel_bins=4 * AUDIO_LATENT_MEL, num_res_blocks=1))
    _, aenc = roundtrip(config, AudioEncoderConfigurator, AUDIO_VAE_ENCODER_COMFY_KEYS_FILTER,
                        audio_vae_key("encoder"), 7500, rules=[stats_rule], seeded_buffers=STATS)
    checked_same(aenc, SHARED["audio_encoder"], "audio encoder")
    ctx = contexts(8600)
    rec = Recorder()
    draws: list = []
    with tempfile.TemporaryDirectory() as tmp, torch.no_grad(), record_randn(draws):
        mov = Path(tmp) / "input.mov"
        input_mov(mov, with_audio)
        mov_bytes = mov.read_bytes()
        ledger = Ledger(Path(tmp), config, {**dit_weights, **venc, **aenc}, None, {})
        dtype, device = reference_dtype(), torch.device("cpu")
        generator = torch.Generator(device="cpu").manual_seed(SEED)
        noiser = GaussianNoiser(generator=generator)
        fps, frames, width, height = get_videostream_metadata(str(mov))
        if (fps, frames, width, height) != (FPS, FRAMES, WIDTH, HEIGHT):
            raise RuntimeError(f"input.mov reads as {(fps, frames, width, height)}")
        output_shape = VideoPixelShape(batch=1, frames=frames, width=width, height=height, fps=fps)

        video_encoder = ledger.get("video_encoder")
        def record_encoder(_module, _args, out) -> None:  # a hook that returns nothing leaves the output alone
            rec.add("video.encoded", out)

        video_encoder.register_forward_hook(record_encoder)
        video_latent = R._encode_video_for_retake(video_encoder, str(mov), output_shape, dtype, device)
        clip = decode_audio_from_file(str(mov), device)
        if (clip is not None) != with_audio:
            raise RuntimeError(f"decode_audio_from_file read {clip} from input.mov (audio stream: {with_audio})")
        audio_latent, audio_conditionings = None, []  # retake.py without an audio stream
        region = R.TemporalRegionMask(start_time=START, end_time=END, fps=fps)
        if clip is not None:
            rec.add("audio.clip", clip.waveform.squeeze(0))
            audio_latent = R._encode_audio_for_retake(ledger.get("audio_encoder"), clip.waveform.squeeze(0),
                                                      clip.sampling_rate, output_shape, dtype)
            rec.add("audio.encoded", audio_latent)
            audio_conditionings = [region]

        video_state, video_tools = noise_video_state(
            output_shape=output_shape, noiser=noiser, conditionings=[region], components=pipeline_components(),
            dtype=dtype, device=device, initial_latent=video_latent)
        # noise_audio_state with the tiny audio latent's channels (the pipeline's fixes the real 8)
        audio_shape = AudioLatentShape.from_video_pixel_shape(output_shape, channels=AUDIO_Z,
                                                              mel_bins=AUDIO_LATENT_MEL)
        audio_tools = AudioLatentTools(pipeline_components().audio_patchifier, audio_shape)
        audio_state = create_noised_state(tools=audio_tools, conditionings=audio_conditionings, noiser=noiser,
                                          dtype=dtype, device=device, initial_latent=audio_latent)
        for stream, state in (("video", video_state), ("audio", audio_state)):
            rec.add(f"positions.{stream}", state.positions)
            rec.add(f"denoise_mask.{stream}", state.denoise_mask)
        transformer = ledger.get("transformer")
        video_params, audio_params = guider_params(STG_BLOCK)
        c = to_reference(ctx)
        sigmas = LTX2Scheduler().execute(steps=STEPS).to(dtype=torch.float32)
        rec.add("sigmas", sigmas)
        steps_rec = StepRecorder(rec, "", transformer, GUIDED_PASSES)
        steps_rec.record_latents(video_state, audio_state, "initial")
        denoise_fn = multi_modal_guider_denoising_func(
            MultiModalGuider(params=video_params, negative_context=c["context.video.negative"]),
            MultiModalGuider(params=audio_params, negative_context=c["context.audio.negative"]),
            v_context=c["context.video.positive"], a_context=c["context.audio.positive"], transformer=transformer)
        video_state, audio_state = euler_denoising_loop(sigmas=sigmas, video_state=video_state,
                                                        audio_state=audio_state, stepper=EulerDiffusionStep(),
                                                        denoise_fn=steps_rec.wrap(denoise_fn))
        steps_rec.record_latents(video_state, audio_state, f"step{STEPS - 1:02d}")
        steps_rec.close()
        video_state = video_tools.unpatchify(video_tools.clear_conditioning(video_state))
        audio_state = audio_tools.unpatchify(audio_tools.clear_conditioning(audio_state))
    n_video, n_audio = video_state.latent.shape[2] * (HEIGHT // 32) * (WIDTH // 32), audio_state.latent.shape[2]
    noise, described = noise_inputs(draws, [
        ("video noise (the masked tokens take it, the kept ones none)", (1, n_video, VIDEO_CHANNELS)),
        ("audio noise (the masked tokens take it, the kept ones none)" if with_audio else
         "audio noise (every token takes it: no source audio)", (1, n_audio, AUDIO_TOKEN_WIDTH)),
    ])
    params = {
        **common_params(None),
        "pipeline": "RetakePipeline (ltx-pipelines 1.0.0): one stage at the source's size, regenerate_video and "
        "regenerate_audio, not distilled, tiling off",
        "fps": float(FPS), "num_frames": FRAMES, "height": HEIGHT, "width": WIDTH,
        "num_inference_steps": STEPS,
        "retake": {"file": "input.mov", "start": START, "end": END, "keep_video": False, "keep_audio": False},
        "shared_weights": SHARED,
        "weights_layout": "weights.safetensors holds only the config; the DiT, video encoder and audio encoder are "
        "the tensors of the shared cases' files (checked equal)",
        **({"audio_sampling_rate": clip.sampling_rate} if with_audio else {"source_audio": None}),
        "video_latent_shape": list(video_state.latent.shape),
        "audio_latent_shape": list(audio_state.latent.shape),
        "guidance": guidance_params(STG_BLOCK),
        "negative_prompt": "'' (retake.py's default): given here as seeded negative contexts",
        "denoise_mask": "TemporalRegionMask: 1 where the token's time span [t0, t1) meets [start, end) (video: the "
        "latent frame's causal pixel-frame span / fps; audio: the token's mel-frame span in seconds), 0 elsewhere",
        "noise_draws": described,
    }
    description = ("Tiny LTX-2.3 retake (RetakePipeline): a 25-frame 96x64 clip with shorter audio, [0.2, 0.5) s of "
                   "both streams regenerated in 3 guided Euler steps and the rest kept at the encoded source; the "
                   "inputs as read and encoded, the masks, every step and the final latents")
    if not with_audio:
        description = ("Tiny LTX-2.3 retake (RetakePipeline) of a 25-frame 96x64 clip without audio: [0.2, 0.5) s of "
                       "the video regenerated in 3 guided Euler steps, the rest kept at the encoded source, the whole "
                       "audio generated from noise; the inputs as read and encoded, the masks, every step and the "
                       "final latents")
    return GoldenCase(
        group="pipeline", case=case, component="pipeline_retake", description=description,
        generator=GENERATOR, weights={}, weights_metadata={"config": canonical_json(config)},
        inputs={**noise, **ctx}, outputs={"latents.video.final": video_state.latent,
                                          "latents.audio.final": audio_state.latent},
        intermediates=rec.values, params=params, tolerance=PIPELINE_TOLERANCE,
        extra_files={"input.mov": mov_bytes},
    )


# TemporalRegionMask's windows over clips of other rates and lengths, with windows on exact token boundaries (the
# f32 comparisons decide ties), past the end, negative, empty and the kept-stream window (0, 0).
MASK_WINDOWS = [(24.0, 25, 8 / 24, 16 / 24), (24.0, 25, 0.0, 1 / 24), (25.0, 121, 0.32, 0.64), (25.0, 121, 4.7, 9.0),
                (30000 / 1001, 121, 1.0, 2.0), (30000 / 1001, 121, -1.0, 0.04), (23.976, 49, 0.5, 0.5001),
                (24.0, 25, 0.0, 0.0), (24.0, 121, 0.16, 0.2), (50.0, 9, 0.01, 0.02)]


def masks_case() -> GoldenCase:
    """The denoise masks TemporalRegionMask.apply_to writes into fresh video and audio states (no model)."""
    import ltx_pipelines.retake as R
    from ltx_core.tools import AudioLatentTools, VideoLatentTools
    from ltx_core.types import AudioLatentShape, VideoLatentShape, VideoPixelShape

    components = pipeline_components()
    outputs, windows = {}, []
    for i, (fps, frames, start, end) in enumerate(MASK_WINDOWS):
        shape = VideoPixelShape(batch=1, frames=frames, width=64, height=64, fps=fps)
        video_tools = VideoLatentTools(components.video_patchifier,
                                       VideoLatentShape.from_pixel_shape(shape, latent_channels=VIDEO_CHANNELS), fps)
        audio_tools = AudioLatentTools(components.audio_patchifier, AudioLatentShape.from_video_pixel_shape(
            shape, channels=AUDIO_Z, mel_bins=AUDIO_LATENT_MEL))
        region = R.TemporalRegionMask(start_time=start, end_time=end, fps=fps)
        for stream, tools in (("video", video_tools), ("audio", audio_tools)):
            state = tools.create_initial_state(torch.device("cpu"), torch.float32)
            outputs[f"mask.{i}.{stream}"] = region.apply_to(state, tools).denoise_mask
        windows.append({"fps": fps, "frames": frames, "start": start, "end": end})
    return GoldenCase(
        group="pipeline", case="retake_masks", component="retake_masks",
        description="TemporalRegionMask (retake.py) on fresh video and audio states of 64x64 clips at 24, 25, "
        "29.97, 23.976 and 50 fps: windows on exact token boundaries, past the end, negative, empty and (0, 0)",
        generator=GENERATOR, weights={}, weights_metadata={}, inputs={}, outputs=outputs,
        params={"windows": windows, "height": 64, "width": 64, "note": "mask.N.{video,audio}: [1, T, 1], exact"},
        tolerance={"validation": {"atol": 0.0, "rtol": 0.0}, "production": {"atol": 0.0, "rtol": 0.0}},
    )


def generate(out_root: Path, only_cases: set[str] | None, groups: set[str]) -> list[Path]:
    if "pipeline" not in groups:
        return []
    written = []
    for case, with_audio in (("retake", True), ("retake_silent", False)):
        if only_cases is None or case in only_cases:
            torch.manual_seed(0)
            written.append(with_measured_production(lambda: retake_case(case, with_audio)).write(out_root))
    if only_cases is None or "retake_masks" in only_cases:
        written.append(masks_case().write(out_root))
    return written

"""Whole-pipeline golden cases (group `pipeline`): tiny text-to-video+audio runs through the official sampling code.

Both cases run ltx_pipelines 1.0.0's sampling functions in the order its pipelines call them, in fp32 on the CPU,
with every tiny component loaded through the official `ModelLedger` from a monolithic checkpoint written like a
real one (`config` metadata with the `transformer`, `vae`, `audio_vae`, `vocoder` sections of the components the
case holds). Gemma and the connectors are skipped: the text contexts (the EmbeddingsProcessor outputs) are seeded
random inputs.

  t2v_audio_one_stage  TI2VidOneStagePipeline.__call__ without images: LTX2Scheduler sigmas, CFG + STG + modality
                       isolation + rescale with the LTX-2.3 default guider params (4 DiT passes per step),
                       Euler steps, then video VAE decode and audio VAE decode + vocoder.
  two_stage            TI2VidTwoStagesPipeline.__call__ without images and with an empty distilled-LoRA list:
                       stage 1 as above at half resolution, ×2 spatial latent upsample (upsample_video with the
                       VAE encoder's statistics), stage 2 on the upsampled video and the stage-1 audio with
                       STAGE_2_DISTILLED_SIGMA_VALUES, noise re-injected with noise_scale = sigma_0 from the SAME
                       generator, one unguided DiT pass per step. Ends at the final latents: the decoders are
                       the one-stage case's, and their weights would overrun the size budget.

Names (prefix `stage1.` / `stage2.` in the two-stage case; token layout [B,T,C] unless noted):
- inputs: `noise.NNNN` every tensor drawn from the pipeline's torch.Generator, in draw order (params.noise_draws);
  `context.{video,audio}.{positive,negative}` the text contexts [1,S,D].
- intermediates: `sigmas`; `positions.{video,audio}`; `latents.{video,audio}.initial` (after the noiser),
  `latents.{video,audio}.stepNN` (after Euler step NN); `x0.{video,audio}.stepNN.{cond,uncond,perturbed,isolated}`
  (X0Model outputs of each DiT pass, in call order) and `x0.{video,audio}.stepNN.guided` (the denoise function's
  result that the Euler step consumes); two-stage: `upsampled.video` [B,C,F,H,W]; decode: `audio.mel`
  [B,2,T,64] (audio VAE decoder output, vocoder input).
- outputs: `latents.video.final` [B,C,F,H,W], `latents.audio.final` [B,C,T,mel/4] (unpatchified); one-stage also
  `video.decoded` [B,3,F,H,W] (float decoder output) and `audio.waveform` [2,N] at params.audio_sampling_rate.

Deviations from the pipelines' own __call__, all forced by tiny weights and none numeric:
- the video latent channel count comes from the tiny config (PipelineComponents.video_latent_channels is
  overridden; 1.0.0 fixes it at 128);
- the audio latent is [B, z=1, T, 16] instead of [B, 8, T, 16]: denoise_audio_video builds it through
  AudioLatentShape.from_video_pixel_shape with the default channels=8, and a 8×16-token audio VAE cannot be tiny
  (its width must equal channels·mel/4). `denoise_audio_video_tiny` below does what denoise_audio_video does
  (noise_video_state, then the audio state, then the loop, clear_conditioning, unpatchify) with that one argument;
- no Gemma / prompt enhancement, no image conditionings, no VAE tiling; torch.cuda calls are not made.
"""

from __future__ import annotations

import copy
import tempfile
from dataclasses import replace
from pathlib import Path

import torch
from component_roundtrip import roundtrip, stats_rule
from golden_case import (
    GoldenCase,
    Recorder,
    canonical_json,
    module_to_reference,
    reference_dtype,
    seeded_init_,
    seeded_randn,
    to_reference,
    with_measured_production,
    write_safetensors,
)
from make_audio_goldens import VOCODER_2_3, audio_vae_config, audio_vae_key, fill_mel_stft, quiet_conv_post_rule
from make_upsampler_goldens import upsampler_config
from make_vae_goldens import CONFIG_2_3, STATS, record_randn, scale_multiplier_rule, vae_key
from tiny_configs import checkpoint_config

GROUPS = ("pipeline",)
GENERATOR = "tools/reference/make_pipeline_goldens.py"
DIT_PREFIX = "model.diffusion_model."
UPSAMPLER_PREFIX = "spatial_upsampler."
# Errors compound over the steps and the guidance scales (up to 7) amplify the DiT's rounding differences.
TOLERANCE = {"validation": {"atol": 1e-3, "rtol": 1e-3}, "production": {"atol": 1.5e-1, "rtol": 1.5e-1}}

SEED = 10  # PipelineParams.seed
FPS = 24.0
NUM_FRAMES = 9  # 2 latent frames
CONTEXT_TOKENS = 8
VIDEO_CHANNELS = 8  # DiT in_channels of tiny_configs
AUDIO_Z = 1  # audio latent channels (real 8)
AUDIO_LATENT_MEL = 16  # 64 mel bins / 4, as in the real model (the vocoder needs 64 mel bins)
AUDIO_TOKEN_WIDTH = AUDIO_Z * AUDIO_LATENT_MEL


def transformer_config() -> dict:
    """The LTX-2.3 tiny DiT of tiny_configs with audio tokens as wide as the tiny audio latent."""
    cfg = checkpoint_config("ltx23")
    cfg["transformer"].update(audio_in_channels=AUDIO_TOKEN_WIDTH, audio_out_channels=AUDIO_TOKEN_WIDTH)
    return cfg


def component_configs(decode: bool, upsample: bool) -> tuple[dict, dict | None]:
    """(monolith `config` metadata, upsampler file `config` or None). Only the components the case runs."""
    vae = copy.deepcopy(CONFIG_2_3["vae"])
    vae["latent_channels"] = VIDEO_CHANNELS
    config = {**transformer_config(), "vae": vae}
    if decode:
        # Real depth (3 levels: x4 in time and mel), width 16 throughout to keep the file small.
        config.update(audio_vae_config(ch=AUDIO_TOKEN_WIDTH, ch_mult=[1, 1, 1], z_channels=AUDIO_Z,
                                       mel_bins=4 * AUDIO_LATENT_MEL, num_res_blocks=1))
        config.update(copy.deepcopy(VOCODER_2_3))
    up = None
    if upsample:
        up = upsampler_config(1, True, False, 2.0, False)
        up["in_channels"] = VIDEO_CHANNELS
    return config, up


def build_weights(config: dict, decode: bool, up_config: dict | None) -> tuple[dict, dict]:
    """Checkpoint-named seeded weights of every component: (monolith tensors, upsampler-file tensors).

    With an upsampler but no decoders only the VAE's `vae.per_channel_statistics.*` are stored (the part of the
    VAE that upsample_video uses); a tiny encoder of the same depth would be most of the size budget."""
    from ltx_core.model.audio_vae import (
        AUDIO_VAE_DECODER_COMFY_KEYS_FILTER,
        VOCODER_COMFY_KEYS_FILTER,
        AudioDecoderConfigurator,
        VocoderConfigurator,
    )
    from ltx_core.model.transformer.model_configurator import LTXModelConfigurator
    from ltx_core.model.upsampler import LatentUpsamplerConfigurator
    from ltx_core.model.video_vae import (
        VAE_DECODER_COMFY_KEYS_FILTER,
        VideoDecoderConfigurator,
    )

    dit = LTXModelConfigurator.from_config(config).to_empty(device="cpu").float()
    seeded_init_(dit, seed=7000)
    weights = {DIT_PREFIX + k: v.detach().clone() for k, v in dit.state_dict().items()}
    parts = []
    if decode:
        parts += [
            (VideoDecoderConfigurator, VAE_DECODER_COMFY_KEYS_FILTER, vae_key("decoder"), 7100,
             [stats_rule, scale_multiplier_rule], STATS, None),
            (AudioDecoderConfigurator, AUDIO_VAE_DECODER_COMFY_KEYS_FILTER, audio_vae_key("decoder"), 7200,
             [stats_rule], STATS, None),
            (VocoderConfigurator, VOCODER_COMFY_KEYS_FILTER, lambda k: "vocoder." + k, 7300,
             [quiet_conv_post_rule], (), fill_mel_stft),
        ]
    if up_config is not None and not decode:
        stats = statistics_encoder(config, seed=7100)
        weights.update({"vae." + k: v.clone() for k, v in stats.state_dict().items()})
    for configurator, sd_ops, key_map, seed, rules, buffers, fill in parts:
        _, w = roundtrip(config, configurator, sd_ops, key_map, seed, rules=rules, seeded_buffers=buffers, fill=fill)
        for k, v in w.items():
            if k in weights and not torch.equal(weights[k], v):
                raise RuntimeError(f"shared checkpoint tensor {k} differs between components")
            weights[k] = v
    up_weights = {}
    if up_config is not None:
        _, up_weights = roundtrip(up_config, LatentUpsamplerConfigurator, None, lambda k: k, 7400)
    return weights, up_weights


def statistics_encoder(config: dict, *, seed: int | None = None, weights: dict | None = None) -> torch.nn.Module:
    """A VideoEncoder without blocks holding the checkpoint's latent statistics: all of the encoder that
    upsample_video touches (video_encoder.per_channel_statistics). Seeded like the decoder's roundtrip seeds the
    shared statistics, or filled from the checkpoint `weights`."""
    from component_roundtrip import init_buffers_
    from ltx_core.model.video_vae import VideoEncoderConfigurator

    encoder = VideoEncoderConfigurator.from_config(
        {"vae": {"latent_channels": config["vae"]["latent_channels"], "encoder_blocks": []}}
    ).eval()
    if seed is not None:
        init_buffers_(encoder, seed, STATS, [stats_rule])
    else:
        with torch.no_grad():
            for name in STATS:
                encoder.get_buffer(name).copy_(weights["vae." + name])
    return module_to_reference(encoder)  # ModelLedger builds the video encoder in its dtype


class Ledger:
    """ltx_pipelines' ModelLedger (fp32, CPU) over temporary files holding the case's weights, as a real run
    loads them: the monolith for the DiT, VAEs and vocoder, a separate file for the upsampler."""

    def __init__(self, tmp: Path, config: dict, weights: dict, up_config: dict | None, up_weights: dict):
        from ltx_pipelines.utils.model_ledger import ModelLedger

        ckpt = tmp / "tiny-ltx-2.3.safetensors"
        write_safetensors(ckpt, weights, {"config": canonical_json(config)})
        up_path = None
        if up_config is not None:
            up_path = tmp / "tiny-spatial-upscaler-x2.safetensors"
            write_safetensors(up_path, up_weights, {"config": canonical_json(up_config)})
        self.ledger = ModelLedger(dtype=reference_dtype(), device=torch.device("cpu"), checkpoint_path=str(ckpt),
                                  spatial_upsampler_path=str(up_path) if up_path else None)

    def get(self, what: str) -> torch.nn.Module:
        module = getattr(self.ledger, what)()
        tensors = list(module.named_parameters()) + list(module.named_buffers())
        on_meta = [n for n, t in tensors if t.device.type == "meta"]
        if on_meta:
            raise RuntimeError(f"{what}: not loaded from the checkpoint: {on_meta}")
        return module


def guider_params(stg_block: int, skip: tuple[int, int] = (0, 0)):
    """LTX_2_3_PARAMS' guider params with the STG block moved into the 2-block tiny DiT (real: block 28 of 48), and
    the (video, audio) skip_step (the CLI's --video-skip-step / --audio-skip-step)."""
    from ltx_pipelines.utils.constants import LTX_2_3_PARAMS

    return (replace(LTX_2_3_PARAMS.video_guider_params, stg_blocks=[stg_block], skip_step=skip[0]),
            replace(LTX_2_3_PARAMS.audio_guider_params, stg_blocks=[stg_block], skip_step=skip[1]))


def contexts(seed: int) -> dict[str, torch.Tensor]:
    cfg = transformer_config()["transformer"]
    dims = {"video": cfg["num_attention_heads"] * cfg["attention_head_dim"],
            "audio": cfg["audio_num_attention_heads"] * cfg["audio_attention_head_dim"]}
    out = {}
    for i, (stream, kind) in enumerate((s, k) for s in ("video", "audio") for k in ("positive", "negative")):
        out[f"context.{stream}.{kind}"] = seeded_randn((1, CONTEXT_TOKENS, dims[stream]), seed + i)
    return out


class StepRecorder:
    """Records what one denoising loop sees, without changing it: wraps the denoise function (latents entering each
    step, the guided x0 it returns) and hooks the X0Model (the x0 of every DiT pass, in call order)."""

    def __init__(self, rec: Recorder, prefix: str, transformer: torch.nn.Module, pass_names: list[str]):
        self.rec, self.prefix, self.pass_names = rec, prefix, pass_names
        self.calls: list = []
        self.handle = transformer.register_forward_hook(lambda _m, _a, out: self.calls.append(out))

    def wrap(self, denoise_fn):
        def recording_denoise_fn(video_state, audio_state, sigmas, step_index):
            if step_index > 0:
                self.record_latents(video_state, audio_state, f"step{step_index - 1:02d}")
            self.calls.clear()
            video_x0, audio_x0 = denoise_fn(video_state, audio_state, sigmas, step_index)
            if len(self.calls) != len(self.pass_names):
                raise RuntimeError(f"step {step_index}: {len(self.calls)} DiT passes, expected {self.pass_names}")
            step = f"step{step_index:02d}"
            for name, (v, a) in zip(self.pass_names, self.calls, strict=True):
                self.rec.add(f"{self.prefix}x0.video.{step}.{name}", v)
                self.rec.add(f"{self.prefix}x0.audio.{step}.{name}", a)
            self.rec.add(f"{self.prefix}x0.video.{step}.guided", video_x0)
            self.rec.add(f"{self.prefix}x0.audio.{step}.guided", audio_x0)
            return video_x0, audio_x0

        return recording_denoise_fn

    def record_latents(self, video_state, audio_state, label: str) -> None:
        self.rec.add(f"{self.prefix}latents.video.{label}", video_state.latent)
        self.rec.add(f"{self.prefix}latents.audio.{label}", audio_state.latent)

    def close(self) -> None:
        self.handle.remove()


def denoise_audio_video_tiny(output_shape, noiser, sigmas, stepper, denoise_fn, components, steps: StepRecorder,
                             noise_scale: float = 1.0, initial_video_latent=None, initial_audio_latent=None,
                             conditionings=(), loop=None):
    """ltx_pipelines.utils.helpers.denoise_audio_video with the audio latent channel count as a parameter; the
    video conditionings go to noise_video_state as there; the loop is euler_denoising_loop, as both pipelines'
    denoising_loop_fn, unless `loop` is given (called as denoising_loop_fn(sigmas, video_state, audio_state,
    stepper) with the recording denoise function; its recorder then records the steps' latents itself)."""
    from ltx_core.tools import AudioLatentTools
    from ltx_core.types import AudioLatentShape
    from ltx_pipelines.utils.helpers import create_noised_state, noise_video_state
    from ltx_pipelines.utils.samplers import euler_denoising_loop

    dtype, device = reference_dtype(), torch.device("cpu")
    video_state, video_tools = noise_video_state(
        output_shape=output_shape, noiser=noiser, conditionings=list(conditionings), components=components, dtype=dtype,
        device=device, noise_scale=noise_scale, initial_latent=initial_video_latent,
    )
    audio_shape = AudioLatentShape.from_video_pixel_shape(output_shape, channels=AUDIO_Z, mel_bins=AUDIO_LATENT_MEL)
    audio_tools = AudioLatentTools(components.audio_patchifier, audio_shape)
    audio_state = create_noised_state(
        tools=audio_tools, conditionings=[], noiser=noiser, dtype=dtype, device=device, noise_scale=noise_scale,
        initial_latent=initial_audio_latent,
    )
    steps.rec.add(f"{steps.prefix}positions.video", video_state.positions)
    steps.rec.add(f"{steps.prefix}positions.audio", audio_state.positions)
    if video_state.attention_mask is not None:  # conditioning items wrapped with an attention strength (IC-LoRA)
        steps.rec.add(f"{steps.prefix}attention_mask.video", video_state.attention_mask)
    steps.record_latents(video_state, audio_state, "initial")
    if loop is not None:
        video_state, audio_state = loop(sigmas, video_state, audio_state, stepper, steps.wrap(denoise_fn))
    else:
        video_state, audio_state = euler_denoising_loop(
            sigmas=sigmas, video_state=video_state, audio_state=audio_state, stepper=stepper,
            denoise_fn=steps.wrap(denoise_fn),
        )
        steps.record_latents(video_state, audio_state, f"step{len(sigmas) - 2:02d}")
    video_state = video_tools.unpatchify(video_tools.clear_conditioning(video_state))
    audio_state = audio_tools.unpatchify(audio_tools.clear_conditioning(audio_state))
    return video_state, audio_state


def guided_denoise_fn(transformer, ctx: dict, stg_block: int, skip: tuple[int, int] = (0, 0)):
    """The one-stage / stage-1 denoise function: multi_modal_guider_factory_denoising_func over the factories
    create_multimodal_guider_factory makes from the default params and the negative contexts."""
    from ltx_core.components.guiders import create_multimodal_guider_factory
    from ltx_pipelines.utils.helpers import multi_modal_guider_factory_denoising_func

    video_params, audio_params = guider_params(stg_block, skip)
    ctx = to_reference(ctx)  # a bf16 pipeline's text contexts are bf16
    return multi_modal_guider_factory_denoising_func(
        video_guider_factory=create_multimodal_guider_factory(video_params, ctx["context.video.negative"]),
        audio_guider_factory=create_multimodal_guider_factory(audio_params, ctx["context.audio.negative"]),
        v_context=ctx["context.video.positive"],
        a_context=ctx["context.audio.positive"],
        transformer=transformer,
    )


GUIDED_PASSES = ["cond", "uncond", "perturbed", "isolated"]


def decode(ledger: Ledger, video_latent, audio_latent, generator, rec: Recorder) -> tuple[dict, int]:
    """vae_decode_video (no tiling, the pipeline's generator) and vae_decode_audio, as the pipelines call them.
    Returns the outputs and the vocoder's sampling rate."""
    from ltx_core.model.audio_vae import decode_audio as vae_decode_audio
    from ltx_core.model.video_vae import decode_video as vae_decode_video

    decoder = ledger.get("video_decoder")
    captured = {}
    h = decoder.register_forward_hook(lambda _m, _a, out: captured.update(video=out))
    frames = list(vae_decode_video(video_latent, decoder, generator=generator))
    h.remove()
    if len(frames) != 1 or frames[0].dtype != torch.uint8:
        raise RuntimeError("expected one uint8 chunk from decode_video without tiling")
    audio_decoder = ledger.get("audio_decoder")
    h = audio_decoder.register_forward_hook(lambda _m, _a, out: captured.update(mel=out))
    audio = vae_decode_audio(audio_latent, audio_decoder, ledger.get("vocoder"))
    h.remove()
    rec.add("audio.mel", captured["mel"])
    return {"video.decoded": captured["video"], "audio.waveform": audio.waveform}, audio.sampling_rate


def pixel_shape(height: int, width: int, fps: float = FPS):
    from ltx_core.types import VideoPixelShape

    return VideoPixelShape(batch=1, frames=NUM_FRAMES, width=width, height=height, fps=fps)


def pipeline_components():
    from ltx_pipelines.utils.types import PipelineComponents

    components = PipelineComponents(dtype=reference_dtype(), device=torch.device("cpu"))
    components.video_latent_channels = VIDEO_CHANNELS
    return components


def noise_inputs(draws: list, expected: list[tuple[str, tuple]]) -> tuple[dict, list]:
    """Names the recorded draws and checks them against the expected sequence (what, token-layout shape)."""
    if len(draws) != len(expected):
        raise RuntimeError(f"{len(draws)} noise draws {[tuple(d.shape) for d in draws]}, expected {len(expected)}")
    inputs, described = {}, []
    for i, (t, (what, shape)) in enumerate(zip(draws, expected, strict=True)):
        if tuple(t.shape) != shape or t.dtype != torch.float32:
            raise RuntimeError(f"draw {i} ({what}): {tuple(t.shape)} {t.dtype}, expected {shape} float32")
        inputs[f"noise.{i:04d}"] = t
        described.append({"name": f"noise.{i:04d}", "what": what, "shape": list(shape), "dtype": "float32"})
    return inputs, described



def two_stage_noise_inputs(draws: list, height: int, width: int, n_audio: int) -> tuple[dict, list]:
    """noise_inputs for the two-stage flows: stage 1 at half resolution, stage 2 re-noising the x2 upsampled latent."""
    n1 = 2 * (height // 64) * (width // 64)
    return noise_inputs(draws, [
        ("stage 1 video initial noise", (1, n1, VIDEO_CHANNELS)),
        ("stage 1 audio initial noise", (1, n_audio, AUDIO_TOKEN_WIDTH)),
        ("stage 2 video noise (re-injection into the upsampled latent)", (1, 4 * n1, VIDEO_CHANNELS)),
        ("stage 2 audio noise (re-injection into the stage-1 audio latent)", (1, n_audio, AUDIO_TOKEN_WIDTH)),
    ])

def guidance_params(stg_block: int, skip: tuple[int, int] = (0, 0)) -> dict:
    video, audio = guider_params(stg_block, skip)
    keys = ("cfg_scale", "stg_scale", "stg_blocks", "rescale_scale", "modality_scale", "skip_step")
    return {"video": {k: getattr(video, k) for k in keys}, "audio": {k: getattr(audio, k) for k in keys}}


def common_params(up_config: dict | None) -> dict:
    layout = {
        "monolith": "weights.safetensors is the main checkpoint (model.diffusion_model.*, vae.*, and for the "
        "decoding case audio_vae.* and vocoder.*) with metadata `config` holding the sections of the components "
        "present",
    }
    if up_config is not None:
        layout["spatial_upsampler"] = (
            f"the upsampler file's tensors are stored in the same weights.safetensors under the prefix "
            f"'{UPSAMPLER_PREFIX}' (a real upsampler file has no prefix) and its flat `config` under the metadata "
            "key 'upsampler_config'. Of the VAE only vae.per_channel_statistics.* is stored: upsample_video uses "
            "nothing else of the video encoder the pipeline passes it"
        )
    return {
        "dtype": "float32 weights, latents and noise; the real pipelines run bfloat16 latents and so draw bfloat16 "
        "noise",
        "seed": SEED,
        "generator": "one torch.Generator(device='cpu').manual_seed(seed) for the whole run (CPU: MT19937 and "
        "torch.randn's float32 path, tokens-layout shapes); the noiser (and a timestep-conditioned video decoder, "
        "not used here) share it",
        "fps": FPS,
        "num_frames": NUM_FRAMES,
        "context_tokens": CONTEXT_TOKENS,
        "context_mask": None,
        "weights_prefix": DIT_PREFIX,
        "weights_layout": layout,
        "denoise_mask": "1 on every token (no conditionings): post_process_latent leaves x0 unchanged",
        "av_timestep_semantics": "as in the dit goldens (ltx-core 1.0.0)",
        "guider_math": "MultiModalGuider.calculate per stream on x0 in [B,T,C]: pred = c + (cfg-1)(c-u) + "
        "stg(c-p) + (mod-1)(c-m); if rescale != 0: pred *= rescale*c.std()/pred.std() + (1-rescale), std over "
        "the whole tensor (torch's unbiased std; the ratio is the same with the biased one)",
        "euler_step": "v = ((x - x0)/sigma_k) in float32 (sigma as a Python float from the float32 tensor), "
        "x_next = x + v*(sigma_{k+1} - sigma_k) with dt a float32 0-d tensor",
    }


def stage_calls(stage: str, video_draw: str, audio_draw: str) -> list[str]:
    """The call-sequence lines of one denoise_audio_video (`stage` prefixes each line)."""
    return [
        f"{stage}video state: noise_video_state -> VideoLatentTools.create_initial_state ([1,F*H*W,C] tokens in "
        "(f,h,w) order: zeros, or the patchified initial latent; denoise mask 1; positions) -> GaussianNoiser draws "
        f"{video_draw} = randn(state shape) and sets latent = noise*(mask*noise_scale) + latent*(1 - "
        "mask*noise_scale)",
        f"{stage}audio state: the same with AudioLatentTools ([1,T,z*16] tokens), drawing {audio_draw}",
        f"{stage}euler_denoising_loop over sigmas[:-1]: per step k, x0 = denoise_fn(states, sigmas, k); "
        "post_process_latent; EulerDiffusionStep.step for video, then audio",
        f"{stage}clear_conditioning, unpatchify",
    ]


GUIDED_CALL = (
    "denoise_fn = multi_modal_guider_factory_denoising_func(create_multimodal_guider_factory(video params, negative "
    "video context), the same for audio, positive contexts): per step it builds the guiders for sigma_k and runs "
    "X0Model 4 times, each with Modality(latent, sigma=sigma_k (0-d), timesteps = denoise_mask*sigma_k, positions, "
    "context): positive contexts; negative contexts; positive with the STG perturbations skip_video_self_attn and "
    "skip_audio_self_attn in stg_blocks; positive with skip_a2v_cross_attn and skip_v2a_cross_attn in all blocks; "
    "then MultiModalGuider.calculate per stream"
)


def guided_stage(rec: Recorder, prefix: str, transformer, shape, noiser, steps: int, ctx: dict, stg_block: int,
                 conditionings=(), skip: tuple[int, int] = (0, 0)):
    from ltx_core.components.diffusion_steps import EulerDiffusionStep
    from ltx_core.components.schedulers import LTX2Scheduler

    sigmas = LTX2Scheduler().execute(steps=steps).to(dtype=torch.float32)
    rec.add(f"{prefix}sigmas", sigmas)
    steps_rec = StepRecorder(rec, prefix, transformer, GUIDED_PASSES)
    states = denoise_audio_video_tiny(shape, noiser, sigmas, EulerDiffusionStep(),
                                      guided_denoise_fn(transformer, ctx, stg_block, skip), pipeline_components(),
                                      steps_rec,
                                      conditionings=conditionings)
    steps_rec.close()
    return states


# The one-stage case again with the video guider skipping every other step and the audio guider none: on steps 1
# and 3 the video x0 is the previous step's and the DiT passes run with the video Modality disabled (but the
# unconditional one).
SKIP_CASE = ("t2v_skip_video_steps", (1, 0), ". The video guider skips every other step (skip_step 1), the audio "
             "guider none: on those steps the cond, perturbed and isolated passes run with the video Modality disabled")


def one_stage_case(case: str = "t2v_audio_one_stage", skip: tuple[int, int] = (0, 0), note: str = "") -> GoldenCase:
    from ltx_core.components.noisers import GaussianNoiser

    height, width, steps, stg_block = 64, 96, 4, 1
    config, _ = component_configs(decode=True, upsample=False)
    weights, _ = build_weights(config, True, None)
    ctx = contexts(8000)
    rec = Recorder()
    draws: list = []
    with tempfile.TemporaryDirectory() as tmp, torch.no_grad(), record_randn(draws):
        ledger = Ledger(Path(tmp), config, weights, None, {})
        generator = torch.Generator(device="cpu").manual_seed(SEED)
        noiser = GaussianNoiser(generator=generator)
        transformer = ledger.get("transformer")
        video_state, audio_state = guided_stage(rec, "", transformer, pixel_shape(height, width), noiser, steps, ctx,
                                                stg_block, skip=skip)
        outputs = {"latents.video.final": video_state.latent, "latents.audio.final": audio_state.latent}
        decoded, sampling_rate = decode(ledger, video_state.latent, audio_state.latent, generator, rec)
        outputs.update(decoded)
    n_video = 2 * (height // 32) * (width // 32)
    n_audio = audio_state.latent.shape[2]
    noise, described = noise_inputs(draws, [("video initial noise", (1, n_video, VIDEO_CHANNELS)),
                                            ("audio initial noise", (1, n_audio, AUDIO_TOKEN_WIDTH))])
    params = {
        **common_params(None),
        "pipeline": "TI2VidOneStagePipeline (ltx-pipelines 1.0.0), text only",
        "height": height,
        "width": width,
        "num_inference_steps": steps,
        "video_latent_shape": list(video_state.latent.shape),
        "audio_latent_shape": list(audio_state.latent.shape),
        "audio_sampling_rate": sampling_rate,
        "guidance": guidance_params(stg_block, skip),
        "noise_draws": described,
        "video_decode": "decode_video without tiling: video.decoded is the decoder output [B,3,F,H,W]; the frames "
        "written to the MP4 are ((x+1)/2).clamp(0,1)*255 truncated to uint8, as [F,H,W,3]",
        "audio_decode": "decode_audio: audio.mel = audio VAE decoder output, audio.waveform = vocoder(mel) "
        "squeezed to [2,N]",
        "call_sequence": [
            "generator = torch.Generator('cpu').manual_seed(seed); noiser = GaussianNoiser(generator); "
            "stepper = EulerDiffusionStep(); transformer = X0Model(LTXModel) (ModelLedger.transformer)",
            "sigmas = LTX2Scheduler().execute(steps=num_inference_steps) (no latent: 4096 tokens, shift 2.05, "
            "stretched to the terminal 0.1, then 0), float32",
            GUIDED_CALL,
            *stage_calls("", "noise.0000", "noise.0001"),
            "decode_video(video latent, video decoder, generator) (draws nothing: no timestep conditioning); "
            "decode_audio(audio latent, audio decoder, vocoder)",
        ],
    }
    return GoldenCase(
        group="pipeline", case=case, component="pipeline_one_stage",
        description="Tiny LTX-2.3 one-stage text-to-video+audio run (TI2VidOneStagePipeline sampling): 4 Euler steps "
        "of the LTX2Scheduler with CFG+STG+modality guidance and rescale (LTX-2.3 defaults), 9 frames 64x96 at 24 "
        "fps, then video VAE, audio VAE and BigVGAN+BWE vocoder decode" + note,
        generator=GENERATOR, weights=weights, weights_metadata={"config": canonical_json(config)},
        inputs={**noise, **ctx}, outputs=outputs, intermediates=rec.values, params=params, tolerance=TOLERANCE,
    )


def two_stage_case() -> GoldenCase:
    from ltx_core.components.diffusion_steps import EulerDiffusionStep
    from ltx_core.components.noisers import GaussianNoiser
    from ltx_core.model.upsampler import upsample_video
    from ltx_pipelines.utils.constants import STAGE_2_DISTILLED_SIGMA_VALUES
    from ltx_pipelines.utils.helpers import simple_denoising_func

    height, width, steps, stg_block = 128, 192, 3, 1  # stage 1 at 64x96
    config, up_config = component_configs(decode=False, upsample=True)
    weights, up_weights = build_weights(config, False, up_config)
    ctx = contexts(8100)
    rec = Recorder()
    draws: list = []
    with tempfile.TemporaryDirectory() as tmp, torch.no_grad(), record_randn(draws):
        ledger = Ledger(Path(tmp), config, weights, up_config, up_weights)
        generator = torch.Generator(device="cpu").manual_seed(SEED)
        noiser = GaussianNoiser(generator=generator)
        transformer = ledger.get("transformer")
        video_state, audio_state = guided_stage(rec, "stage1.", transformer, pixel_shape(height // 2, width // 2),
                                                noiser, steps, ctx, stg_block)
        rec.add("stage1.latents.video.final", video_state.latent)
        rec.add("stage1.latents.audio.final", audio_state.latent)
        # The pipeline passes ModelLedger.video_encoder(); only its statistics are used (see build_weights).
        encoder = statistics_encoder(config, weights=weights)
        upscaled = upsample_video(latent=video_state.latent[:1], video_encoder=encoder,
                                  upsampler=ledger.get("spatial_upsampler"))
        rec.add("upsampled.video", upscaled)
        # Stage 2 builds the transformer again from the ledger with the distilled LoRA added (here: none).
        transformer = ledger.get("transformer")
        sigmas = torch.Tensor(STAGE_2_DISTILLED_SIGMA_VALUES)
        rec.add("stage2.sigmas", sigmas)
        steps_rec = StepRecorder(rec, "stage2.", transformer, ["cond"])
        video_state, audio_state = denoise_audio_video_tiny(
            pixel_shape(height, width), noiser, sigmas, EulerDiffusionStep(),
            simple_denoising_func(video_context=to_reference(ctx["context.video.positive"]),
                                  audio_context=to_reference(ctx["context.audio.positive"]), transformer=transformer),
            pipeline_components(), steps_rec, noise_scale=sigmas[0], initial_video_latent=upscaled,
            initial_audio_latent=audio_state.latent,
        )
        steps_rec.close()
    outputs = {"latents.video.final": video_state.latent, "latents.audio.final": audio_state.latent}
    noise, described = two_stage_noise_inputs(draws, height, width, audio_state.latent.shape[2])
    params = {
        **common_params(up_config),
        "pipeline": "TI2VidTwoStagesPipeline (ltx-pipelines 1.0.0), text only, distilled_lora=[] (stage 2 uses the "
        "stage-1 weights), tiling off",
        "height": height,
        "width": width,
        "stage_1_height": height // 2,
        "stage_1_width": width // 2,
        "num_inference_steps": steps,
        "stage_2_sigmas": list(STAGE_2_DISTILLED_SIGMA_VALUES),
        "stage_2_noise_scale": "sigmas[0] of stage 2 as a float32 0-d tensor (0.909375 rounded to float32)",
        "stage_1_video_latent_shape": [1, VIDEO_CHANNELS, 2, height // 64, width // 64],
        "video_latent_shape": list(video_state.latent.shape),
        "audio_latent_shape": list(audio_state.latent.shape),
        "guidance": {"stage_1": guidance_params(stg_block), "stage_2": "none (simple_denoising_func: one "
                     "positive-context X0Model pass per step, its x0 used as is)"},
        "noise_draws": described,
        "decode": "not part of this case (same decoders as t2v_audio_one_stage); 1.0.0 decodes the stage-2 video "
        "with the generator and the stage-2 audio",
        "call_sequence": [
            "generator = torch.Generator('cpu').manual_seed(seed); noiser = GaussianNoiser(generator); "
            "stepper = EulerDiffusionStep(); transformer = X0Model(LTXModel) (ModelLedger.transformer)",
            "stage 1 at (height/2, width/2): sigmas = LTX2Scheduler().execute(steps=num_inference_steps) (no "
            "latent: 4096 tokens, shift 2.05), float32; " + GUIDED_CALL,
            *stage_calls("stage 1 ", "noise.0000", "noise.0001"),
            "upsample_video(stage-1 video latent [B,C,F,H,W], video encoder, upsampler): un_normalize with "
            "vae.per_channel_statistics, LatentUpsampler, normalize -> upsampled.video",
            "stage 2 at (height, width): sigmas = torch.Tensor(STAGE_2_DISTILLED_SIGMA_VALUES); denoise_fn = "
            "simple_denoising_func(positive contexts); noise_scale = sigmas[0]; initial video latent = "
            "upsampled.video, initial audio latent = stage-1 final audio latent; the SAME generator continues",
            *stage_calls("stage 2 ", "noise.0002", "noise.0003"),
        ],
    }
    return GoldenCase(
        group="pipeline", case="two_stage", component="pipeline_two_stage",
        description="Tiny LTX-2.3 two-stage text-to-video+audio run (TI2VidTwoStagesPipeline sampling, no LoRA): "
        "stage 1 at 64x96 with 3 guided Euler steps (CFG+STG+modality, rescale), x2 spatial latent upsample, stage "
        "2 at 128x192 with the 3 distilled sigmas after noise re-injection at sigma 0.909375 from the same "
        "generator; 9 frames at 24 fps; final latents (no decode)",
        generator=GENERATOR, weights={**weights, **{UPSAMPLER_PREFIX + k: v for k, v in up_weights.items()}},
        weights_metadata={"config": canonical_json(config), "upsampler_config": canonical_json(up_config)},
        inputs={**noise, **ctx}, outputs=outputs, intermediates=rec.values, params=params, tolerance=TOLERANCE,
    )


# The distilled case: DistilledPipeline.__call__ (ltx_pipelines/distilled.py) on the two-stage case's weights
# (shared, not written again): stage 1 on DISTILLED_SIGMA_VALUES and stage 2 on STAGE_2_DISTILLED_SIGMA_VALUES, both
# with simple_denoising_func (one positive pass per step, no guidance), the same transformer for both stages.
def distilled_case() -> GoldenCase:
    from ltx_core.components.diffusion_steps import EulerDiffusionStep
    from ltx_core.components.noisers import GaussianNoiser
    from ltx_core.model.upsampler import upsample_video
    from ltx_pipelines.utils.constants import DISTILLED_SIGMA_VALUES, STAGE_2_DISTILLED_SIGMA_VALUES
    from ltx_pipelines.utils.helpers import simple_denoising_func

    height, width = 128, 192  # stage 1 at 64x96
    config, up_config = component_configs(decode=False, upsample=True)
    weights, up_weights = build_weights(config, False, up_config)
    ctx = contexts(8200)
    positive = {k: v for k, v in ctx.items() if k.endswith(".positive")}  # no negative prompt in this pipeline
    rec = Recorder()
    draws: list = []
    with tempfile.TemporaryDirectory() as tmp, torch.no_grad(), record_randn(draws):
        ledger = Ledger(Path(tmp), config, weights, up_config, up_weights)
        generator = torch.Generator(device="cpu").manual_seed(SEED)
        noiser = GaussianNoiser(generator=generator)
        transformer = ledger.get("transformer")
        denoise_fn = simple_denoising_func(video_context=to_reference(positive["context.video.positive"]),
                                           audio_context=to_reference(positive["context.audio.positive"]),
                                           transformer=transformer)
        sigmas1 = torch.Tensor(DISTILLED_SIGMA_VALUES)
        rec.add("stage1.sigmas", sigmas1)
        steps1 = StepRecorder(rec, "stage1.", transformer, ["cond"])
        video_state, audio_state = denoise_audio_video_tiny(
            pixel_shape(height // 2, width // 2), noiser, sigmas1, EulerDiffusionStep(), denoise_fn,
            pipeline_components(), steps1)
        steps1.close()
        rec.add("stage1.latents.video.final", video_state.latent)
        rec.add("stage1.latents.audio.final", audio_state.latent)
        encoder = statistics_encoder(config, weights=weights)
        upscaled = upsample_video(latent=video_state.latent[:1], video_encoder=encoder,
                                  upsampler=ledger.get("spatial_upsampler"))
        rec.add("upsampled.video", upscaled)
        sigmas2 = torch.Tensor(STAGE_2_DISTILLED_SIGMA_VALUES)
        rec.add("stage2.sigmas", sigmas2)
        steps2 = StepRecorder(rec, "stage2.", transformer, ["cond"])
        video_state, audio_state = denoise_audio_video_tiny(
            pixel_shape(height, width), noiser, sigmas2, EulerDiffusionStep(), denoise_fn, pipeline_components(),
            steps2, noise_scale=sigmas2[0], initial_video_latent=upscaled, initial_audio_latent=audio_state.latent)
        steps2.close()
    outputs = {"latents.video.final": video_state.latent, "latents.audio.final": audio_state.latent}
    noise, described = two_stage_noise_inputs(draws, height, width, audio_state.latent.shape[2])
    params = {
        **common_params(up_config),
        "pipeline": "DistilledPipeline (ltx-pipelines 1.0.0), text only, no LoRA, tiling off",
        "shared_weights": "two_stage",
        "height": height,
        "width": width,
        "stage_1_height": height // 2,
        "stage_1_width": width // 2,
        "stage_1_sigmas": list(DISTILLED_SIGMA_VALUES),
        "stage_2_sigmas": list(STAGE_2_DISTILLED_SIGMA_VALUES),
        "stage_2_noise_scale": "sigmas[0] of stage 2 as a float32 0-d tensor",
        "video_latent_shape": list(video_state.latent.shape),
        "audio_latent_shape": list(audio_state.latent.shape),
        "guidance": "none in either stage (simple_denoising_func: one positive-context X0Model pass per step)",
        "noise_draws": described,
        "call_sequence": [
            "generator = torch.Generator('cpu').manual_seed(seed); noiser = GaussianNoiser(generator); "
            "stepper = EulerDiffusionStep(); one transformer for both stages",
            "stage 1 at (height/2, width/2): sigmas = torch.Tensor(DISTILLED_SIGMA_VALUES); denoise_fn = "
            "simple_denoising_func(positive contexts)",
            *stage_calls("stage 1 ", "noise.0000", "noise.0001"),
            "upsample_video(stage-1 video latent, video encoder statistics, upsampler) -> upsampled.video",
            "stage 2 at (height, width): sigmas = torch.Tensor(STAGE_2_DISTILLED_SIGMA_VALUES); noise_scale = "
            "sigmas[0]; initial latents = upsampled.video and the stage-1 audio; the SAME generator continues",
            *stage_calls("stage 2 ", "noise.0002", "noise.0003"),
        ],
    }
    return GoldenCase(
        group="pipeline", case="distilled", component="pipeline_distilled",
        description="Tiny LTX-2.3 distilled two-stage text-to-video+audio run (DistilledPipeline sampling): stage 1 "
        "at 64x96 on the 8 distilled sigmas, x2 spatial latent upsample, stage 2 at 128x192 on the 3 stage-2 sigmas "
        "after noise re-injection, one positive pass per step; 9 frames at 24 fps; final latents (no decode); "
        "weights shared with two_stage",
        generator=GENERATOR, weights={}, weights_metadata={"config": canonical_json(config)},
        inputs={**noise, **positive}, outputs=outputs, intermediates=rec.values, params=params, tolerance=TOLERANCE,
    )


# The two-stage case with the distilled LoRA as its own file: TI2VidTwoStagesPipeline with
# distilled_lora=[(file, strength)] (ltx_pipelines/ti2vid_two_stages.py: stage_2_model_ledger =
# stage_1_model_ledger.with_additional_loras(distilled_lora), so the stage-2 transformer is the checkpoint's with the
# LoRA fused by SingleGPUModelBuilder.lora(path, strength, LTXV_LORA_COMFY_RENAMING_MAP) as args.py's LoraAction
# passes it; stage 1 runs the bare checkpoint). Upsampled, decoded and vocoded with the stage-2 ledger's models, as
# there.
# 64x64 (stage 1 at 32x32, one latent pixel) and fps 64 keep the decoded video and the waveform small.
LORA_TWO_STAGE_SHAPE = (64, 64)
LORA_TWO_STAGE_FPS = 64.0
DISTILLED_LORA_FILE = "distilled_lora.safetensors"
# Dyadic, as dit/lora_official's: with make_lora's small dyadic A and B, B*strength and (B*strength) @ A are exact in
# the LoRA's bf16, so ltx-core's product (rounded to bf16 twice) and the engine's (f32) are the same numbers and the
# fused weights are defined by one rounding of W + delta whatever the order of the arithmetic. With 0.8 (the
# --distilled-lora example of ltx_pipelines/utils/args.py) those two bf16 roundings alone moved the stage-2 x0 by
# up to 2x the validation tolerance.
DISTILLED_LORA_STRENGTH = 0.75


def lora_two_stage_case() -> GoldenCase:
    from ltx_core.components.diffusion_steps import EulerDiffusionStep
    from ltx_core.components.noisers import GaussianNoiser
    from ltx_core.loader import LTXV_LORA_COMFY_RENAMING_MAP, LoraPathStrengthAndSDOps
    from ltx_core.model.transformer import LTXModelConfigurator
    from ltx_core.model.upsampler import upsample_video
    from ltx_pipelines.utils.constants import STAGE_2_DISTILLED_SIGMA_VALUES
    from ltx_pipelines.utils.helpers import simple_denoising_func
    from make_lora_goldens import make_lora

    height, width = LORA_TWO_STAGE_SHAPE
    steps, stg_block = 3, 1
    config, up_config = component_configs(decode=True, upsample=True)
    weights, up_weights = build_weights(config, True, up_config)
    # Nothing but the LoRA is stored: the monolith is t2v_audio_one_stage's file and the upsampler two_stage's.
    one_stage_weights, _ = build_weights(component_configs(decode=True, upsample=False)[0], True, None)
    two_stage_config, two_stage_up = component_configs(decode=False, upsample=True)
    two_stage_weights, two_stage_up_weights = build_weights(two_stage_config, False, two_stage_up)
    for mine, theirs, what in ((weights, one_stage_weights, "t2v_audio_one_stage"),
                               (up_weights, two_stage_up_weights, "two_stage upsampler")):
        if sorted(mine) != sorted(theirs) or any(not torch.equal(mine[k], theirs[k]) for k in mine):
            raise RuntimeError(f"lora_two_stage: weights differ from {what}'s")
    for k, v in two_stage_weights.items():  # the DiT and the statistics the upsample uses are the same tensors
        if reference_dtype() != torch.float32:
            break  # the bf16 measuring run's statistics encoder holds bf16 values
        if (k.startswith(DIT_PREFIX) or ".per_channel_statistics." in k) and not torch.equal(weights[k], v):
            raise RuntimeError(f"lora_two_stage: {k} differs from two_stage's")
    dit = LTXModelConfigurator.from_config(config).to_empty(device="cpu")
    lora = make_lora(dit)  # rank 2 on every Linear, official naming, bf16
    ctx = contexts(8400)
    rec = Recorder()
    draws: list = []
    # A real checkpoint is bf16, and ltx-core fuses LoRAs into bf16 (or fp8) stored weights only
    # (loader/fuse_loras.py raises on float32 ones): the monolith is written in bf16 (the shared case's weights
    # rounded), and both stages read that one file, as ti2vid_two_stages.py's stage-2 ledger is the stage-1 ledger
    # with_additional_loras. The ledger's dtype is the reference dtype: float32 for the case, where apply_loras adds
    # the LoRA's delta to the widened bf16 weights in float32 (_fuse_delta_with_bfloat16 with a float32 target);
    # bfloat16 in the run that measures the production tolerance, which fuses as the real pipeline does.
    checkpoint = {k: v.to(torch.bfloat16) for k, v in weights.items()}
    with tempfile.TemporaryDirectory() as tmp, torch.no_grad(), record_randn(draws):
        ledger = Ledger(Path(tmp), config, checkpoint, up_config, up_weights)
        lora_path = Path(tmp) / DISTILLED_LORA_FILE
        write_safetensors(lora_path, lora, {})
        stage_2_ledger = copy.copy(ledger)
        stage_2_ledger.ledger = ledger.ledger.with_additional_loras(
            (LoraPathStrengthAndSDOps(str(lora_path), DISTILLED_LORA_STRENGTH, LTXV_LORA_COMFY_RENAMING_MAP),))
        generator = torch.Generator(device="cpu").manual_seed(SEED)
        noiser = GaussianNoiser(generator=generator)
        transformer = ledger.get("transformer")
        video_state, audio_state = guided_stage(rec, "stage1.", transformer,
                                                pixel_shape(height // 2, width // 2, LORA_TWO_STAGE_FPS), noiser,
                                                steps, ctx, stg_block)
        rec.add("stage1.latents.video.final", video_state.latent)
        rec.add("stage1.latents.audio.final", audio_state.latent)
        encoder = statistics_encoder(config, weights=checkpoint)
        upscaled = upsample_video(latent=video_state.latent[:1], video_encoder=encoder,
                                  upsampler=stage_2_ledger.get("spatial_upsampler"))
        rec.add("upsampled.video", upscaled)
        unfused = transformer.state_dict()
        # With a float32 ledger apply_loras returns the fused Linears in float32 but leaves the tensors no LoRA
        # touches (biases, norms, tables) in the file's bfloat16 (_fuse_deltas skips keys already in its destination,
        # the loaded state dict): widened here to the ledger's dtype, as a LoRA-free build converts them.
        transformer = stage_2_ledger.get("transformer").to(reference_dtype())
        changed = [k for k, v in transformer.state_dict().items() if not torch.equal(v, unfused[k])]
        if len(changed) != len(lora) // 2:
            raise RuntimeError(f"the distilled LoRA changed {len(changed)} weights, it has {len(lora) // 2} layers")
        sigmas = torch.Tensor(STAGE_2_DISTILLED_SIGMA_VALUES)
        rec.add("stage2.sigmas", sigmas)
        steps_rec = StepRecorder(rec, "stage2.", transformer, ["cond"])
        video_state, audio_state = denoise_audio_video_tiny(
            pixel_shape(height, width, LORA_TWO_STAGE_FPS), noiser, sigmas, EulerDiffusionStep(),
            simple_denoising_func(video_context=to_reference(ctx["context.video.positive"]),
                                  audio_context=to_reference(ctx["context.audio.positive"]), transformer=transformer),
            pipeline_components(), steps_rec, noise_scale=sigmas[0], initial_video_latent=upscaled,
            initial_audio_latent=audio_state.latent,
        )
        steps_rec.close()
        outputs = {"latents.video.final": video_state.latent, "latents.audio.final": audio_state.latent}
        decoded, sampling_rate = decode(stage_2_ledger, video_state.latent, audio_state.latent, generator, rec)
        outputs.update(decoded)
    noise, described = two_stage_noise_inputs(draws, height, width, audio_state.latent.shape[2])
    params = {
        **common_params(up_config),
        "fps": LORA_TWO_STAGE_FPS,
        "pipeline": "TI2VidTwoStagesPipeline (ltx-pipelines 1.0.0), text only, distilled_lora=[(distilled_lora_file, "
        "distilled_lora_strength)], tiling off",
        "shared_weights": "t2v_audio_one_stage",
        "upsampler_weights": "two_stage",
        "dtype": "the checkpoint is bfloat16 (the monolith's tensors rounded to bfloat16 and stored as such, as a "
        "real checkpoint; ltx-core fuses LoRAs into bfloat16 or fp8 weights only); the ledger, latents and noise "
        "are float32, so every model runs its bfloat16 weights widened to float32 and the LoRA is fused in float32 "
        "(apply_loras: W_bf16 + (B*strength) @ A, the product in the LoRA's bfloat16)",
        "weights_layout": {
            "monolith": "../t2v_audio_one_stage/weights.safetensors (DiT, video decoder, audio decoder, vocoder; "
            "the same generator code and seeds, checked), rounded to bfloat16: the checkpoint both stages read",
            "spatial_upsampler": "../two_stage/weights.safetensors under 'spatial_upsampler.' with its config in "
            "the metadata key 'upsampler_config' (checked equal)",
            "distilled_lora": f"{DISTILLED_LORA_FILE} in this case: a LoRA file as given to --distilled-lora "
            "(official naming diffusion_model.<module>.lora_{A,B}.weight, bf16, rank 2, every DiT Linear); this "
            "case's weights.safetensors holds only the config",
        },
        "distilled_lora_file": DISTILLED_LORA_FILE,
        "distilled_lora_strength": DISTILLED_LORA_STRENGTH,
        "height": height,
        "width": width,
        "stage_1_height": height // 2,
        "stage_1_width": width // 2,
        "num_inference_steps": steps,
        "stage_2_sigmas": list(STAGE_2_DISTILLED_SIGMA_VALUES),
        "stage_2_noise_scale": "sigmas[0] of stage 2 as a float32 0-d tensor",
        "video_latent_shape": list(video_state.latent.shape),
        "audio_latent_shape": list(audio_state.latent.shape),
        "audio_sampling_rate": sampling_rate,
        "guidance": {"stage_1": guidance_params(stg_block), "stage_2": "none (simple_denoising_func)"},
        "noise_draws": described,
        "video_decode": "decode_video without tiling with the stage-2 ledger's decoder (video.decoded)",
        "audio_decode": "decode_audio with the stage-2 ledger's decoder and vocoder: audio.mel, audio.waveform [2,N]",
        "call_sequence": [
            "as two_stage, except: one bfloat16 checkpoint; stage 2's transformer, upsampler, decoders and vocoder "
            "come from the stage-1 ledger's with_additional_loras((distilled LoRA file, strength, "
            "LTXV_LORA_COMFY_RENAMING_MAP)) (the transformer's Linears W + (B*strength) @ A fused at load, "
            "ltx_core/loader/fuse_loras.py); stage 1's transformer is the bare checkpoint",
            *stage_calls("stage 1 ", "noise.0000", "noise.0001"),
            "upsample_video -> upsampled.video",
            *stage_calls("stage 2 ", "noise.0002", "noise.0003"),
            "decode_video(video latent, decoder, generator) (draws nothing); decode_audio(audio latent, decoder, "
            "vocoder)",
        ],
    }
    case = GoldenCase(
        group="pipeline", case="two_stage_distilled_lora", component="pipeline_two_stage_lora",
        description="Tiny LTX-2.3 two-stage text-to-video+audio run with the distilled LoRA as its own file for "
        "stage 2 (TI2VidTwoStagesPipeline) over one bf16 checkpoint: stage 1 at 32x32 with 3 guided steps, x2 "
        "upsample, stage 2 at 64x64 on the 3 distilled sigmas with the LoRA fused at strength "
        f"{DISTILLED_LORA_STRENGTH}, 9 frames at 64 fps, video and audio decode; DiT and decoders shared with "
        "t2v_audio_one_stage (rounded to bf16), upsampler with two_stage",
        generator=GENERATOR, weights={}, weights_metadata={"config": canonical_json(config)},
        inputs={**noise, **ctx}, outputs=outputs, intermediates=rec.values, params=params, tolerance=TOLERANCE,
    )
    case.extra_tensors = {DISTILLED_LORA_FILE: lora}
    return case


# The image-to-video case: image 0 replaces latent frame 0 (strength < 1, so its tokens are partly noised and
# denoised), image 1 is a keyframe on the last frame (strength 1: appended tokens that stay clean). Source sizes
# differ from the target so the cover resize crops along both axes. fps 64 keeps the audio (and the golden) short.
I2V_SHAPE = (32, 32)  # height, width: one latent pixel per frame keeps the decoded video small
I2V_FPS = 64.0
I2V_IMAGES = ({"frame": 0, "strength": 0.9, "size": (20, 28), "seed": 8300},
              {"frame": NUM_FRAMES - 1, "strength": 1.0, "size": (24, 18), "seed": 8301})
# The encoder's 4 compressions (x2 space, x2 time, x2 all, x2 all after the x4 patch) at width 8 with no res_x
# stages: the default tiny widths (8..64) would be 2.3 MB; the decoder's blocks (shared file) are unchanged.
I2V_ENCODER_BLOCKS = [["compress_space_res", {"multiplier": 1}], ["compress_time_res", {"multiplier": 1}],
                      ["compress_all_res", {"multiplier": 1}], ["compress_all_res", {"multiplier": 1}]]
I2V_SHARED = "t2v_audio_one_stage"  # the case whose weights.safetensors holds the DiT, decoders and vocoder


def source_image(size: tuple[int, int], seed: int):
    """A deterministic RGB still (uint8 [H,W,3]): smooth colour ramps plus seeded noise, so the H.264 round trip
    and the bilinear resize both change it."""
    import numpy as np

    h, w = size
    y, x = torch.meshgrid(torch.arange(h, dtype=torch.float32), torch.arange(w, dtype=torch.float32), indexing="ij")
    base = torch.stack([x / w * 200, y / h * 200, (x + y) / (h + w) * 255], dim=-1)
    img = (base + seeded_randn((h, w, 3), seed, 20.0)).clamp(0, 255).round().to(torch.uint8)
    return np.ascontiguousarray(img.numpy())


def i2v_case() -> GoldenCase:
    from ltx_core.components.noisers import GaussianNoiser
    from ltx_core.model.video_vae import VAE_ENCODER_COMFY_KEYS_FILTER, VideoEncoderConfigurator
    from ltx_pipelines.utils.constants import DEFAULT_IMAGE_CRF
    from ltx_pipelines.utils.helpers import combined_image_conditionings
    from ltx_pipelines.utils.media_io import decode_image, normalize_latent, preprocess, resize_and_center_crop
    from make_vae_goldens import STATS as VAE_STATS
    from PIL import Image
    from ltx_pipelines.utils.args import ImageConditioningInput

    height, width = I2V_SHAPE
    steps, stg_block = 3, 1
    config, _ = component_configs(decode=True, upsample=False)
    weights, _ = build_weights(config, True, None)  # the same tensors as t2v_audio_one_stage's file
    config["vae"]["encoder_blocks"] = I2V_ENCODER_BLOCKS
    _, enc_weights = roundtrip(config, VideoEncoderConfigurator, VAE_ENCODER_COMFY_KEYS_FILTER, vae_key("encoder"),
                               7100, rules=[stats_rule], seeded_buffers=VAE_STATS)
    for k, v in enc_weights.items():
        if k in weights and not torch.equal(weights[k], v):
            raise RuntimeError(f"shared checkpoint tensor {k} differs between the encoder and the decoder")
    ctx = contexts(8200)
    rec = Recorder()
    draws: list = []
    inputs: dict = {}
    sources = [source_image(im["size"], im["seed"]) for im in I2V_IMAGES]  # seeded before recording the draws
    with tempfile.TemporaryDirectory() as tmp, torch.no_grad(), record_randn(draws):
        ledger = Ledger(Path(tmp), config, {**weights, **enc_weights}, None, {})
        images = []
        for i, im in enumerate(I2V_IMAGES):
            path = Path(tmp) / f"image{i}.png"
            Image.fromarray(sources[i]).save(path)
            images.append(ImageConditioningInput(str(path), im["frame"], im["strength"]))
            # load_image_conditioning's steps, recorded one by one (checked against the encoder's input below).
            source = decode_image(str(path))
            reencoded = preprocess(source, crf=DEFAULT_IMAGE_CRF)
            pixels = normalize_latent(resize_and_center_crop(torch.tensor(reencoded, dtype=torch.float32), height,
                                                             width), torch.device("cpu"), torch.float32)
            inputs[f"image.{i}.source"] = torch.tensor(source, dtype=torch.float32)
            inputs[f"image.{i}.reencoded"] = torch.tensor(reencoded, dtype=torch.float32)
            inputs[f"image.{i}.pixels"] = pixels
        encoder = ledger.get("video_encoder")
        seen = []
        h = encoder.register_forward_hook(lambda _m, args, out: seen.append((args[0].clone(), out.clone())))
        conditionings = combined_image_conditionings(images=images, height=height, width=width,
                                                     video_encoder=encoder, dtype=reference_dtype(),
                                                     device=torch.device("cpu"))
        h.remove()
        for i, (pix, lat) in enumerate(seen):
            # Exact in the float32 run; the bf16 run's pipeline normalises in bf16 (its own rounding).
            if reference_dtype() == torch.float32 and not torch.equal(pix, inputs[f"image.{i}.pixels"]):
                raise RuntimeError(f"image {i}: recorded preprocessing differs from load_image_conditioning")
            rec.add(f"image.{i}.latent", lat)
        generator = torch.Generator(device="cpu").manual_seed(SEED)
        noiser = GaussianNoiser(generator=generator)
        transformer = ledger.get("transformer")
        shape = pixel_shape(height, width, I2V_FPS)
        video_state, audio_state = guided_stage(rec, "", transformer, shape, noiser, steps, ctx, stg_block,
                                                conditionings)
        outputs = {"latents.video.final": video_state.latent, "latents.audio.final": audio_state.latent}
        decoded, sampling_rate = decode(ledger, video_state.latent, audio_state.latent, generator, rec)
        outputs.update(decoded)
    n_video = 2 * (height // 32) * (width // 32)
    n_key = (height // 32) * (width // 32)
    n_audio = audio_state.latent.shape[2]
    noise, described = noise_inputs(draws, [("video initial noise (generated + appended keyframe tokens)",
                                             (1, n_video + n_key, VIDEO_CHANNELS)),
                                            ("audio initial noise", (1, n_audio, AUDIO_TOKEN_WIDTH))])
    params = {
        **common_params(None),
        "fps": I2V_FPS,
        "pipeline": "TI2VidOneStagePipeline (ltx-pipelines 1.0.0) with images",
        "height": height,
        "width": width,
        "num_inference_steps": steps,
        "shared_weights": I2V_SHARED,
        "weights_layout": {
            "encoder": "weights.safetensors holds only the video VAE encoder (vae.encoder.*, "
            "vae.per_channel_statistics.*) with the full `config`",
            "shared": f"the DiT, video decoder, audio decoder and vocoder are the tensors of ../{I2V_SHARED}/"
            "weights.safetensors (same generator code and seeds), not stored twice",
        },
        "images": [{"frame": im["frame"], "strength": im["strength"], "crf": DEFAULT_IMAGE_CRF,
                    "source_size": list(im["size"])} for im in I2V_IMAGES],
        "image_inputs": "image.N.source = decode_image of the PNG (PIL, [H,W,3] 0..255); image.N.reencoded = "
        "preprocess(source, crf) (PyAV libx264 round trip, as float); image.N.pixels = normalize_latent("
        "resize_and_center_crop(reencoded)) [1,3,1,H,W], exactly the video encoder's input in "
        "combined_image_conditionings (checked); image.N.latent = its output",
        "conditioning": "combined_image_conditionings: frame 0 -> VideoConditionByLatentIndex(latent_idx=0), other "
        "frames -> VideoConditionByKeyframeIndex (appended tokens, positions time-shifted by the frame, no "
        "attention mask); video latents, x0 and positions carry the appended tokens until clear_conditioning",
        "video_latent_shape": list(video_state.latent.shape),
        "audio_latent_shape": list(audio_state.latent.shape),
        "audio_sampling_rate": sampling_rate,
        "guidance": guidance_params(stg_block),
        "noise_draws": described,
        "video_decode": "decode_video without tiling (video.decoded [B,3,F,H,W])",
        "audio_decode": "decode_audio: audio.mel, audio.waveform [2,N]",
        "call_sequence": [
            "conditionings = combined_image_conditionings(images, height, width, video_encoder) (before the seed)",
            "generator = torch.Generator('cpu').manual_seed(seed); noiser = GaussianNoiser(generator)",
            "sigmas = LTX2Scheduler().execute(steps=num_inference_steps), float32",
            GUIDED_CALL,
            "video state: create_initial_state, then each conditioning's apply_to in order, then the noiser "
            "draws noise.0000 over every token (appended included) and mixes by denoise_mask",
            *stage_calls("", "noise.0000", "noise.0001")[1:],
            "decode_video(video latent, video decoder, generator); decode_audio(audio latent, audio decoder, vocoder)",
        ],
    }
    return GoldenCase(
        group="pipeline", case="i2v_keyframes", component="pipeline_i2v",
        description="Tiny LTX-2.3 one-stage image-to-video+audio run: an image on frame 0 by latent replacement "
        "(strength 0.9) and a keyframe on the last frame (strength 1), official preprocessing, 3 guided Euler steps, "
        "9 frames 32x32 at 64 fps, decode; DiT and decoders shared with t2v_audio_one_stage",
        generator=GENERATOR, weights=enc_weights, weights_metadata={"config": canonical_json(config)},
        inputs={**noise, **ctx, **inputs}, outputs=outputs, intermediates=rec.values, params=params,
        tolerance=TOLERANCE,
    )


CASES = {"t2v_audio_one_stage": one_stage_case, "two_stage": two_stage_case, "i2v_keyframes": i2v_case,
         "distilled": distilled_case, "two_stage_distilled_lora": lora_two_stage_case,
         SKIP_CASE[0]: lambda: one_stage_case(*SKIP_CASE)}


def generate(out_root: Path, only_cases: set[str] | None, groups: set[str]) -> list[Path]:
    if "pipeline" not in groups:
        return []
    written = []
    for name, make in CASES.items():
        if only_cases is None or name in only_cases:
            torch.manual_seed(0)
            written.append(with_measured_production(make).write(out_root))
    return written

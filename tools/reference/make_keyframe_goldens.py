"""Keyframe interpolation golden case (group `pipeline`, component `pipeline_keyframes`):
KeyframeInterpolationPipeline.__call__ (ltx_pipelines/keyframe_interpolation.py, 1.0.0) on the two-stage case's tiny
DiT and upsampler (its weights file, shared) plus a tiny video VAE encoder (this case's weights file).

  keyframe_interpolation  two stills (frame 0 at strength 0.9, the last frame at 1.0) given to
                          image_conditionings_by_adding_guiding_latent at each stage's size: every image, frame 0's
                          too, becomes VideoConditionByKeyframeIndex tokens appended after the generated ones (the
                          default pipelines replace frame 0's latent instead). Stage 1 at 32x32 with 3 guided Euler
                          steps (the guider factories, CFG+STG+modality, rescale), x2 upsample, stage 2 at 64x64 with
                          the distilled sigmas, the images encoded again at that size. Recorded: each image's
                          preprocessed pixels per stage size (image.N.pixels.HxW, exactly the encoder's input) and
                          latent, the latents and x0 of every step, the final latents.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

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
from make_pipeline_goldens import (  # noqa: E402
    AUDIO_TOKEN_WIDTH,
    I2V_ENCODER_BLOCKS,
    I2V_IMAGES,
    SEED,
    VIDEO_CHANNELS,
    Ledger,
    StepRecorder,
    build_weights,
    common_params,
    component_configs,
    contexts,
    denoise_audio_video_tiny,
    guidance_params,
    guided_stage,
    noise_inputs,
    pipeline_components,
    pixel_shape,
    source_image,
    statistics_encoder,
    vae_key,
)
from make_pipeline_goldens import TOLERANCE as PIPELINE_TOLERANCE  # noqa: E402

GROUPS = ("pipeline",)
GENERATOR = "tools/reference/make_keyframe_goldens.py"
SHARED = "two_stage"  # the case whose weights.safetensors holds the DiT, the VAE statistics and the upsampler
HEIGHT, WIDTH, STEPS, STG_BLOCK = 64, 64, 3, 1


def keyframe_case() -> GoldenCase:
    from ltx_core.components.diffusion_steps import EulerDiffusionStep
    from ltx_core.components.noisers import GaussianNoiser
    from ltx_core.model.upsampler import upsample_video
    from ltx_core.model.video_vae import VAE_ENCODER_COMFY_KEYS_FILTER, VideoEncoderConfigurator
    from ltx_pipelines.utils.args import ImageConditioningInput
    from ltx_pipelines.utils.constants import DEFAULT_IMAGE_CRF, STAGE_2_DISTILLED_SIGMA_VALUES
    from ltx_pipelines.utils.helpers import image_conditionings_by_adding_guiding_latent, simple_denoising_func
    from make_vae_goldens import STATS as VAE_STATS
    from PIL import Image

    config, up_config = component_configs(decode=False, upsample=True)
    weights, up_weights = build_weights(config, False, up_config)  # the same tensors as the two_stage case's file
    config["vae"]["encoder_blocks"] = I2V_ENCODER_BLOCKS
    _, enc_weights = roundtrip(config, VideoEncoderConfigurator, VAE_ENCODER_COMFY_KEYS_FILTER, vae_key("encoder"),
                               7100, rules=[stats_rule], seeded_buffers=VAE_STATS)
    for k, v in enc_weights.items():  # exact in the float32 run (the bf16 run holds the statistics in bf16)
        if reference_dtype() == torch.float32 and k in weights and not torch.equal(weights[k], v):
            raise RuntimeError(f"shared checkpoint tensor {k} differs between the encoder and the two_stage file")
    ctx = contexts(8300)
    rec = Recorder()
    draws: list = []
    inputs: dict = {}
    sources = [source_image(im["size"], im["seed"]) for im in I2V_IMAGES]  # seeded before recording the draws
    with tempfile.TemporaryDirectory() as tmp, torch.no_grad(), record_randn(draws):
        ledger = Ledger(Path(tmp), config, {**weights, **enc_weights}, up_config, up_weights)
        images = []
        for i, im in enumerate(I2V_IMAGES):
            path = Path(tmp) / f"image{i}.png"
            Image.fromarray(sources[i]).save(path)
            images.append(ImageConditioningInput(str(path), im["frame"], im["strength"]))
        encoder = ledger.get("video_encoder")

        def conditionings(height: int, width: int):
            seen = []
            hook = encoder.register_forward_hook(lambda _m, args, out: seen.append((args[0].clone(), out.clone())))
            items = image_conditionings_by_adding_guiding_latent(images=images, height=height, width=width,
                                                                 video_encoder=encoder, dtype=reference_dtype(),
                                                                 device=torch.device("cpu"))
            hook.remove()
            for i, (pixels, latent) in enumerate(seen):
                inputs[f"image.{i}.pixels.{height}x{width}"] = pixels
                rec.add(f"image.{i}.latent.{height}x{width}", latent)
            return items

        generator = torch.Generator(device="cpu").manual_seed(SEED)
        noiser = GaussianNoiser(generator=generator)
        transformer = ledger.get("transformer")
        video_state, audio_state = guided_stage(rec, "stage1.", transformer, pixel_shape(HEIGHT // 2, WIDTH // 2),
                                                noiser, STEPS, ctx, STG_BLOCK,
                                                conditionings(HEIGHT // 2, WIDTH // 2))
        rec.add("stage1.latents.video.final", video_state.latent)
        rec.add("stage1.latents.audio.final", audio_state.latent)
        upscaled = upsample_video(latent=video_state.latent[:1], video_encoder=statistics_encoder(config, weights=weights),
                                  upsampler=ledger.get("spatial_upsampler"))
        rec.add("upsampled.video", upscaled)
        transformer = ledger.get("transformer")
        sigmas = torch.Tensor(STAGE_2_DISTILLED_SIGMA_VALUES)
        rec.add("stage2.sigmas", sigmas)
        steps_rec = StepRecorder(rec, "stage2.", transformer, ["cond"])
        stage_2_items = conditionings(HEIGHT, WIDTH)
        video_state, audio_state = denoise_audio_video_tiny(
            pixel_shape(HEIGHT, WIDTH), noiser, sigmas, EulerDiffusionStep(),
            simple_denoising_func(video_context=to_reference(ctx["context.video.positive"]),
                                  audio_context=to_reference(ctx["context.audio.positive"]), transformer=transformer),
            pipeline_components(), steps_rec, noise_scale=sigmas[0], initial_video_latent=upscaled,
            initial_audio_latent=audio_state.latent, conditionings=stage_2_items)
        steps_rec.close()
    n1 = 2 * (HEIGHT // 64) * (WIDTH // 64)  # stage-1 latent tokens: 2 frames of (H/64)x(W/64)
    k1, n_audio = len(I2V_IMAGES) * (HEIGHT // 64) * (WIDTH // 64), audio_state.latent.shape[2]
    noise, described = noise_inputs(draws, [
        ("stage 1 video initial noise (generated + appended keyframe tokens)", (1, n1 + k1, VIDEO_CHANNELS)),
        ("stage 1 audio initial noise", (1, n_audio, AUDIO_TOKEN_WIDTH)),
        ("stage 2 video noise (upsampled latent + appended keyframe tokens)", (1, 4 * (n1 + k1), VIDEO_CHANNELS)),
        ("stage 2 audio noise", (1, n_audio, AUDIO_TOKEN_WIDTH)),
    ])
    params = {
        **common_params(up_config),
        "pipeline": "KeyframeInterpolationPipeline (ltx-pipelines 1.0.0), distilled_lora=[] (stage 2 uses the stage-1 "
        "weights), tiling off",
        "height": HEIGHT, "width": WIDTH, "stage_1_height": HEIGHT // 2, "stage_1_width": WIDTH // 2,
        "num_inference_steps": STEPS,
        "stage_2_sigmas": list(STAGE_2_DISTILLED_SIGMA_VALUES),
        "shared_weights": SHARED,
        "weights_layout": {
            "encoder": "weights.safetensors holds only the video VAE encoder (vae.encoder.*, "
            "vae.per_channel_statistics.*) with the full `config`",
            "shared": f"the DiT, VAE statistics and upsampler are the tensors of ../{SHARED}/weights.safetensors",
        },
        "images": [{"frame": im["frame"], "strength": im["strength"], "crf": DEFAULT_IMAGE_CRF,
                    "source_size": list(im["size"])} for im in I2V_IMAGES],
        "image_inputs": "image.N.pixels.HxW = the video encoder's input for image N at a stage's size (load_image_"
        "conditioning: decode, the libx264 round trip, resize_and_center_crop, normalize); image.N.latent.HxW its "
        "output",
        "conditioning": "image_conditionings_by_adding_guiding_latent at each stage's size: every image as "
        "VideoConditionByKeyframeIndex(keyframes, frame_idx, strength), frame 0 included (causal fix)",
        "video_latent_shape": list(video_state.latent.shape),
        "audio_latent_shape": list(audio_state.latent.shape),
        "guidance": {"stage_1": guidance_params(STG_BLOCK), "stage_2": "none (simple_denoising_func)"},
        "noise_draws": described,
    }
    encoder_file = {k: v for k, v in enc_weights.items()}
    return GoldenCase(
        group="pipeline", case="keyframe_interpolation", component="pipeline_keyframes",
        description="Tiny LTX-2.3 keyframe interpolation (KeyframeInterpolationPipeline): two stills as guiding "
        "keyframe tokens (frame 0 at 0.9, frame 8 at 1.0), stage 1 at 32x32 with 3 guided steps, x2 upsample, "
        "stage 2 at 64x64 with the distilled sigmas and the stills encoded again; final latents",
        generator=GENERATOR, weights=encoder_file, weights_metadata={"config": canonical_json(config)},
        inputs={**noise, **ctx, **inputs}, outputs={"latents.video.final": video_state.latent,
                                                    "latents.audio.final": audio_state.latent},
        intermediates=rec.values, params=params, tolerance=PIPELINE_TOLERANCE,
    )


def generate(out_root: Path, only_cases: set[str] | None, groups: set[str]) -> list[Path]:
    if "pipeline" not in groups or (only_cases is not None and "keyframe_interpolation" not in only_cases):
        return []
    torch.manual_seed(0)
    return [with_measured_production(keyframe_case).write(out_root)]

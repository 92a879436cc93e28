"""IC-LoRA golden case (group `pipeline`, component `pipeline_iclora`): ICLoraPipeline (ltx_pipelines/ic_lora.py,
1.0.0) on the two-stage case's tiny DiT and upsampler and the keyframe case's tiny video VAE encoder, all read from
one bf16 checkpoint (ltx-core fuses LoRAs into bf16 or fp8 stored weights only).

  ic_lora  a 256x128 two-stage run. Stage 1 (128x64) on the distilled sigmas with one positive pass per step and
           an IC-LoRA fused (ic_lora.safetensors: rank 2 on every DiT Linear, metadata reference_downscale_factor
           = 2): image 0 replaces latent frame 0 (strength 0.9), image 1 is a keyframe on the last frame, then the
           reference video (control.mov, 12 frames capped at 9, read at 64x32 = stage 1 / 2) appended as
           VideoConditionByReferenceLatent tokens (strength 0.75, H/W positions x2) wrapped in
           ConditioningItemAttentionStrengthWrapper with the mask video (mask.mov, read at the stage-1 size as
           ic_lora.py's main does, pooled to the reference latent) times the attention strength 0.5. x2 upsample;
           stage 2 (256x128) on the bare checkpoint with the images only (STAGE_2_DISTILLED_SIGMA_VALUES).
           Recorded: the reference video's and the images' encoder inputs and latents, the mask at each step of
           its chain, the stage-1 self-attention mask, every step's latents and x0, the final latents.
  ic_lora_no_mask  the same run without the optional inputs: no mask video (the scalar attention strength 0.6
           then weighs the reference tokens alone, _create_conditionings' elif branch), no images, the reference at
           strength 1 (kept clean).
"""

from __future__ import annotations

import copy
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
    write_safetensors,
)
from make_pipeline_goldens import (  # noqa: E402
    AUDIO_TOKEN_WIDTH,
    I2V_ENCODER_BLOCKS,
    I2V_IMAGES,
    NUM_FRAMES,
    SEED,
    VIDEO_CHANNELS,
    Ledger,
    StepRecorder,
    build_weights,
    common_params,
    component_configs,
    contexts,
    denoise_audio_video_tiny,
    noise_inputs,
    pipeline_components,
    pixel_shape,
    source_image,
    vae_key,
)
from make_pipeline_goldens import TOLERANCE as PIPELINE_TOLERANCE  # noqa: E402

GROUPS = ("pipeline",)
GENERATOR = "tools/reference/make_iclora_goldens.py"
SHARED = {"dit": "two_stage", "video_encoder": "keyframe_interpolation"}
HEIGHT, WIDTH = 256, 128  # stage 1 at 128x64 (4x2 latent pixels), the reference at 64x32 (2x1)
DOWNSCALE = 2  # the IC-LoRA's reference_downscale_factor metadata
VIDEO_STRENGTH, ATTENTION_STRENGTH = 0.75, 0.5
CONTROL_FRAMES, CONTROL_SIZE = 12, (40, 36)  # height, width: covers 64x32 after a resize that crops
MASK_FRAMES, MASK_SIZE = 10, (30, 20)
LORA_FILE, CONTROL_FILE, MASK_FILE = "ic_lora.safetensors", "control.mov", "mask.mov"


def control_pixels(f: int) -> np.ndarray:
    """Reference frame f: colour ramps that move with f, uint8 [H, W, 3]."""
    h, w = CONTROL_SIZE
    y, x = np.mgrid[0:h, 0:w]
    base = np.stack([128 + 110 * np.sin((x + 4 * f) / 5.0), 128 + 100 * np.cos((y - 3 * f) / 6.0),
                     (7 * x + 5 * y + 20 * f) % 256], axis=-1)
    return np.clip(base, 0, 255).round().astype(np.uint8)


def mask_pixels(f: int) -> np.ndarray:
    """Mask frame f: a grey level that differs by region and frame, the channels unequal so the grey mean matters."""
    h, w = MASK_SIZE
    y, x = np.mgrid[0:h, 0:w]
    grey = np.where(y < h // 2, 40 + 20 * f, 230 - 15 * f) + np.where(x < w // 3, 0, 17)
    rgb = np.stack([grey, grey + 9 * (f % 3), grey - 6], axis=-1)
    return np.clip(rgb, 0, 255).astype(np.uint8)


def write_mov(path: Path, frames: list[np.ndarray], fps: float) -> None:
    """Lossless RGB frames (PNG in MOV: every FFmpeg decodes these exact bits)."""
    import av

    with av.open(str(path), "w", format="mov") as c:
        v = c.add_stream("png", rate=int(fps))
        v.height, v.width, v.pix_fmt = frames[0].shape[0], frames[0].shape[1], "rgb24"
        for frame in frames:
            for p in v.encode(av.VideoFrame.from_ndarray(frame, format="rgb24")):
                c.mux(p)
        for p in v.encode():
            c.mux(p)


def iclora_case(case: str = "ic_lora", optional_inputs: bool = True, video_strength: float = VIDEO_STRENGTH,
                attention_strength: float = ATTENTION_STRENGTH) -> GoldenCase:
    """The ic_lora case, or (not optional_inputs) the same run without the mask video and the images."""
    with_mask = with_images = optional_inputs
    import ltx_pipelines.ic_lora as ic
    from ltx_core.components.diffusion_steps import EulerDiffusionStep
    from ltx_core.components.noisers import GaussianNoiser
    from ltx_core.loader import LTXV_LORA_COMFY_RENAMING_MAP, LoraPathStrengthAndSDOps
    from ltx_core.model.transformer import LTXModelConfigurator
    from ltx_core.model.upsampler import upsample_video
    from ltx_core.model.video_vae import VAE_ENCODER_COMFY_KEYS_FILTER, VideoEncoderConfigurator
    from ltx_pipelines.utils.args import ImageConditioningInput
    from ltx_pipelines.utils.constants import DISTILLED_SIGMA_VALUES, STAGE_2_DISTILLED_SIGMA_VALUES
    from ltx_pipelines.utils.helpers import combined_image_conditionings, simple_denoising_func
    from make_lora_goldens import make_lora
    from make_vae_goldens import STATS as VAE_STATS
    from PIL import Image

    config, up_config = component_configs(decode=False, upsample=True)
    weights, up_weights = build_weights(config, False, up_config)  # the two_stage case's tensors
    config["vae"]["encoder_blocks"] = I2V_ENCODER_BLOCKS
    _, enc_weights = roundtrip(config, VideoEncoderConfigurator, VAE_ENCODER_COMFY_KEYS_FILTER, vae_key("encoder"),
                               7100, rules=[stats_rule], seeded_buffers=VAE_STATS)  # the keyframe case's encoder
    # One bf16 checkpoint, as a real one: every tensor of the shared files rounded, as the engine's Bf16Checkpoint.
    bf16 = lambda d: {k: v.to(torch.bfloat16) if v.dtype == torch.float32 else v for k, v in d.items()}  # noqa: E731
    checkpoint, up_checkpoint = bf16({**weights, **enc_weights}), bf16(up_weights)
    dit = LTXModelConfigurator.from_config(config).to_empty(device="cpu")
    lora = make_lora(dit, seed=7400)  # dyadic bf16 values: the fused weights are exact in any order
    ctx = contexts(8500)
    rec = Recorder()
    draws: list = []
    inputs: dict = {}
    image_specs = I2V_IMAGES if with_images else []
    sources = [source_image(im["size"], im["seed"]) for im in image_specs]
    with tempfile.TemporaryDirectory() as tmp, torch.no_grad(), record_randn(draws):
        tmp = Path(tmp)
        lora_path, control_path, mask_path = tmp / LORA_FILE, tmp / CONTROL_FILE, tmp / MASK_FILE
        write_safetensors(lora_path, lora, {"reference_downscale_factor": str(DOWNSCALE)})
        write_mov(control_path, [control_pixels(f) for f in range(CONTROL_FRAMES)], 24)
        write_mov(mask_path, [mask_pixels(f) for f in range(MASK_FRAMES)], 24)
        files = {name: (tmp / name).read_bytes()
                 for name in (LORA_FILE, CONTROL_FILE) + ((MASK_FILE,) if with_mask else ())}
        ledger = Ledger(tmp, config, checkpoint, up_config, up_checkpoint)
        images = []
        for i, im in enumerate(image_specs):
            path = tmp / f"image{i}.png"
            Image.fromarray(sources[i]).save(path)
            images.append(ImageConditioningInput(str(path), im["frame"], im["strength"]))

        # ICLoraPipeline.__init__ minus the ledgers: the factor read from the LoRA's metadata.
        pipeline = ic.ICLoraPipeline.__new__(ic.ICLoraPipeline)
        pipeline.dtype, pipeline.device = reference_dtype(), torch.device("cpu")
        pipeline.reference_downscale_factor = ic._read_lora_reference_downscale_factor(str(lora_path))
        if pipeline.reference_downscale_factor != DOWNSCALE:
            raise RuntimeError(f"read reference_downscale_factor {pipeline.reference_downscale_factor}")
        stage_1_ledger = copy.copy(ledger)
        stage_1_ledger.ledger = ledger.ledger.with_additional_loras(
            (LoraPathStrengthAndSDOps(str(lora_path), 1.0, LTXV_LORA_COMFY_RENAMING_MAP),))
        encoder = ledger.get("video_encoder").to(reference_dtype())

        # ic_lora.py main: the mask video at the stage-1 size (bf16 there whatever the pipeline's dtype).
        mask = None
        if with_mask:
            mask = ic._load_mask_video(str(mask_path), HEIGHT // 2, WIDTH // 2, NUM_FRAMES)
            rec.add("mask.pixels", mask)
        downsample = ic.ICLoraPipeline._downsample_mask_to_latent

        def record_mask(mask, target_latent_shape):
            out = downsample(mask, target_latent_shape)
            rec.add("mask.latent", out)
            return out

        seen = []
        hook = encoder.register_forward_hook(lambda _m, args, out: seen.append((args[0].clone(), out.clone())))
        pipeline._downsample_mask_to_latent = record_mask
        stage_1_items = pipeline._create_conditionings(
            images=images, video_conditioning=[(str(control_path), video_strength)], height=HEIGHT // 2,
            width=WIDTH // 2, num_frames=NUM_FRAMES, video_encoder=encoder,
            conditioning_attention_strength=attention_strength, conditioning_attention_mask=mask)
        hook.remove()
        names = [f"image.{i}" for i in range(len(images))] + ["reference.0"]
        for name, (pixels, latent) in zip(names, seen, strict=True):
            size = f"{pixels.shape[3]}x{pixels.shape[4]}"
            inputs[f"{name}.pixels.{size}"] = pixels
            rec.add(f"{name}.latent.{size}", latent)

        generator = torch.Generator(device="cpu").manual_seed(SEED)
        noiser = GaussianNoiser(generator=generator)
        video_ctx, audio_ctx = to_reference(ctx["context.video.positive"]), to_reference(ctx["context.audio.positive"])
        # With a float32 ledger apply_loras returns the fused Linears in float32 and leaves the untouched tensors in
        # the file's bf16: widened here as a LoRA-free build converts them.
        transformer = stage_1_ledger.get("transformer").to(reference_dtype())
        sigmas = torch.Tensor(DISTILLED_SIGMA_VALUES)
        rec.add("stage1.sigmas", sigmas)
        steps_rec = StepRecorder(rec, "stage1.", transformer, ["cond"])
        video_state, audio_state = denoise_audio_video_tiny(
            pixel_shape(HEIGHT // 2, WIDTH // 2), noiser, sigmas, EulerDiffusionStep(),
            simple_denoising_func(video_context=video_ctx, audio_context=audio_ctx, transformer=transformer),
            pipeline_components(), steps_rec, conditionings=stage_1_items)
        steps_rec.close()
        rec.add("stage1.latents.video.final", video_state.latent)
        rec.add("stage1.latents.audio.final", audio_state.latent)
        upscaled = upsample_video(latent=video_state.latent[:1], video_encoder=encoder,
                                  upsampler=ledger.get("spatial_upsampler").to(reference_dtype()))
        rec.add("upsampled.video", upscaled)
        transformer = ledger.get("transformer").to(reference_dtype())  # the stage-2 ledger: loras=[]
        sigmas = torch.Tensor(STAGE_2_DISTILLED_SIGMA_VALUES)
        rec.add("stage2.sigmas", sigmas)
        seen.clear()
        hook = encoder.register_forward_hook(lambda _m, args, out: seen.append((args[0].clone(), out.clone())))
        stage_2_items = combined_image_conditionings(images=images, height=HEIGHT, width=WIDTH, video_encoder=encoder,
                                                     dtype=reference_dtype(), device=torch.device("cpu"))
        hook.remove()
        for i, (pixels, latent) in enumerate(seen):
            inputs[f"image.{i}.pixels.{HEIGHT}x{WIDTH}"] = pixels
            rec.add(f"image.{i}.latent.{HEIGHT}x{WIDTH}", latent)
        steps_rec = StepRecorder(rec, "stage2.", transformer, ["cond"])
        video_state, audio_state = denoise_audio_video_tiny(
            pixel_shape(HEIGHT, WIDTH), noiser, sigmas, EulerDiffusionStep(),
            simple_denoising_func(video_context=video_ctx, audio_context=audio_ctx, transformer=transformer),
            pipeline_components(), steps_rec, noise_scale=sigmas[0], initial_video_latent=upscaled,
            initial_audio_latent=audio_state.latent, conditionings=stage_2_items)
        steps_rec.close()

    lat = lambda h, w: (h // 64) * (w // 64)  # noqa: E731  latent pixels per frame at a stage's output size
    keyframes = sum(1 for im in image_specs if im["frame"] != 0)  # frame 0 replaces latent, the others add tokens
    n1, k1 = 2 * lat(HEIGHT, WIDTH), keyframes * lat(HEIGHT, WIDTH)
    r1 = 2 * lat(HEIGHT // DOWNSCALE, WIDTH // DOWNSCALE)
    n_audio = audio_state.latent.shape[2]
    noise, described = noise_inputs(draws, [
        ("stage 1 video initial noise (generated + keyframe + reference tokens)" if keyframes else
         "stage 1 video initial noise (generated + reference tokens)", (1, n1 + k1 + r1, VIDEO_CHANNELS)),
        ("stage 1 audio initial noise", (1, n_audio, AUDIO_TOKEN_WIDTH)),
        ("stage 2 video noise (upsampled latent + keyframe tokens)" if keyframes else
         "stage 2 video noise (upsampled latent)", (1, 4 * (n1 + k1), VIDEO_CHANNELS)),
        ("stage 2 audio noise", (1, n_audio, AUDIO_TOKEN_WIDTH)),
    ])
    params = {
        **common_params(up_config),
        "pipeline": "ICLoraPipeline (ltx-pipelines 1.0.0): _create_conditionings, the mask helpers and the "
        "metadata reader called as __call__ and main do; the ledgers' models from one bf16 checkpoint",
        "height": HEIGHT, "width": WIDTH, "stage_1_height": HEIGHT // 2, "stage_1_width": WIDTH // 2,
        "stage_1_sigmas": list(DISTILLED_SIGMA_VALUES), "stage_2_sigmas": list(STAGE_2_DISTILLED_SIGMA_VALUES),
        "shared_weights": SHARED,
        "weights_layout": "no weights of its own: the DiT, VAE statistics and upsampler are ../two_stage/weights."
        "safetensors, the video encoder ../keyframe_interpolation/weights.safetensors, every float32 tensor "
        "rounded to bf16 (the checkpoint the reference loads); the ledger runs them widened to its dtype",
        "ic_lora": {"file": LORA_FILE, "strength": 1.0, "reference_downscale_factor": DOWNSCALE,
                    "layout": "official naming, bf16, rank 2 on every DiT Linear, dyadic values; metadata "
                    "reference_downscale_factor; fused into stage 1 only (the stage-2 ledger has loras=[])"},
        "reference_video": {"file": CONTROL_FILE, "strength": video_strength, "frames_in_file": CONTROL_FRAMES,
                            "source_size": list(CONTROL_SIZE), "read_at": [HEIGHT // 2 // DOWNSCALE,
                                                                           WIDTH // 2 // DOWNSCALE]},
        **({"attention_mask_video": {"file": MASK_FILE, "strength": attention_strength,
                                     "frames_in_file": MASK_FRAMES, "source_size": list(MASK_SIZE),
                                     "read_at": [HEIGHT // 2, WIDTH // 2]}} if with_mask else
           {"conditioning_attention_strength": attention_strength}),
        "images": [{"frame": im["frame"], "strength": im["strength"], "crf": 33, "source_size": list(im["size"])}
                   for im in image_specs],
        "recorded": "NAME.pixels.HxW = the video encoder's input (images after the libx264 round trip; the "
        "reference video as load_video_conditioning gives it), NAME.latent.HxW its output; mask.pixels = "
        "_load_mask_video's output (bf16), mask.latent = _downsample_mask_to_latent's; stage1.attention_mask.video "
        "= the state's [B, T, T] mask in [0, 1]",
        "video_latent_shape": list(video_state.latent.shape),
        "audio_latent_shape": list(audio_state.latent.shape),
        "guidance": "none (simple_denoising_func in both stages)",
        "noise_draws": described,
    }
    description = ("Tiny LTX-2.3 IC-LoRA run (ICLoraPipeline): stage 1 at 128x64 on the distilled sigmas with an "
                   "IC-LoRA (reference_downscale_factor 2) fused, two images, a 12-frame control video read at 64x32 "
                   "as reference tokens (strength 0.75) under a mask video x attention strength 0.5; x2 upsample; "
                   "stage 2 at 256x128 on the bare checkpoint; final latents")
    if not optional_inputs:
        description = (f"The ic_lora run without a mask video or images: the reference tokens at strength "
                       f"{video_strength}, weighed by the scalar attention strength {attention_strength}; final latents")
    return GoldenCase(
        group="pipeline", case=case, component="pipeline_iclora", description=description,
        generator=GENERATOR, weights={}, weights_metadata={"config": canonical_json(config)},
        inputs={**noise, **ctx, **inputs}, outputs={"latents.video.final": video_state.latent,
                                                    "latents.audio.final": audio_state.latent},
        intermediates=rec.values, params=params, tolerance=PIPELINE_TOLERANCE, extra_files=files,
    )


CASES = {"ic_lora": {},
         "ic_lora_no_mask": {"optional_inputs": False, "video_strength": 1.0, "attention_strength": 0.6}}


def generate(out_root: Path, only_cases: set[str] | None, groups: set[str]) -> list[Path]:
    if "pipeline" not in groups:
        return []
    written = []
    for case, options in CASES.items():
        if only_cases is None or case in only_cases:
            torch.manual_seed(0)
            written.append(with_measured_production(lambda: iclora_case(case, **options)).write(out_root))
    return written

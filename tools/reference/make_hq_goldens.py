"""HQ golden case (group `pipeline`, component `pipeline_hq`): the flow of TI2VidTwoStagesHQPipeline.__call__
(ltx_pipelines/ti2vid_two_stages_hq.py, 1.0.0) on the tiny configs, text only.

  two_stage_hq  the distilled LoRA fused at 0.25 into stage 1's transformer and at 0.5 into stage 2's (the
                hq_2_stage_arg_parser defaults), both stages on res2s_audio_video_denoising_loop
                (ltx_pipelines/utils/samplers.py): stage 1 at 32x32 on LTX2Scheduler(3 steps) shifted by the stage's
                latent token count, with LTX_2_3_HQ_PARAMS' guiders (CFG + modality, rescale, no STG) through
                multi_modal_guider_denoising_func; x2 upsample; stage 2 at 64x64 on the distilled sigmas with one
                positive pass per evaluation. Recorded per step: the x0 of every DiT pass at the step and at its
                substep, the substep latents, the latents after the step; the final latents.

The SDE noise the loop injects comes from its own generators (seeds -1 and 9999) in float64: not recorded, the
engine draws it itself (golden_case.record_randn). The loop runs with model_dtype = the reference dtype (float32
here; the pipeline leaves the loop's bfloat16 default), as every golden keeps float32 latents.
"""

from __future__ import annotations

import copy
import sys
import tempfile
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))

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
    DISTILLED_LORA_FILE,
    SEED,
    Ledger,
    StepRecorder,
    build_weights,
    common_params,
    component_configs,
    contexts,
    denoise_audio_video_tiny,
    pipeline_components,
    pixel_shape,
    statistics_encoder,
    two_stage_noise_inputs,
)
from make_pipeline_goldens import TOLERANCE as PIPELINE_TOLERANCE  # noqa: E402

GROUPS = ("pipeline",)
GENERATOR = "tools/reference/make_hq_goldens.py"
HEIGHT, WIDTH, FPS, STEPS = 64, 64, 64.0, 3
LORA_CASE = "two_stage_distilled_lora"  # the case whose distilled_lora.safetensors this one reads
STAGE_1_STRENGTH, STAGE_2_STRENGTH = 0.25, 0.5  # hq_2_stage_arg_parser's defaults (dyadic: exact fusion products)
GUIDER_KEYS = ("cfg_scale", "stg_scale", "stg_blocks", "rescale_scale", "modality_scale", "skip_step")


class Res2sStepRecorder(StepRecorder):
    """StepRecorder for res2s_audio_video_denoising_loop, which calls the denoise function twice per step (at the
    step's sigma with its index, at the substep sigma with index 0) and once more at the end: the names of
    stages/res2s_loop.h (x0.<stream>.stepNN.<pass>, x0.<stream>.mid.stepNN.<pass>, latents.<stream>.mid.stepNN
    entering the substep evaluation, latents.<stream>.stepNN after step NN)."""

    def __init__(self, *args):
        super().__init__(*args)
        self.evaluations = 0

    def wrap(self, denoise_fn):
        def recording_denoise_fn(video_state, audio_state, sigmas, step_index):
            k, at_substep = divmod(self.evaluations, 2)
            self.evaluations += 1
            if at_substep:
                label = f"mid.step{k:02d}"
                self.record_latents(video_state, audio_state, label)
            else:
                if step_index != k:
                    raise RuntimeError(f"evaluation {self.evaluations - 1}: step index {step_index}, expected {k}")
                label = f"step{k:02d}"
                if k > 0:
                    self.record_latents(video_state, audio_state, f"step{k - 1:02d}")
            self.calls.clear()
            video_x0, audio_x0 = denoise_fn(video_state, audio_state, sigmas, step_index)
            if len(self.calls) != len(self.pass_names):
                raise RuntimeError(f"{label}: {len(self.calls)} DiT passes, expected {self.pass_names}")
            for name, (v, a) in zip(self.pass_names, self.calls, strict=True):
                self.rec.add(f"{self.prefix}x0.video.{label}.{name}", v)
                self.rec.add(f"{self.prefix}x0.audio.{label}.{name}", a)
            self.rec.add(f"{self.prefix}x0.video.{label}.guided", video_x0)
            self.rec.add(f"{self.prefix}x0.audio.{label}.guided", audio_x0)
            return video_x0, audio_x0

        return recording_denoise_fn


def res2s_loop(sigmas, video_state, audio_state, stepper, denoise_fn):
    """The HQ pipeline's denoising_loop_fn (its defaults: noise_seed -1, bongmath, legacy mode), latents kept in
    the reference dtype."""
    from ltx_pipelines.utils.samplers import res2s_audio_video_denoising_loop

    return res2s_audio_video_denoising_loop(sigmas=sigmas, video_state=video_state, audio_state=audio_state,
                                            stepper=stepper, denoise_fn=denoise_fn, model_dtype=reference_dtype())


def pass_names(video_guider, audio_guider) -> list[str]:
    """The DiT passes multi_modal_guider_denoising_func runs, in its order."""
    names = ["cond"]
    for name, needed in (("uncond", "do_unconditional_generation"), ("perturbed", "do_perturbed_generation"),
                         ("isolated", "do_isolated_modality_generation")):
        if getattr(video_guider, needed)() or getattr(audio_guider, needed)():
            names.append(name)
    return names


def hq_case() -> GoldenCase:
    from ltx_core.components.diffusion_steps import Res2sDiffusionStep
    from ltx_core.components.guiders import MultiModalGuider
    from ltx_core.components.noisers import GaussianNoiser
    from ltx_core.components.schedulers import LTX2Scheduler
    from ltx_core.loader import LTXV_LORA_COMFY_RENAMING_MAP, LoraPathStrengthAndSDOps
    from ltx_core.model.transformer import LTXModelConfigurator
    from ltx_core.model.upsampler import upsample_video
    from ltx_core.types import VideoLatentShape
    from ltx_pipelines.utils.constants import LTX_2_3_HQ_PARAMS, STAGE_2_DISTILLED_SIGMA_VALUES
    from ltx_pipelines.utils.helpers import multi_modal_guider_denoising_func, simple_denoising_func
    from make_lora_goldens import make_lora
    from safetensors.torch import load_file

    config, up_config = component_configs(decode=True, upsample=True)
    weights, up_weights = build_weights(config, True, up_config)  # the two_stage_distilled_lora case's tensors
    lora = make_lora(LTXModelConfigurator.from_config(config).to_empty(device="cpu"))
    committed = Path(__file__).resolve().parents[2] / "tests/golden/pipeline" / LORA_CASE / DISTILLED_LORA_FILE
    if committed.exists():
        stored = load_file(str(committed))
        if sorted(stored) != sorted(lora) or any(not torch.equal(stored[k], lora[k]) for k in lora):
            raise RuntimeError(f"the distilled LoRA differs from {committed}")
    ctx = contexts(8500)
    video_params, audio_params = LTX_2_3_HQ_PARAMS.video_guider_params, LTX_2_3_HQ_PARAMS.audio_guider_params
    rec = Recorder()
    draws: list = []
    checkpoint = {k: v.to(torch.bfloat16) for k, v in weights.items()}  # LoRAs fuse into bf16 weights only
    with tempfile.TemporaryDirectory() as tmp, torch.no_grad(), record_randn(draws):
        base = Ledger(Path(tmp), config, checkpoint, up_config, up_weights)
        lora_path = Path(tmp) / DISTILLED_LORA_FILE
        write_safetensors(lora_path, lora, {})

        def with_lora(strength: float) -> Ledger:
            ledger = copy.copy(base)
            ledger.ledger = base.ledger.with_additional_loras(
                (LoraPathStrengthAndSDOps(str(lora_path), strength, LTXV_LORA_COMFY_RENAMING_MAP),))
            return ledger

        stage_1_ledger, stage_2_ledger = with_lora(STAGE_1_STRENGTH), with_lora(STAGE_2_STRENGTH)
        generator = torch.Generator(device="cpu").manual_seed(SEED)
        noiser = GaussianNoiser(generator=generator)
        stepper = Res2sDiffusionStep()

        # Stage 1: half size, the schedule shifted by the stage's token count (an empty latent of its shape).
        stage_1_shape = pixel_shape(HEIGHT // 2, WIDTH // 2, FPS)
        empty_latent = torch.empty(VideoLatentShape.from_pixel_shape(stage_1_shape).to_torch_shape())
        sigmas = LTX2Scheduler().execute(latent=empty_latent, steps=STEPS).to(dtype=torch.float32)
        rec.add("stage1.sigmas", sigmas)
        # with a float32 ledger the Linears the LoRA leaves alone stay in the file's bf16: widened as a build does
        transformer = stage_1_ledger.get("transformer").to(reference_dtype())
        c = to_reference(ctx)
        video_guider = MultiModalGuider(params=video_params, negative_context=c["context.video.negative"])
        audio_guider = MultiModalGuider(params=audio_params, negative_context=c["context.audio.negative"])
        steps_rec = Res2sStepRecorder(rec, "stage1.", transformer, pass_names(video_guider, audio_guider))
        video_state, audio_state = denoise_audio_video_tiny(
            stage_1_shape, noiser, sigmas, stepper,
            multi_modal_guider_denoising_func(video_guider=video_guider, audio_guider=audio_guider,
                                              v_context=c["context.video.positive"],
                                              a_context=c["context.audio.positive"], transformer=transformer),
            pipeline_components(), steps_rec, loop=res2s_loop)
        steps_rec.close()
        rec.add("stage1.latents.video.final", video_state.latent)
        rec.add("stage1.latents.audio.final", audio_state.latent)

        upscaled = upsample_video(latent=video_state.latent[:1], video_encoder=statistics_encoder(config,
                                                                                                  weights=checkpoint),
                                  upsampler=stage_2_ledger.get("spatial_upsampler"))
        rec.add("upsampled.video", upscaled)

        # Stage 2: full size on the distilled sigmas, noise re-injected at sigma 0, one positive pass.
        transformer = stage_2_ledger.get("transformer").to(reference_dtype())
        sigmas = torch.tensor(STAGE_2_DISTILLED_SIGMA_VALUES)
        rec.add("stage2.sigmas", sigmas)
        steps_rec = Res2sStepRecorder(rec, "stage2.", transformer, ["cond"])
        video_state, audio_state = denoise_audio_video_tiny(
            pixel_shape(HEIGHT, WIDTH, FPS), noiser, sigmas, stepper,
            simple_denoising_func(video_context=c["context.video.positive"],
                                  audio_context=c["context.audio.positive"], transformer=transformer),
            pipeline_components(), steps_rec, noise_scale=sigmas[0], initial_video_latent=upscaled,
            initial_audio_latent=audio_state.latent, loop=res2s_loop)
        steps_rec.close()
    noise, described = two_stage_noise_inputs(draws, HEIGHT, WIDTH, audio_state.latent.shape[2])
    guidance = {"video": {k: getattr(video_params, k) for k in GUIDER_KEYS},
                "audio": {k: getattr(audio_params, k) for k in GUIDER_KEYS}}
    params = {
        **common_params(up_config),
        "fps": FPS,
        "pipeline": "TI2VidTwoStagesHQPipeline (ltx-pipelines 1.0.0), text only, distilled_lora=[(distilled_lora_file, "
        "stage strengths)], tiling off, enhance_prompt off",
        "shared_weights": "t2v_audio_one_stage",
        "upsampler_weights": "two_stage",
        "distilled_lora_file": f"../{LORA_CASE}/{DISTILLED_LORA_FILE}",
        "distilled_lora_strength_stage_1": STAGE_1_STRENGTH,
        "distilled_lora_strength_stage_2": STAGE_2_STRENGTH,
        "dtype": "the checkpoint is bfloat16 as in two_stage_distilled_lora (LoRAs fuse into bfloat16 weights only); "
        "ledger, latents and initial noise float32; the res_2s arithmetic between DiT calls in float64 as the "
        "reference does it, the latents stored in float32 after each update (model_dtype)",
        "height": HEIGHT, "width": WIDTH, "stage_1_height": HEIGHT // 2, "stage_1_width": WIDTH // 2,
        "num_inference_steps": STEPS,
        "stage_1_schedule": "LTX2Scheduler().execute(latent=empty stage-1 latent, steps): shifted by its F*H*W "
        "tokens, not the default 4096",
        "stage_2_sigmas": list(STAGE_2_DISTILLED_SIGMA_VALUES),
        "sampler": "res2s_audio_video_denoising_loop with Res2sDiffusionStep: noise_seed -1 (substeps 9999), c2 0.5, "
        "bongmath (100 iterations when h < 0.5 and sigma > 0.03), legacy mode (post_process_latent after each noise "
        "injection); a final sigma of 0 becomes 0.0011 followed by one more x0",
        "sde_noise": "float64 randn from the loop's two generators, standardized over the tensor then per item "
        "(_get_new_noise); not recorded",
        "video_latent_shape": list(video_state.latent.shape),
        "audio_latent_shape": list(audio_state.latent.shape),
        "guidance": {"stage_1": guidance, "stage_2": "none (simple_denoising_func)"},
        "guided_call": "multi_modal_guider_denoising_func(MultiModalGuider(params, negative context) per stream): "
        "cond, uncond and isolated passes (LTX_2_3_HQ_PARAMS has no STG)",
        "noise_draws": described,
    }
    return GoldenCase(
        group="pipeline", case="two_stage_hq", component="pipeline_hq",
        description="Tiny LTX-2.3 HQ two-stage run (TI2VidTwoStagesHQPipeline): res_2s sampler in both stages, the "
        f"distilled LoRA at {STAGE_1_STRENGTH} in stage 1 and {STAGE_2_STRENGTH} in stage 2, stage 1 at 32x32 with "
        "3 guided steps (HQ guiders), x2 upsample, stage 2 at 64x64 on the distilled sigmas; every evaluation of "
        "every step and the final latents",
        generator=GENERATOR, weights={}, weights_metadata={"config": canonical_json(config)},
        inputs={**noise, **ctx}, outputs={"latents.video.final": video_state.latent,
                                          "latents.audio.final": audio_state.latent},
        intermediates=rec.values, params=params, tolerance=PIPELINE_TOLERANCE,
    )


def generate(out_root: Path, only_cases: set[str] | None, groups: set[str]) -> list[Path]:
    if "pipeline" not in groups or (only_cases is not None and "two_stage_hq" not in only_cases):
        return []
    torch.manual_seed(0)
    return [with_measured_production(hq_case).write(out_root)]

"""The sampling arithmetic between model calls (group `schedule`, component `sampling_steps`), exact.

  sampling_steps  made with ltx-core's own functions on seeded tensors [1, 24, 8] (token-major [B, T, C]):
                  - `noised.<dtype>`: GaussianNoiser(generator)(state, noise_scale) with a fractional denoise mask
                    [1, 24, 1] and noise_scale 0.85: noise · (mask · scale) + latent · (1 - mask · scale), which torch
                    promotes to float32 (the mask is float32) and rounds once to the latent's dtype. The noise is the
                    generator's draw, recorded as input `noise.<dtype>`.
                  - `euler.f32`: EulerDiffusionStep().step(sample, denoised, sigmas, i) for each sigma pair in
                    params.sigmas: velocity (sample - denoised) / float(sigma) in float32, then sample + velocity ·
                    (sigma_next - sigma) in float32 (dt a float32 0-d tensor). Not for bf16: the reference rounds
                    the velocity to the bf16 state's dtype before the step, a rounding the engine's float32 states
                    do not have (a deliberate departure, docs/fidelity.md).
                  - `post_processed.<dtype>`: ltx_pipelines.utils.helpers.post_process_latent(denoised, mask, clean).
                  <dtype> is f32 (validation) or bf16 (the official pipelines' latent dtype; values stored as f32).
                  The engine keeps its latent states in float32 in both precisions: its runner rounds the float32
                  result to bf16 where the reference's state is bf16, so these cases pin the arithmetic (float32,
                  one rounding) that bf16 pipelines get wrong when they compute the lerp or the step in bf16.
No weights.
"""

from __future__ import annotations

from pathlib import Path

import torch
from golden_case import GoldenCase, seeded_randn, with_measured_production

GROUPS = ("schedule",)
GENERATOR = "tools/reference/make_sampling_goldens.py"
EXACT = {"validation": {"atol": 0.0, "rtol": 0.0}, "production": {"atol": 0.0, "rtol": 0.0}}
SHAPE = (1, 24, 8)
SIGMAS = [1.0, 0.9937, 0.72111, 0.4216, 0.0625, 0.0]
NOISE_SCALE = 0.85


def sampling_case() -> GoldenCase:
    from ltx_core.components.diffusion_steps import EulerDiffusionStep
    from ltx_core.components.noisers import GaussianNoiser
    from ltx_core.types import LatentState
    from ltx_pipelines.utils.helpers import post_process_latent

    mask = torch.rand(SHAPE[0], SHAPE[1], 1, generator=torch.Generator().manual_seed(11))
    mask[0, :4] = 0.0  # conditioned tokens
    mask[0, 4:8] = 1.0
    sigmas = torch.tensor(SIGMAS, dtype=torch.float32)
    inputs = {"denoise_mask": mask, "sigmas": sigmas}
    outputs = {}
    for name, dtype in (("f32", torch.float32), ("bf16", torch.bfloat16)):
        latent = seeded_randn(SHAPE, 12).to(dtype)
        clean = seeded_randn(SHAPE, 13).to(dtype)
        denoised = seeded_randn(SHAPE, 14).to(dtype)
        noise = torch.randn(*SHAPE, dtype=dtype, generator=torch.Generator().manual_seed(15))
        state = LatentState(latent=latent, denoise_mask=mask, positions=torch.zeros(1, 3, SHAPE[1], 2),
                            clean_latent=clean)
        noised = GaussianNoiser(torch.Generator().manual_seed(15))(state, NOISE_SCALE).latent
        inputs.update({f"latent.{name}": latent, f"clean.{name}": clean, f"denoised.{name}": denoised,
                       f"noise.{name}": noise})
        outputs[f"noised.{name}"] = noised
        if dtype == torch.float32:
            step = EulerDiffusionStep()
            outputs["euler.f32"] = torch.stack([step.step(latent, denoised, sigmas, i) for i in range(len(SIGMAS) - 1)])
        outputs[f"post_processed.{name}"] = post_process_latent(denoised, mask, clean)
    return GoldenCase(
        group="schedule", case="sampling_steps", component="sampling_steps",
        description="GaussianNoiser, EulerDiffusionStep and post_process_latent on float32 and bfloat16 latents "
        "(the arithmetic between model calls), exact",
        generator=GENERATOR, weights={}, weights_metadata={}, inputs=inputs, outputs=outputs,
        params={"noise_scale": NOISE_SCALE, "sigmas": SIGMAS, "dtypes": ["f32", "bf16"]}, tolerance=EXACT,
    )


def generate(out_root: Path, only_cases: set[str] | None, groups: set[str]) -> list[Path]:
    if "schedule" not in groups or (only_cases is not None and "sampling_steps" not in only_cases):
        return []
    # No module: the bf16 measuring run is the same run, so production stays exact.
    return [with_measured_production(sampling_case).write(out_root)]

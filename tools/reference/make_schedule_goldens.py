"""Sigma schedule golden cases (group `schedule`).

  ltx2_scheduler    `ltx_core.components.schedulers.LTX2Scheduler().execute(steps, latent, ...)`: linspace(1, 0)
                    in fp32, token-count-dependent shift, stretch to the terminal 0.1, final 0. The standard
                    pipelines pass no latent (4096 tokens); the HQ pipeline passes the stage-1 latent
                    [1,128,F',H',W'] (tokens = F'·H'·W', shift not clamped). Each output
                    `sigmas.<call>` is one call whose arguments are params.calls[<call>] (steps, latent_shape or
                    null, tokens, stretch, terminal, max_shift, base_shift); sigmas has steps+1 fp32 values.
  distilled_sigmas  the fixed schedules of `ltx_pipelines.utils.constants` as the pipelines build them
                    (torch.Tensor(list) -> fp32): `sigmas.stage_1` (DISTILLED_SIGMA_VALUES, 8 steps) and
                    `sigmas.stage_2` (STAGE_2_DISTILLED_SIGMA_VALUES, 3 steps).
No weights (the file holds no tensors) and no inputs.
"""

from __future__ import annotations

from pathlib import Path

import torch
from golden_case import GoldenCase, with_measured_production
from ltx_core.components.schedulers import LTX2Scheduler
from ltx_pipelines.utils.constants import DISTILLED_SIGMA_VALUES, STAGE_2_DISTILLED_SIGMA_VALUES

GROUPS = ("schedule",)
GENERATOR = "tools/reference/make_schedule_goldens.py"
EXACT = {"validation": {"atol": 1e-6, "rtol": 1e-6}, "production": {"atol": 1e-6, "rtol": 1e-6}}

# Latent shapes [B,128,F',H',W'] the HQ pipeline would pass (pixel size / 32, frames (F-1)/8+1), plus small ones.
LATENT_SHAPES = {
    "tokens192": (1, 128, 3, 8, 8),  # tiny: shift far below base_shift
    "tokens1024": (1, 128, 1, 32, 32),  # exactly the base anchor
    "tokens8160": (1, 128, 16, 17, 30),  # HQ stage 1: 121 frames at 544x960
    "tokens32640": (1, 128, 16, 34, 60),  # 121 frames at 1088x1920: shift above max_shift
}
STEPS = (1, 2, 3, 8, 15, 20, 30, 40)


def scheduler_case() -> GoldenCase:
    outputs: dict[str, torch.Tensor] = {}
    calls: dict[str, dict] = {}
    sched = LTX2Scheduler()

    def call(name: str, steps: int, shape, **kw) -> None:
        latent = torch.empty(shape) if shape is not None else None
        outputs[f"sigmas.{name}"] = sched.execute(steps=steps, latent=latent, **kw)
        tokens = int(torch.tensor(shape[2:]).prod()) if shape is not None else 4096
        calls[name] = {
            "steps": steps, "latent_shape": list(shape) if shape is not None else None, "tokens": tokens,
            "stretch": kw.get("stretch", True), "terminal": kw.get("terminal", 0.1),
            "max_shift": kw.get("max_shift", 2.05), "base_shift": kw.get("base_shift", 0.95),
        }

    for steps in STEPS:
        call(f"steps{steps}.default", steps, None)  # what every standard pipeline calls
    for label, shape in LATENT_SHAPES.items():
        for steps in (8, 15, 30):
            call(f"steps{steps}.{label}", steps, shape)
    call("steps30.default.nostretch", 30, None, stretch=False)
    call("steps20.default.terminal0_05", 20, None, terminal=0.05)
    return GoldenCase(
        group="schedule", case="ltx2_scheduler", component="ltx2_scheduler",
        description="LTX2Scheduler sigmas for several step and token counts (default 4096 tokens, HQ latent shapes)",
        generator=GENERATOR, weights={}, weights_metadata={}, inputs={}, outputs=outputs,
        params={"calls": calls}, tolerance=EXACT,
    )


def distilled_case() -> GoldenCase:
    return GoldenCase(
        group="schedule", case="distilled_sigmas", component="distilled_sigmas",
        description="Fixed distilled sigma schedules (stage 1: 8 steps, stage 2: 3 steps) from ltx_pipelines",
        generator=GENERATOR, weights={}, weights_metadata={}, inputs={},
        outputs={
            "sigmas.stage_1": torch.Tensor(DISTILLED_SIGMA_VALUES),
            "sigmas.stage_2": torch.Tensor(STAGE_2_DISTILLED_SIGMA_VALUES),
        },
        params={"stage_1": list(DISTILLED_SIGMA_VALUES), "stage_2": list(STAGE_2_DISTILLED_SIGMA_VALUES)},
        tolerance=EXACT,
    )


def generate(out_root: Path, only_cases: set[str] | None, groups: set[str]) -> list[Path]:
    if "schedule" not in groups:
        return []
    cases = {"ltx2_scheduler": scheduler_case, "distilled_sigmas": distilled_case}
    # No module and no dtype: the reference's bf16 run is the float32 run, so the rule leaves production = validation.
    return [with_measured_production(make).write(out_root) for name, make in cases.items()
            if only_cases is None or name in only_cases]

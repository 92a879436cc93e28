"""The reference's own bf16 error on the media golden cases (issue 6, production precision).

Every vae / audio / upsampler case is rebuilt from its files alone as check_reload_media.py does, but in bf16, as
ltx-pipelines runs the decoders and the vocoder (ModelLedger dtype=torch.bfloat16): weights and inputs in bf16.
Its outputs are compared with the committed f32 expected values; per output it prints max |bf16 - f32|, mean abs,
and the worst element in units of the case's production tolerance (|a-e| / (atol + rtol·|e|), 1.0 = at the bound).
An engine in production precision whose error is of the same size as this is as exact as the reference in bf16.

    .venv/bin/python tools/reference/measure_bf16_error.py [golden_root] [case ...]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import torch

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import check_reload_media  # noqa: E402
from golden_case import read_safetensors  # noqa: E402


def main() -> None:
    root = Path(sys.argv[1]) if len(sys.argv) > 1 else HERE.parent.parent / "tests" / "golden"
    only = set(sys.argv[2:])
    original_build, original_read = check_reload_media.build, check_reload_media.read_safetensors

    def build_bf16(case_dir, configurator, sd_ops):
        return original_build(case_dir, configurator, sd_ops).to(torch.bfloat16)

    def read_bf16(path):
        tensors, meta = original_read(path)
        if path.name == "inputs.safetensors":
            tensors = {k: v.to(torch.bfloat16) if v.is_floating_point() else v for k, v in tensors.items()}
        return tensors, meta

    check_reload_media.build = build_bf16
    check_reload_media.read_safetensors = read_bf16
    print("| case | output | max abs | mean abs | worst / production tol |")
    print("|---|---|---|---|---|")
    for group in ("vae", "audio", "upsampler"):
        for d in sorted((root / group).iterdir()):
            if only and d.name not in only:
                continue
            manifest = json.loads((d / "manifest.json").read_text())
            if manifest["component"] in ("audio_mel_frontend",):
                continue  # no weights: nothing the model dtype changes
            tol = manifest["tolerance"]["production"]
            expected = read_safetensors(d / "expected.safetensors")[0]
            got = check_reload_media.run_case(d)
            for name, value in got.items():
                e = expected[name]
                diff = (value.float() - e).abs()
                ratio = (diff / (tol["atol"] + tol["rtol"] * e.abs())).max().item()
                print(f"| {group}/{d.name} | {name} | {diff.max().item():.3e} | {diff.mean().item():.3e} | {ratio:.2f} |")


if __name__ == "__main__":
    main()

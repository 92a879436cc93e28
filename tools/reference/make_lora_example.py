"""A small LoRA for the tiny one-stage pipeline golden's DiT (tests/golden/pipeline/t2v_audio_one_stage), for the
README's `ltx generate --lora` example and the CLI tests: rank 2, official/ComfyUI naming
(`diffusion_model.<module>.lora_A.weight` / `.lora_B.weight`, what ltx_core/loader/sd_ops.py
LTXV_LORA_COMFY_RENAMING_MAP reads), on every Linear of the DiT (every 2-D `model.diffusion_model.*.weight`),
seeded per tensor name, bf16. Written by golden_case's deterministic writer so check_goldens.sh can byte-compare it.
Usage: make_lora_example.py OUT_DIR
"""

from __future__ import annotations

import sys
from pathlib import Path

import torch

from golden_case import name_seed, read_safetensors, seeded_randn, write_safetensors

REPO = Path(__file__).resolve().parents[2]
CHECKPOINT = REPO / "tests/golden/pipeline/t2v_audio_one_stage/weights.safetensors"
PREFIX = "model.diffusion_model."
RANK = 2
SEED = 7


def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    weights, _ = read_safetensors(CHECKPOINT)
    lora: dict[str, torch.Tensor] = {}
    for name, w in weights.items():
        if not name.startswith(PREFIX) or not name.endswith(".weight") or w.dim() != 2:
            continue
        module = name[len(PREFIX) : -len(".weight")]
        n_out, n_in = w.shape
        key = "diffusion_model." + module
        lora[key + ".lora_A.weight"] = seeded_randn((RANK, n_in), name_seed(SEED, key + "A"), 0.2, torch.bfloat16)
        lora[key + ".lora_B.weight"] = seeded_randn((n_out, RANK), name_seed(SEED, key + "B"), 0.2, torch.bfloat16)
    write_safetensors(out / "tiny_t2v_lora.safetensors", lora, {"rank": str(RANK), "source": "make_lora_example.py"})


if __name__ == "__main__":
    main()

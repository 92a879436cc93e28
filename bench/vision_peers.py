"""The peer's side of bench/vision.sh: transformers' Gemma 3 image path (SiglipVisionModel without its head, then
Gemma3MultiModalProjector: what Gemma3Model.get_image_features runs) built from the vision_config of a Hugging Face
Gemma 3 folder's config.json, with its default random weights (the time does not depend on the values), on one
[1, 3, S, S] image; torch threads = $THREADS, float32 or bfloat16 (--dtype), SDPA attention as ltx-core runs it.
Seconds per image, median of the repetitions after a warm-up, as a key=value line.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("folder")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--dtype", choices=("float32", "bfloat16"), default="bfloat16")
    args = ap.parse_args()

    import torch
    from transformers import Gemma3Config
    from transformers.models.gemma3.modeling_gemma3 import Gemma3MultiModalProjector
    from transformers.models.siglip.modeling_siglip import SiglipVisionModel

    torch.set_num_threads(int(os.environ.get("THREADS", os.cpu_count())))
    config = Gemma3Config(**json.loads((Path(args.folder) / "config.json").read_text()))
    config.vision_config._attn_implementation = "sdpa"
    dtype = getattr(torch, args.dtype)
    tower = SiglipVisionModel(config.vision_config).eval().to(dtype)
    projector = Gemma3MultiModalProjector(config).eval().to(dtype)
    s = config.vision_config.image_size
    pixels = torch.rand(1, 3, s, s, dtype=torch.float32) * 2 - 1
    seconds = []
    with torch.inference_mode():
        for r in range(args.reps + 1):
            t0 = time.perf_counter()
            projector(tower(pixel_values=pixels.to(dtype)).last_hidden_state)
            if r:
                seconds.append(time.perf_counter() - t0)
    print(f"seconds_per_image={statistics.median(seconds):.3f}")


if __name__ == "__main__":
    main()

"""Entry point: regenerate golden cases from the official code.

    python tools/reference/make_goldens.py [--out DIR] [--only GROUP ...] [--case NAME ...]

Generators are the modules listed in GENERATORS (tools/reference/<name>.py; add yours there). Each declares
`GROUPS` (the groups it writes, as in GENERATORS) and
`generate(out_root: Path, only_cases: set[str] | None, groups: set[str]) -> list[Path]`
(write only cases of `groups`, and only those named in `only_cases` when it is not None).
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(HERE))

from golden_case import GROUPS, setup_determinism  # noqa: E402


# Golden-case generators in the format of golden_case.py (other make_*_goldens.py scripts write other formats).
# Maps each generator module to the groups it writes.
GENERATORS = {
    "make_text_goldens": ("text",),
    "make_gemma_vision_goldens": ("text",),
    "make_dit_goldens": ("dit",),
    "make_rope_goldens": ("rope",),
    "make_lora_goldens": ("dit",),
    "make_vae_goldens": ("vae",),
    "make_audio_goldens": ("audio",),
    "make_upsampler_goldens": ("upsampler",),
    "make_schedule_goldens": ("schedule",),
    "make_sampling_goldens": ("schedule",),
    "make_pipeline_goldens": ("pipeline",),
    "make_a2v_goldens": ("pipeline",),
    "make_keyframe_goldens": ("pipeline",),
    "make_hq_goldens": ("pipeline",),
    "make_retake_goldens": ("pipeline",),
    "make_iclora_goldens": ("pipeline",),
}


def discover(wanted: set[str]) -> list:
    mods = []
    for stem, groups in GENERATORS.items():
        if not wanted & set(groups):
            continue
        path = HERE / f"{stem}.py"
        if not path.exists():
            raise SystemExit(f"generator {path.name} listed in make_goldens.py is missing")
        spec = importlib.util.spec_from_file_location(path.stem, path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        if not hasattr(mod, "GROUPS") or not hasattr(mod, "generate"):
            raise SystemExit(f"{path.name}: a generator must define GROUPS and generate(out_root, only_cases, groups)")
        mods.append(mod)
    return mods


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=REPO / "tests" / "golden")
    ap.add_argument("--only", action="append", choices=GROUPS, help="restrict to these groups")
    ap.add_argument("--case", action="append", help="restrict to these case names")
    args = ap.parse_args()
    wanted = set(args.only) if args.only else set(GROUPS)
    written = []
    for mod in discover(wanted):
        if not wanted & set(mod.GROUPS):
            continue
        setup_determinism(0)
        for p in mod.generate(args.out, set(args.case) if args.case else None, wanted):
            written.append(p)
            print(f"wrote {p.relative_to(args.out) if p.is_relative_to(args.out) else p}", flush=True)
    if not written:
        print("no cases written", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

#!/usr/bin/env python3
"""Makes the torch CPU randn goldens in tests/data/noise/ from torch itself.

Two files, one per Box-Muller maths variant of torch's vector path (numel >= 16):
  randn_avx2.txt    this torch as it runs on an x86 CPU with AVX2 (AVX-512 machines run the same AVX2 kernel)
  randn_scalar.txt  the same cases with ATEN_CPU_CAPABILITY=default (scalar libm maths); a child process makes it
and one for float64 draws, whose kernel (normal_fill<double>, libm maths in double) is the same on every CPU:
  randn_f64.txt     f64 streams, some interleaved with f32 ones (the res_2s sampler's SDE noise is drawn in f64)

Each case is one stream: a generator is seeded (or left at its default seed), then tensors are drawn in order.
Each draw records dtype, shape, a 64-bit FNV-1a hash over every element's bit pattern (int32 for f32, int16 for
bf16/f16, int64 for f64, in element order) and the first and last 16 bit patterns in hex. Hashing keeps the files small while
still checking every bit of large draws.

Format (text, one record a line):
  info <key> <value>
  case <name> <gen> <seed>        gen: manual (torch.manual_seed, default generator)
                                       object (torch.Generator().manual_seed(seed), passed as generator=)
                                       fresh  (torch.Generator() never seeded; seed column is its initial_seed)
  draw <dtype> <shape> <fnv64 hex> <count> head <hex...> tail <hex...>   shape: dims joined by 'x', 'scalar' for ()
  end

Usage: .venv/bin/python tools/reference/make_noise_goldens.py [out_dir]
"""

import os
import subprocess
import sys
from pathlib import Path

import torch

DTYPES = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16, "f64": torch.float64}
SHAPES = [(1,), (3,), (15,), (16,), (17,), (31,), (32,), (33,), (100,), (1000,), (1, 128, 3, 4, 6)]
SEEDS = [0, 42, 2**32 + 5, 123456789]
LATENT = (1, 128, 3, 4, 6)

# Streams that mix the scalar path (numel < 16, cached double normal), the vector path (chunks, tail recompute)
# and dtypes, so the C++ generator must continue the stream exactly as torch does.
SEQUENCES = {
    "scalar_chain": [("f32", (3,)), ("f32", (3,)), ("f32", (6,)), ("f32", (1,)), ("f32", (2, 2))],
    "cache_across_vector": [("f32", (3,)), ("f32", (16,)), ("f32", (1,)), ("f32", (20,)), ("f32", (5,))],
    "mixed": [("f32", (3,)), ("f32", (0,)), ("bf16", (20,)), ("f32", ()), ("f16", (33,)), ("bf16", (7,)),
              ("f32", (17,)), ("bf16", LATENT), ("f32", (1,)), ("f16", (5,)), ("f32", LATENT), ("bf16", (16,)),
              ("bf16", (1,)), ("f32", (1000,)), ("bf16", (1000,))],
    "bf16_only": [("bf16", (1,)), ("bf16", (17,)), ("bf16", (3,)), ("bf16", (31,)), ("bf16", (32,)),
                  ("bf16", (100,)), ("bf16", LATENT), ("bf16", (2,)), ("bf16", (33,))],
    # Crosses several MT19937 twists (624 words each) and the 2^-24 uniform grid thoroughly.
    "large": [("f32", (1_000_003,)), ("bf16", (250_001,)), ("f16", (99_999,)), ("f32", (3,))],
}


def bits_of(t: torch.Tensor) -> list[int]:
    if t.dtype == torch.float64:
        return [v & 0xFFFFFFFFFFFFFFFF for v in t.reshape(-1).view(torch.int64).tolist()]
    if t.dtype == torch.float32:
        return [v & 0xFFFFFFFF for v in t.reshape(-1).view(torch.int32).tolist()]
    return [v & 0xFFFF for v in t.reshape(-1).view(torch.int16).tolist()]


def fnv1a64(words: list[int]) -> int:
    h = 0xCBF29CE484222325
    for w in words:
        h = ((h ^ w) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def draw_line(name: str, shape: tuple, t: torch.Tensor) -> str:
    bits = bits_of(t)
    width = {"f64": 16, "f32": 8}.get(name, 4)
    hx = lambda ws: " ".join(f"{w:0{width}x}" for w in ws)
    shape_text = "x".join(str(d) for d in shape) if shape else "scalar"
    return f"draw {name} {shape_text} {fnv1a64(bits):016x} {len(bits)} head {hx(bits[:16])} tail {hx(bits[-16:])}"


def run_case(lines: list[str], name: str, gen: str, seed, draws) -> None:
    if gen == "manual":
        torch.manual_seed(seed)
        g = None
        seed_out = torch.initial_seed()
    else:
        g = torch.Generator()
        if gen == "object":
            g.manual_seed(seed)
        seed_out = g.initial_seed()
    lines.append(f"case {name} {gen} {seed_out}")
    for dtype_name, shape in draws:
        t = torch.randn(shape, dtype=DTYPES[dtype_name], generator=g)
        lines.append(draw_line(dtype_name, shape, t))
    lines.append("end")


# float64 streams: the vector path (numel >= 16, tail recompute), the scalar path below 16 with its cached normal
# shared with f32 draws, and the res_2s sampler's generators (ltx_pipelines/utils/samplers.py seeds them with -1 and
# -1 + 10000 and draws latent-shaped f64 noise from each).
F64_SHAPES = [(1,), (3,), (15,), (16,), (17,), (33,), (1000,), (1, 24, 128)]
F64_SEQUENCES = {
    "f64_mixed": [("f64", (3,)), ("f32", (3,)), ("f64", (20,)), ("f64", (1,)), ("f32", (17,)), ("f64", (1, 24, 128)),
                  ("bf16", (5,)), ("f64", (31,))],
    "res2s_stream": [("f64", (1, 96, 128)), ("f64", (1, 24, 128)), ("f64", (1, 96, 128)), ("f64", (1, 24, 128))],
}


def make_f64(out_path: Path) -> None:
    lines = [
        "# torch CPU float64 randn goldens: made by tools/reference/make_noise_goldens.py; do not edit",
        f"info torch {torch.__version__}",
    ]
    for shape in F64_SHAPES:
        run_case(lines, f"single_f64_{'x'.join(map(str, shape))}", "object", 0, [("f64", shape)])
    for name, draws in F64_SEQUENCES.items():
        for seed in ([5, 2**32 + 5] if name == "f64_mixed" else [2**64 - 1, 9999]):
            run_case(lines, f"seq_{name}", "object", seed, draws)
    out_path.write_text("\n".join(lines) + "\n")


def make(out_path: Path) -> None:
    capability = torch.backends.cpu.get_cpu_capability()
    lines = [
        f"# torch CPU randn goldens: made by tools/reference/make_noise_goldens.py; do not edit",
        f"info torch {torch.__version__}",
        f"info cpu_capability {capability}",
        f"info fresh_generator_seed {torch.Generator().initial_seed()}",
    ]
    for seed in SEEDS:
        for dtype_name in ("f32", "bf16"):
            for shape in SHAPES:
                run_case(lines, f"single_{dtype_name}_{'x'.join(map(str, shape))}", "manual", seed,
                         [(dtype_name, shape)])
    for shape in SHAPES:
        run_case(lines, f"single_f16_{'x'.join(map(str, shape))}", "manual", 0, [("f16", shape)])
    for name, draws in SEQUENCES.items():
        for seed in (SEEDS if name != "large" else [7]):
            run_case(lines, f"seq_{name}", "manual", seed, draws)
    # torch.Generator().manual_seed(s) passed as generator= must equal torch.manual_seed(s) on the default one.
    run_case(lines, "generator_object", "object", 42, SEQUENCES["mixed"])
    # A negative seed reaches the generator as its two's-complement uint64.
    run_case(lines, "negative_seed", "manual", -1, SEQUENCES["cache_across_vector"])
    # A generator nobody seeded starts from torch's default seed.
    run_case(lines, "fresh_generator", "fresh", None, SEQUENCES["cache_across_vector"] + [("bf16", LATENT)])
    out_path.write_text("\n".join(lines) + "\n")


def main() -> None:
    out_dir = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[2] / "tests/data/noise"
    if os.environ.get("LTX_NOISE_CHILD") == "scalar":
        make(out_dir / "randn_scalar.txt")
        return
    out_dir.mkdir(parents=True, exist_ok=True)
    assert torch.backends.cpu.get_cpu_capability() in ("AVX2", "AVX512"), "run on an x86 CPU with AVX2"
    make(out_dir / "randn_avx2.txt")
    make_f64(out_dir / "randn_f64.txt")
    env = dict(os.environ, ATEN_CPU_CAPABILITY="default", LTX_NOISE_CHILD="scalar")
    subprocess.run([sys.executable, __file__, str(out_dir)], env=env, check=True)


if __name__ == "__main__":
    main()

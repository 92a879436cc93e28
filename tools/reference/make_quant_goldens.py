#!/usr/bin/env python3
"""Makes the block-quantization goldens in tests/data/quant/ from gguf-py (the reference numpy codecs).

For each of Q8_0, Q4_0, Q4_K, Q5_K, Q6_K, Q5_0:
  dequant_<type>.blocks  random valid blocks (random bytes, every f16 scale finite)
  dequant_<type>.f32     gguf.quants.dequantize of those blocks, little-endian float32
For Q8_0, Q4_0 and Q5_0 (types gguf-py can quantize):
  quantize_<type>.f32    float32 input, including edge-case blocks
  quantize_<type>.blocks gguf.quants.quantize of that input
versions.txt records the package versions that made them.

Usage: .venv/bin/python tools/reference/make_quant_goldens.py [out_dir]
"""

import sys
from importlib import metadata
from pathlib import Path

import gguf
import numpy as np
from gguf import GGMLQuantizationType as Q
from gguf.quants import dequantize, quantize

# Byte offsets of the f16 scale fields inside each block (ggml's block_q8_0, block_q4_0, block_q4_K,
# block_q5_K, block_q6_K): they must hold finite values so the expected outputs are finite.
TYPES = {
    "q8_0": (Q.Q8_0, [0], 64),
    "q4_0": (Q.Q4_0, [0], 64),
    "q4_k": (Q.Q4_K, [0, 2], 16),
    "q5_k": (Q.Q5_K, [0, 2], 16),
    "q6_k": (Q.Q6_K, [208], 16),
}


def random_finite_f16(rng: np.random.Generator, n: int) -> np.ndarray:
    """Random f16 bit patterns over the whole finite range (normals, subnormals, zeros, both signs)."""
    bits = rng.integers(0, 1 << 16, size=n, dtype=np.uint16)
    bad = (bits & 0x7C00) == 0x7C00
    while bad.any():
        bits[bad] = rng.integers(0, 1 << 16, size=int(bad.sum()), dtype=np.uint16)
        bad = (bits & 0x7C00) == 0x7C00
    return bits


def random_blocks(rng: np.random.Generator, qtype: Q, scale_offsets: list[int], n_blocks: int) -> np.ndarray:
    block_elems, block_bytes = gguf.GGML_QUANT_SIZES[qtype]
    blocks = rng.integers(0, 256, size=(n_blocks, block_bytes), dtype=np.uint8)
    # Extreme payloads: all quant bits set, and all clear, in two blocks.
    blocks[1, :] = 0xFF
    blocks[2, :] = 0x00
    for off in scale_offsets:
        blocks[:, off:off + 2] = random_finite_f16(rng, n_blocks).view(np.uint8).reshape(n_blocks, 2)
    # Scales of moderate size in one block so its outputs are ordinary numbers, not only extremes.
    for off in scale_offsets:
        blocks[3, off:off + 2] = np.array([0.0123], dtype=np.float16).view(np.uint8)
    return blocks


def quantize_input(rng: np.random.Generator, n_blocks: int) -> np.ndarray:
    """Float32 rows of 32-element blocks: random data at varied magnitudes plus edge cases."""
    x = rng.standard_normal((n_blocks, 32)).astype(np.float32)
    x *= np.float32(10.0) ** rng.uniform(-4, 3, size=(n_blocks, 1)).astype(np.float32)
    x[0] = 0.0  # all-zero block: d = 0
    x[1] = np.linspace(-1, 1, 32, dtype=np.float32)  # +-max tie: gguf-py takes the first
    x[2] = -np.abs(x[2])  # largest magnitude negative
    x[3] = np.abs(x[3])  # largest magnitude positive
    x[4] = np.arange(-16, 16, dtype=np.float32) * np.float32(0.5)  # many exact half steps
    x[5] = 1e-30  # tiny: f16 d underflows to zero
    x[6, :] = 0.0
    x[6, 7] = -3.0  # a single non-zero value
    return x


def main() -> None:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[2] / "tests/data/quant"
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(20240607)
    for name, (qtype, scale_offsets, n_blocks) in TYPES.items():
        blocks = random_blocks(rng, qtype, scale_offsets, n_blocks)
        values = dequantize(blocks, qtype).astype("<f4", copy=False)
        assert values.dtype == np.float32 and np.isfinite(values).all(), name
        (out / f"dequant_{name}.blocks").write_bytes(blocks.tobytes())
        (out / f"dequant_{name}.f32").write_bytes(values.tobytes())
    for name in ("q8_0", "q4_0"):
        qtype = TYPES[name][0]
        x = quantize_input(rng, 48)
        q = quantize(x, qtype)
        (out / f"quantize_{name}.f32").write_bytes(x.astype("<f4").tobytes())
        (out / f"quantize_{name}.blocks").write_bytes(q.tobytes())
    # Q5_0 was added later: its own generator, so the files above stay byte-identical.
    rng_q5 = np.random.default_rng(20261129)
    blocks = random_blocks(rng_q5, Q.Q5_0, [0], 64)
    values = dequantize(blocks, Q.Q5_0).astype("<f4", copy=False)
    assert np.isfinite(values).all()
    (out / "dequant_q5_0.blocks").write_bytes(blocks.tobytes())
    (out / "dequant_q5_0.f32").write_bytes(values.tobytes())
    x = quantize_input(rng_q5, 48)
    (out / "quantize_q5_0.f32").write_bytes(x.astype("<f4").tobytes())
    (out / "quantize_q5_0.blocks").write_bytes(quantize(x, Q.Q5_0).tobytes())
    (out / "versions.txt").write_text(f"gguf=={metadata.version('gguf')}\nnumpy=={np.__version__}\n")


if __name__ == "__main__":
    main()

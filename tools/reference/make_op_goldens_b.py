"""Golden values for the op tests of matmul, attention, rope and conv (tests/ops/*_test.cpp read them).

    .venv/bin/python tools/reference/make_op_goldens_b.py [--out DIR]

Writes DIR/{matmul,attention,rope,conv}.safetensors (default DIR: tests/golden/ops/b). Each case `name` stores its
inputs as `name.<input>` and the torch result as `name.out`. The op attributes of each case (transposes, scale,
strides, pads, ...) are not stored: the C++ test makes the same call, and the comment beside each case here names
them. Every expected value comes from torch or from ltx_core itself, never from our engine.

bf16 cases: inputs are rounded to bf16, torch computes in f32 on those rounded values, and the result is rounded
to bf16 once -- the engine's contract (f32 arithmetic, one rounding at the store).
"""

from __future__ import annotations

import argparse
import sys
import zlib
from pathlib import Path

import torch
import torch.nn.functional as F

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(HERE))

from golden_case import reference_versions, seeded_randn, setup_determinism, write_safetensors  # noqa: E402

BF16 = torch.bfloat16


class Cases:
    """Collects named tensors for one file; inputs are created seeded by (file, case, input) name."""

    def __init__(self, file: str) -> None:
        self.file = file
        self.tensors: dict[str, torch.Tensor] = {}

    def randn(self, case: str, name: str, shape, scale: float = 1.0, dtype=torch.float32) -> torch.Tensor:
        t = seeded_randn(shape, seed=hash_seed(f"{self.file}.{case}.{name}"), scale=scale).to(dtype)
        self.tensors[f"{case}.{name}"] = t
        return t

    def put(self, case: str, name: str, t: torch.Tensor) -> torch.Tensor:
        self.tensors[f"{case}.{name}"] = t.detach().contiguous()
        return t

    def write(self, out_dir: Path) -> Path:
        path = out_dir / f"{self.file}.safetensors"
        write_safetensors(path, self.tensors, reference_versions("tools/reference/make_op_goldens_b.py"))
        return path


def hash_seed(name: str) -> int:
    return zlib.crc32(name.encode())


def f32(*ts: torch.Tensor) -> list[torch.Tensor]:
    return [t.float() for t in ts]


def matmul_cases() -> Cases:
    c = Cases("matmul")
    # plain: a [5,7] · b [7,6]
    a, b = c.randn("plain", "a", (5, 7)), c.randn("plain", "b", (7, 6))
    c.put("plain", "out", a @ b)
    # batch_broadcast: a [2,1,5,7] · b [3,7,6] -> [2,3,5,6]
    a, b = c.randn("batch_broadcast", "a", (2, 1, 5, 7)), c.randn("batch_broadcast", "b", (3, 7, 6))
    c.put("batch_broadcast", "out", torch.matmul(a, b))
    # linear: x [2,5,9] · W [6,9]ᵀ (transpose_b; W shared by all batches)
    x, w = c.randn("linear", "a", (2, 5, 9)), c.randn("linear", "b", (6, 9))
    c.put("linear", "out", x @ w.T)
    # transpose_a: a [2,7,5] (transpose_a) · b [2,7,6] -> [2,5,6]
    a, b = c.randn("transpose_a", "a", (2, 7, 5)), c.randn("transpose_a", "b", (2, 7, 6))
    c.put("transpose_a", "out", a.transpose(-1, -2) @ b)
    # transpose_both: a [3,7,5] (transpose_a) · b [1,6,7] (transpose_b) -> [3,5,6]
    a, b = c.randn("transpose_both", "a", (3, 7, 5)), c.randn("transpose_both", "b", (1, 6, 7))
    c.put("transpose_both", "out", a.transpose(-1, -2) @ b.transpose(-1, -2))
    # f16_weight: a f32 [4,33] · b f16 [17,33]ᵀ (transpose_b) -> f32
    a, b = c.randn("f16_weight", "a", (4, 33)), c.randn("f16_weight", "b", (17, 33), dtype=torch.float16)
    c.put("f16_weight", "out", a @ b.float().T)
    # bf16: a bf16 [3,5,33] · b bf16 [33,17] -> bf16
    a, b = c.randn("bf16", "a", (3, 5, 33), dtype=BF16), c.randn("bf16", "b", (33, 17), dtype=BF16)
    c.put("bf16", "out", (a.float() @ b.float()).to(BF16))
    return c


def sdpa(q, k, v, mask=None, scale=None, causal=False):
    gqa = q.shape[1] != k.shape[1]
    return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=scale, is_causal=causal, enable_gqa=gqa)


def attention_cases() -> Cases:
    c = Cases("attention")
    # plain: q [2,3,5,8], k [2,3,7,8], v [2,3,7,6]; scale 0 (1/sqrt(8))
    q, k, v = (c.randn("plain", n, s) for n, s in (("q", (2, 3, 5, 8)), ("k", (2, 3, 7, 8)), ("v", (2, 3, 7, 6))))
    c.put("plain", "out", sdpa(q, k, v))
    # gqa: q [1,6,4,8], k [1,2,9,8], v [1,2,9,5]; scale 0.3 (head h reads kv head h // 3)
    q, k, v = (c.randn("gqa", n, s) for n, s in (("q", (1, 6, 4, 8)), ("k", (1, 2, 9, 8)), ("v", (1, 2, 9, 5))))
    c.put("gqa", "out", sdpa(q, k, v, scale=0.3))
    # key_padding_mask: q [2,2,5,4], k/v [2,2,7,4]; mask [2,1,1,7] (-inf on some keys, finite biases elsewhere)
    q, k, v = (c.randn("key_padding_mask", n, (2, 2, 5 if n == "q" else 7, 4)) for n in ("q", "k", "v"))
    mask = c.randn("key_padding_mask", "mask_bias", (2, 1, 1, 7))
    mask = mask.masked_fill(torch.tensor([[0, 0, 0, 0, 0, 1, 1], [0, 1, 0, 0, 0, 0, 1]]).bool()[:, None, None, :],
                            float("-inf"))
    c.put("key_padding_mask", "mask", mask)
    del c.tensors["key_padding_mask.mask_bias"]
    c.put("key_padding_mask", "out", sdpa(q, k, v, mask))
    # mask_2d: q [1,2,5,4], k/v [1,2,6,4]; mask [5,6] shared by batch and heads
    q, k, v = (c.randn("mask_2d", n, (1, 2, 5 if n == "q" else 6, 4)) for n in ("q", "k", "v"))
    mask = c.randn("mask_2d", "mask", (5, 6))
    c.put("mask_2d", "out", sdpa(q, k, v, mask))
    # causal: q/k/v [1,2,6,8]; causal
    q, k, v = (c.randn("causal", n, (1, 2, 6, 8)) for n in ("q", "k", "v"))
    c.put("causal", "out", sdpa(q, k, v, causal=True))
    # causal_rect: q [1,1,4,8], k/v [1,1,7,8]; causal (torch aligns the triangle at the top left)
    q, k, v = (c.randn("causal_rect", n, (1, 1, 4 if n == "q" else 7, 8)) for n in ("q", "k", "v"))
    c.put("causal_rect", "out", sdpa(q, k, v, causal=True))
    # causal_mask: q/k/v [1,2,5,4], mask [1,2,5,5]; causal AND the mask. torch refuses both at once, so the
    # expected value applies the causal triangle as -inf inside the mask.
    q, k, v = (c.randn("causal_mask", n, (1, 2, 5, 4)) for n in ("q", "k", "v"))
    mask = c.randn("causal_mask", "mask", (1, 2, 5, 5))
    tri = torch.ones(5, 5).tril().bool()
    c.put("causal_mask", "out", sdpa(q, k, v, mask.masked_fill(~tri, float("-inf"))))
    # masked_row: q [1,1,3,4], k/v [1,1,5,4]; mask [1,1,3,5] whose row 1 is all -inf (torch gives zeros there)
    q, k, v = (c.randn("masked_row", n, (1, 1, 3 if n == "q" else 5, 4)) for n in ("q", "k", "v"))
    mask = torch.zeros(1, 1, 3, 5)
    mask[0, 0, 1, :] = float("-inf")
    mask[0, 0, 2, 0] = float("-inf")
    c.put("masked_row", "mask", mask)
    c.put("masked_row", "out", sdpa(q, k, v, mask))
    # many_blocks: q [1,2,3,4]·3, k/v [1,2,200,4]; mask [1,1,3,200]: row 0 masks keys < 130 (whole key blocks of
    # the streaming softmax), rows 1-2 random biases; large scores exercise the running-max rescaling.
    q = c.randn("many_blocks", "q", (1, 2, 3, 4), scale=3.0)
    k, v = c.randn("many_blocks", "k", (1, 2, 200, 4), scale=2.0), c.randn("many_blocks", "v", (1, 2, 200, 4))
    mask = c.randn("many_blocks", "mask_bias", (1, 1, 3, 200))
    mask[0, 0, 0, :130] = float("-inf")
    del c.tensors["many_blocks.mask_bias"]
    c.put("many_blocks", "mask", mask)
    c.put("many_blocks", "out", sdpa(q, k, v, mask))
    # bf16: q [1,4,9,16], k/v [1,2,11,16] bf16; scale 0
    q, k, v = (c.randn("bf16", n, (1, 4 if n == "q" else 2, 9 if n == "q" else 11, 16), dtype=BF16)
               for n in ("q", "k", "v"))
    c.put("bf16", "out", sdpa(*f32(q, k, v)).to(BF16))
    return c


def rope_cases() -> Cases:
    from ltx_core.model.transformer.rope import LTXRopeType, apply_rotary_emb

    c = Cases("rope")

    def tables(case: str, shape, dtype=torch.float32):
        angle = c.randn(case, "angle", shape, scale=3.0)
        del c.tensors[f"{case}.angle"]
        return c.put(case, "cos", angle.cos().to(dtype)), c.put(case, "sin", angle.sin().to(dtype))

    # interleaved: x [2,5,12], cos/sin [1,5,12]
    x = c.randn("interleaved", "x", (2, 5, 12))
    cos, sin = tables("interleaved", (1, 5, 12))
    c.put("interleaved", "out", apply_rotary_emb(x, (cos, sin), LTXRopeType.INTERLEAVED))
    # split: x [2,3,5,8], cos/sin [1,3,5,4]
    x = c.randn("split", "x", (2, 3, 5, 8))
    cos, sin = tables("split", (1, 3, 5, 4))
    c.put("split", "out", apply_rotary_emb(x, (cos, sin), LTXRopeType.SPLIT))
    # split_heads: the DiT's call: x [B=2,T=5,H·Dh=3·8], cos/sin [2,3,5,4]; ltx_core reshapes x to heads itself
    x = c.randn("split_heads", "x", (2, 5, 24))
    cos, sin = tables("split_heads", (2, 3, 5, 4))
    c.put("split_heads", "out", apply_rotary_emb(x, (cos, sin), LTXRopeType.SPLIT))
    # interleaved_bf16: x [3,7,10] bf16, cos/sin [7,10] bf16
    x = c.randn("interleaved_bf16", "x", (3, 7, 10), dtype=BF16)
    cos, sin = tables("interleaved_bf16", (7, 10), BF16)
    c.put("interleaved_bf16", "out", apply_rotary_emb(*f32(x), (*f32(cos, sin),), LTXRopeType.INTERLEAVED).to(BF16))
    # split_bf16: x [1,2,7,16] bf16, cos/sin [1,2,7,8] bf16
    x = c.randn("split_bf16", "x", (1, 2, 7, 16), dtype=BF16)
    cos, sin = tables("split_bf16", (1, 2, 7, 8), BF16)
    c.put("split_bf16", "out", apply_rotary_emb(*f32(x), (*f32(cos, sin),), LTXRopeType.SPLIT).to(BF16))
    return c


def padded_conv(x, w, b, stride, dilation, pads, modes, groups):
    """F.pad one spatial dim at a time (innermost first, as F.pad orders pairs), then an unpadded conv."""
    n = x.dim() - 2
    for d in reversed(range(n)):
        before, after = pads[d]
        if before == 0 and after == 0:
            continue
        spec = [0, 0] * (n - 1 - d) + [before, after] + [0, 0] * d
        x = F.pad(x, spec, mode="constant" if modes[d] == "zeros" else modes[d])
    conv = (F.conv1d, F.conv2d, F.conv3d)[n - 1]
    return conv(x, w, b, stride=stride, dilation=dilation, groups=groups)


def conv_cases() -> Cases:
    from ltx_core.model.video_vae.convolution import CausalConv3d
    from ltx_core.model.video_vae.enums import PaddingModeType

    c = Cases("conv")

    def conv_case(name, x_shape, w_shape, stride, dilation, pads, modes, groups, bias=True, dtype=torch.float32):
        x = c.randn(name, "x", x_shape, dtype=dtype)
        w = c.randn(name, "w", w_shape, scale=0.3, dtype=dtype)
        b = c.randn(name, "b", (w_shape[0],), dtype=dtype) if bias else None
        args = [t.float() if t is not None else None for t in (x, w, b)]
        c.put(name, "out", padded_conv(*args, stride, dilation, pads, modes, groups).to(dtype))

    # conv1d: x [2,4,11], w [6,4,3], bias; stride 2, pad 1/1 zeros
    conv_case("conv1d", (2, 4, 11), (6, 4, 3), (2,), (1,), [(1, 1)], ["zeros"], 1)
    # conv1d_groups: x [1,6,13], w [4,3,3], no bias; groups 2, dilation 2, pad 3/1 reflect
    conv_case("conv1d_groups", (1, 6, 13), (4, 3, 3), (1,), (2,), [(3, 1)], ["reflect"], 2, bias=False)
    # conv2d: x [2,3,7,9], w [5,3,3,2], bias; stride (2,1), pads (1,1),(0,1) replicate
    conv_case("conv2d", (2, 3, 7, 9), (5, 3, 3, 2), (2, 1), (1, 1), [(1, 1), (0, 1)], ["replicate"] * 2, 1)
    # conv2d_depthwise: x [1,4,6,5], w [4,1,3,3], bias; groups 4, dilation (1,2), pads (1,1),(2,2) zeros
    conv_case("conv2d_depthwise", (1, 4, 6, 5), (4, 1, 3, 3), (1, 1), (1, 2), [(1, 1), (2, 2)], ["zeros"] * 2, 4)
    # conv3d: x [1,3,5,6,7], w [4,3,3,3,3], bias; stride (1,2,2), pads 1 zeros
    conv_case("conv3d", (1, 3, 5, 6, 7), (4, 3, 3, 3, 3), (1, 2, 2), (1, 1, 1), [(1, 1)] * 3, ["zeros"] * 3, 1)
    # conv2d_bf16: x [1,5,6,7], w [3,5,3,3], bias, all bf16; pads (1,1),(1,1) reflect
    conv_case("conv2d_bf16", (1, 5, 6, 7), (3, 5, 3, 3), (1, 1), (1, 1), [(1, 1), (1, 1)], ["reflect"] * 2, 1,
              dtype=BF16)

    # ltx_core's own CausalConv3d (video VAE). causal_conv3d: kernel 3, stride (1,2,2), zeros in space, causal
    # (time: pad_before 2 replicating frame 0); causal_conv3d_reflect: kernel 3, reflect in space, non-causal
    # (time: 1 replicated frame on each side).
    for name, mode, causal, stride in (("causal_conv3d", PaddingModeType.ZEROS, True, (1, 2, 2)),
                                        ("causal_conv3d_reflect", PaddingModeType.REFLECT, False, 1)):
        conv = CausalConv3d(3, 4, kernel_size=3, stride=stride, spatial_padding_mode=mode)
        with torch.no_grad():
            conv.conv.weight.copy_(c.randn(name, "w", tuple(conv.conv.weight.shape), scale=0.2))
            conv.conv.bias.copy_(c.randn(name, "b", tuple(conv.conv.bias.shape)))
            x = c.randn(name, "x", (2, 3, 4, 5, 6))
            c.put(name, "out", conv(x, causal=causal))

    def transpose_case(name, x_shape, w_shape, stride, dilation, padding, output_padding, groups):
        x, w = c.randn(name, "x", x_shape), c.randn(name, "w", w_shape, scale=0.3)
        b = c.randn(name, "b", (w_shape[1] * groups,))
        c.put(name, "out", F.conv_transpose1d(x, w, b, stride=stride, padding=padding, output_padding=output_padding,
                                              groups=groups, dilation=dilation))

    # conv_transpose1d: x [2,4,9], w [4,3,5], bias; stride 3, padding 2, output_padding 1
    transpose_case("conv_transpose1d", (2, 4, 9), (4, 3, 5), 3, 1, 2, 1, 1)
    # conv_transpose1d_groups: x [1,6,7], w [6,2,3], bias; groups 3, stride 2, dilation 2, padding 1, output_padding 1
    transpose_case("conv_transpose1d_groups", (1, 6, 7), (6, 2, 3), 2, 2, 1, 1, 3)
    return c


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=REPO / "tests" / "golden" / "ops" / "b")
    args = ap.parse_args()
    setup_determinism(0)
    with torch.no_grad():
        for make in (matmul_cases, attention_cases, rope_cases, conv_cases):
            path = make().write(args.out)
            print(f"{path} ({path.stat().st_size} bytes)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Golden cases for the op families elementwise, norm, resample, layout, reduce and cast.

Every expected output is computed by torch (or by the ltx_core / transformers modules that define the formula),
never by ltx. Each case "<name>" stores its inputs as "<name>.in0", "<name>.in1", ... and the expected output as
"<name>.out". bf16 cases hold bf16-rounded inputs and the op computed in f32 on those inputs, rounded once to
bf16: the contract of ltx's kernels (f32 arithmetic, one rounding at the store).

Run from the repository root with the pinned environment (tools/reference/requirements.txt):
    python tools/reference/make_op_goldens_a.py
It writes tests/golden/ops/a/<family>.safetensors.
"""

import math
import os
import sys

import einops
import torch
import torch.nn.functional as F
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from golden_case import write_safetensors  # noqa: E402  (deterministic header: sorted names and metadata)

from ltx_core.model.audio_vae.vocoder import Snake, SnakeBeta
from ltx_core.model.common.normalization import PixelNorm
from transformers.models.gemma3.modeling_gemma3 import Gemma3RMSNorm

# LTX_OP_GOLDENS_OUT redirects the output (tools/reference/check_goldens.sh regenerates into a temp dir).
OUT_DIR = os.environ.get("LTX_OP_GOLDENS_OUT") or os.path.join(
    os.path.dirname(__file__), "..", "..", "tests", "golden", "ops", "a")


class Family:
    def __init__(self, name):
        self.name = name
        self.tensors = {}
        self.gen = torch.Generator().manual_seed(sum(map(ord, name)))

    def rand(self, *shape, lo=-1.0, hi=1.0):
        return torch.rand(*shape, generator=self.gen) * (hi - lo) + lo

    def add(self, case, inputs, out):
        assert case not in {k.split(".")[0] for k in self.tensors}, case
        for i, t in enumerate(inputs):
            self.tensors[f"{case}.in{i}"] = t.detach().clone().contiguous()
        self.tensors[f"{case}.out"] = out.detach().clone().contiguous()

    def add_f32_and_bf16(self, case, inputs, fn):
        """Adds "<case>" in f32 and "<case>_bf16": fn in f32 on bf16-rounded inputs, then rounded to bf16."""
        self.add(case, inputs, fn(*inputs))
        rounded = [t.bfloat16() for t in inputs]
        self.add(case + "_bf16", rounded, fn(*[t.float() for t in rounded]).bfloat16())

    def save(self):
        path = os.path.join(OUT_DIR, self.name + ".safetensors")
        meta = {"generator": "tools/reference/make_op_goldens_a.py", "torch": torch.__version__}
        write_safetensors(Path(path), self.tensors, meta)
        print(f"{path}: {len(self.tensors)} tensors, {os.path.getsize(path)} bytes")


def snake_module(cls, alpha, beta, log_scale):
    m = cls(alpha.shape[0], alpha_logscale=log_scale)
    with torch.no_grad():
        m.alpha.copy_(alpha)
        if beta is not None:
            m.beta.copy_(beta)
    return m


def elementwise():
    f = Family("elementwise")
    a = f.rand(3, 5, 7)
    f.add_f32_and_bf16("add", [a, f.rand(5, 1)], torch.add)
    f.add_f32_and_bf16("sub", [f.rand(1, 7), a], torch.sub)  # input 0 is the smaller one: broadcasting both ways
    f.add_f32_and_bf16("mul", [a, f.rand(3, 1, 7)], torch.mul)
    divisor = f.rand(5, 7, lo=0.5, hi=1.5) * torch.where(f.rand(5, 7) > 0, 1.0, -1.0)
    f.add_f32_and_bf16("div", [a, divisor], torch.div)
    f.add_f32_and_bf16("lerp", [a, f.rand(3, 1, 7), f.rand(5, 1)], torch.lerp)
    f.add_f32_and_bf16("scale", [a], lambda x: x * 2.5 + -0.75)
    f.add_f32_and_bf16("clamp", [a], lambda x: torch.clamp(x, -0.3, 0.6))
    wide = f.rand(3, 5, 7, lo=-4.0, hi=4.0)
    f.add_f32_and_bf16("silu", [wide], F.silu)
    f.add_f32_and_bf16("gelu", [wide], F.gelu)
    f.add_f32_and_bf16("gelu_tanh", [wide], lambda x: F.gelu(x, approximate="tanh"))
    f.add_f32_and_bf16("sigmoid", [wide], torch.sigmoid)
    f.add_f32_and_bf16("tanh", [wide], torch.tanh)
    f.add_f32_and_bf16("leaky_relu", [wide], lambda x: F.leaky_relu(x, 0.2))
    # BigVGAN activations, through ltx_core's own modules (x [B, C, T], one alpha/beta per channel).
    x = f.rand(2, 5, 7, lo=-3.0, hi=3.0)
    log_alpha = f.rand(5)
    f.add_f32_and_bf16("snake_log", [x, log_alpha], lambda x, al: snake_module(Snake, al, None, True)(x))
    alpha = f.rand(5, lo=0.2, hi=2.0)
    f.add_f32_and_bf16("snake", [x, alpha], lambda x, al: snake_module(Snake, al, None, False)(x))
    log_beta = f.rand(5)
    log_beta[1] = -20.0  # beta ~ 2e-9: the 1e-9 epsilon changes the result by a third here
    f.add_f32_and_bf16("snake_beta_log", [x, log_alpha, log_beta],
                       lambda x, al, be: snake_module(SnakeBeta, al, be, True)(x))
    beta = f.rand(5, lo=0.2, hi=2.0)
    f.add_f32_and_bf16("snake_beta", [x, alpha, beta], lambda x, al, be: snake_module(SnakeBeta, al, be, False)(x))
    f.save()


def norm():
    f = Family("norm")
    x = f.rand(3, 5, 7, lo=-2.0, hi=3.0)
    w = f.rand(7)
    b = f.rand(7)
    f.add_f32_and_bf16("softmax", [x], lambda x: torch.softmax(x * 0.7, dim=-1))
    f.add_f32_and_bf16("rms_norm", [x], lambda x: F.rms_norm(x, (7,), eps=1e-6))
    f.add_f32_and_bf16("rms_norm_weight", [x, w], lambda x, w: F.rms_norm(x, (7,), weight=w, eps=1e-5))

    def gemma(x, w):
        m = Gemma3RMSNorm(7, eps=1e-6)
        with torch.no_grad():
            m.weight.copy_(w)
        return m(x)

    f.add_f32_and_bf16("rms_norm_one_plus", [x, w], gemma)
    f.add_f32_and_bf16("layer_norm", [x], lambda x: F.layer_norm(x, (7,), eps=1e-5))
    f.add_f32_and_bf16("layer_norm_affine", [x, w, b], lambda x, w, b: F.layer_norm(x, (7,), w, b, eps=1e-5))
    f.add_f32_and_bf16("layer_norm_bias", [x, b], lambda x, b: F.layer_norm(x, (7,), None, b, eps=1e-6))
    g = f.rand(2, 6, 5, 7, lo=-1.0, hi=2.0)
    gw = f.rand(6)
    gb = f.rand(6)
    f.add_f32_and_bf16("group_norm", [g, gw, gb], lambda x, w, b: F.group_norm(x, 3, w, b, eps=1e-6))
    f.add_f32_and_bf16("group_norm_plain", [g], lambda x: F.group_norm(x, 2, eps=1e-5))
    g3 = f.rand(2, 4, 3, 2, 5)
    f.add_f32_and_bf16("group_norm_3d", [g3, f.rand(4), f.rand(4)], lambda x, w, b: F.group_norm(x, 4, w, b, 1e-6))
    p = f.rand(2, 5, 3, 7)
    f.add_f32_and_bf16("pixel_norm", [p], lambda x: PixelNorm(dim=1, eps=1e-6)(x))
    f.add_f32_and_bf16("pixel_norm_last", [p], lambda x: PixelNorm(dim=-1, eps=1e-8)(x))
    # Values ~1e-3: mean(x²) ~ 3e-7 is below eps, so eps inside the sqrt decides the result.
    f.add_f32_and_bf16("pixel_norm_small", [p * 1e-3], lambda x: PixelNorm(dim=1, eps=1e-6)(x))
    f.save()


def resample():
    f = Family("resample")
    d2s_1d = "b (c p1) w -> b c (w p1)"
    d2s_3d = "b (c p1 p2 p3) d h w -> b c (d p1) (h p2) (w p3)"
    x = f.rand(2, 3 * 3, 5)
    f.add("d2s_1d", [x], einops.rearrange(x, d2s_1d, p1=3))
    x = f.rand(2, 3 * 2 * 2, 4, 5)
    f.add("d2s_2d", [x], F.pixel_shuffle(x, 2))
    x = f.rand(2, 2 * 2 * 3, 4, 5)
    f.add("d2s_2d_uneven", [x], einops.rearrange(x, "b (c p1 p2) h w -> b c (h p1) (w p2)", p1=2, p2=3))
    x = f.rand(1, 3 * 2 * 3 * 2, 3, 2, 5)
    f.add("d2s_3d", [x], einops.rearrange(x, d2s_3d, p1=2, p2=3, p3=2))
    x = f.rand(2, 3, 5 * 3)
    f.add("s2d_1d", [x], einops.rearrange(x, "b c (w p1) -> b (c p1) w", p1=3))
    x = f.rand(2, 3, 4 * 2, 5 * 2)
    f.add("s2d_2d", [x], F.pixel_unshuffle(x, 2))
    x = f.rand(1, 3, 3 * 2, 2 * 3, 5 * 2)
    f.add("s2d_3d", [x], einops.rearrange(x, "b c (d p1) (h p2) (w p3) -> b (c p1 p2 p3) d h w", p1=2, p2=3, p3=2))
    x = f.rand(2, 3, 5)
    f.add("up_1d", [x], F.interpolate(x, size=(5 * 3,), mode="nearest"))
    x = f.rand(2, 3, 4, 5)
    f.add("up_2d", [x], F.interpolate(x, size=(4 * 2, 5 * 3), mode="nearest"))
    x = f.rand(1, 3, 3, 2, 5)
    f.add("up_3d", [x], F.interpolate(x, size=(3 * 1, 2 * 2, 5 * 3), mode="nearest"))
    f.save()


def pad_nd(x, before, after, mode, value=0.0):
    """torch pads only trailing dims for reflect/replicate; padding each dim in turn is the same for all modes,
    because each mode's index map is separable per dimension."""
    for d in range(x.dim()):
        if before[d] == 0 and after[d] == 0:
            continue
        moved = x.movedim(d, -1)
        shape = moved.shape
        flat = moved.reshape(1, -1, shape[-1])
        if mode == "constant":
            flat = F.pad(flat, (before[d], after[d]), mode="constant", value=value)
        else:
            flat = F.pad(flat, (before[d], after[d]), mode=mode)
        x = flat.reshape(*shape[:-1], flat.shape[-1]).movedim(-1, d)
    return x


def layout():
    f = Family("layout")
    table = f.rand(11, 6)
    ids = torch.tensor([[3, 0, 10], [7, 7, 1]], dtype=torch.int64)
    f.add("gather_i64", [table, ids], F.embedding(ids, table))
    ids32 = torch.tensor([5, 10, 0, 2, 9], dtype=torch.int32)
    f.add("gather_i32", [table, ids32], F.embedding(ids32.long(), table))
    parts = [f.rand(3, 2, 7), f.rand(3, 5, 7), f.rand(3, 1, 7)]
    f.add("concat_axis1", parts, torch.cat(parts, dim=1))
    parts = [f.rand(3, 5, 2), f.rand(3, 5, 4)]
    f.add("concat_last", parts, torch.cat(parts, dim=-1))
    parts = [f.rand(1, 5, 7), f.rand(2, 5, 7)]
    f.add("concat_first", parts, torch.cat(parts, dim=0))
    x = f.rand(5, 9, 4)
    f.add("slice_step", [x], x[:, 1:8:3])
    f.add("slice_negative", [x], x[:, -7:-1:2])
    f.add("slice_past_end", [x], x[2:100])
    f.add("slice_last", [x], x[..., -3:])
    x = f.rand(2, 3, 4, 5)
    f.add("permute", [x], x.permute(2, 0, 3, 1))
    x = f.rand(3, 5, 7)
    f.add("reshape", [x], x.reshape(7, 15))
    x = f.rand(3, 4, 5)
    f.add("pad_zeros", [x], pad_nd(x, [1, 0, 2], [0, 3, 1], "constant"))
    f.add("pad_constant", [x], pad_nd(x, [0, 2, 1], [2, 1, 0], "constant", value=0.5))
    f.add("pad_reflect", [x], pad_nd(x, [2, 1, 4], [1, 3, 2], "reflect"))
    f.add("pad_replicate", [x], pad_nd(x, [2, 0, 3], [3, 4, 1], "replicate"))
    f.save()


def reduce():
    f = Family("reduce")
    x = f.rand(3, 5, 7, lo=-2.0, hi=2.0)
    f.add_f32_and_bf16("sum_1", [x], lambda x: x.sum(dim=1))
    f.add_f32_and_bf16("sum_all_keepdim", [x], lambda x: x.sum(dim=(0, 1, 2), keepdim=True))
    f.add_f32_and_bf16("mean_02_keepdim", [x], lambda x: x.mean(dim=(0, 2), keepdim=True))
    f.add_f32_and_bf16("mean_2", [x], lambda x: x.mean(dim=2))
    f.add_f32_and_bf16("max_2", [x], lambda x: x.amax(dim=2))
    f.add_f32_and_bf16("max_01", [x], lambda x: x.amax(dim=(0, 1)))
    f.add_f32_and_bf16("min_0_keepdim", [x], lambda x: x.amin(dim=0, keepdim=True))
    f.add_f32_and_bf16("min_12", [x], lambda x: x.amin(dim=(1, 2)))
    f.save()


def cast():
    f = Family("cast")
    # Signed values with fractions, plus exact ties for bf16 (1 + 2^-8, 1 + 3·2^-8) and f16 (1 + 2^-11,
    # 1 + 3·2^-11), which round-to-nearest-even must resolve downwards and upwards respectively.
    ties = torch.tensor([1 + 2**-8, 1 + 3 * 2**-8, -(1 + 2**-8), 1 + 2**-11, 1 + 3 * 2**-11, 0.0, -0.0])
    signed = torch.cat([f.rand(30, lo=-300.0, hi=300.0), f.rand(10, lo=-2.0, hi=2.0), ties])
    unsigned = torch.cat([f.rand(30, lo=0.0, hi=255.0), torch.tensor([0.0, 1.0, 255.0, 254.5])])
    dtypes = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16, "i32": torch.int32,
              "i64": torch.int64, "u8": torch.uint8}
    for src_name, src_dtype in dtypes.items():
        for dst_name, dst_dtype in dtypes.items():
            values = unsigned if "u8" in (src_name, dst_name) else signed
            src = values.to(src_dtype)
            f.add(f"{src_name}_to_{dst_name}", [src], src.to(dst_dtype))
    big = torch.tensor([2**40 + 12345, -(2**33) - 7, 16777217, 123], dtype=torch.int64)
    for dst_name in ("f32", "bf16", "f16", "i64"):
        f.add(f"i64_big_to_{dst_name}", [big], big.to(dtypes[dst_name]))
    f.save()


def main():
    os.makedirs(OUT_DIR, exist_ok=True)
    torch.set_num_threads(1)
    families = {"elementwise": elementwise, "norm": norm, "resample": resample, "layout": layout,
                "reduce": reduce, "cast": cast}
    for name in sys.argv[1:] or families:
        families[name]()


if __name__ == "__main__":
    main()

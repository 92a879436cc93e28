"""Shared writer for golden test cases (format 1, documented in tests/golden/README.md).

Every generator in tools/reference builds a tiny module from the official code, fills its parameters with
`seeded_init_`, runs it on seeded inputs while `Recorder` captures named intermediates, and hands the result to
`GoldenCase.write`. Files are written by our own safetensors writer so that the bytes depend only on the tensors
(sorted keys, fixed header, no hash-ordered metadata), which is what tools/reference/check_goldens.sh compares.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import importlib.metadata
import json
import math
import os
import struct
import subprocess
import sys
import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch

FORMAT_VERSION = 1
GROUPS = ("text", "dit", "rope", "vae", "audio", "upsampler", "schedule", "pipeline")

_ST_DTYPES = {
    torch.float32: "F32",
    torch.float16: "F16",
    torch.bfloat16: "BF16",
    torch.float64: "F64",
    torch.int64: "I64",
    torch.int32: "I32",
    torch.int16: "I16",
    torch.int8: "I8",
    torch.uint8: "U8",
    torch.bool: "BOOL",
}


def reference_versions(generator: str) -> dict[str, str]:
    """Versions of the packages that produced a case, plus the generator script (repo-relative path)."""
    out = {}
    for pkg in ("ltx-core", "ltx-pipelines", "torch", "transformers"):
        try:
            out[pkg] = importlib.metadata.version(pkg)
        except importlib.metadata.PackageNotFoundError:
            out[pkg] = "absent"
    out["generator"] = generator
    return out


def torch_cpu_capability() -> str:
    """The CPU kernel set torch runs in this process ("avx512", "avx2", "default"): where torch's results depend
    on it (vectorized linspace and pow round differently), the engine replays a case with the set that made it."""
    return torch.backends.cpu.get_cpu_capability().lower()


def made_in_child_with_capability(capability: str, group: str, case: str, out_root: Path) -> Path | None:
    """torch picks its kernel set once per process (ATEN_CPU_CAPABILITY), so a case that must be made with another
    set than this process's is made by make_goldens.py in a child process; returns its directory, or None when
    this process already runs `capability` (the caller makes the case itself)."""
    if torch_cpu_capability() == capability:
        return None
    script = Path(__file__).resolve().parent / "make_goldens.py"
    env = {**os.environ, "ATEN_CPU_CAPABILITY": capability}
    subprocess.run([sys.executable, str(script), "--out", str(out_root), "--only", group, "--case", case], env=env,
                   check=True, stdout=subprocess.DEVNULL)
    return Path(out_root) / group / case


def setup_determinism(seed: int = 0) -> None:
    """One thread, deterministic kernels, fixed seed: the same bytes on every run of a generator."""
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    torch.manual_seed(seed)


def name_seed(base_seed: int, name: str) -> int:
    """A per-tensor seed derived from the tensor's name, so adding a parameter never shifts the others."""
    return (base_seed * 1_000_003 + zlib.crc32(name.encode())) % (2**63)


def seeded_randn(shape: Iterable[int], seed: int, scale: float = 1.0, dtype=torch.float32) -> torch.Tensor:
    gen = torch.Generator().manual_seed(seed)
    return (torch.randn(tuple(shape), generator=gen, dtype=torch.float32) * scale).to(dtype)


def seeded_uniform(shape: Iterable[int], seed: int, low: float, high: float) -> torch.Tensor:
    gen = torch.Generator().manual_seed(seed)
    return torch.rand(tuple(shape), generator=gen, dtype=torch.float32) * (high - low) + low


def default_init_value(name: str, shape: tuple[int, ...], seed: int) -> torch.Tensor:
    """Sensible random scales for a parameter that has no special rule.

    Matrices and conv kernels: N(0, 1/fan_in) so activations stay O(1) through the layers; biases: N(0, 0.05²);
    1-D norm weights: 1 + N(0, 0.1²); anything else (tables, registers, embeddings): N(0, 0.1²)... callers pass
    overrides for parameters with other conventions (e.g. Gemma's zero-centred (1+w) norms).
    """
    leaf = name.rsplit(".", 1)[-1]
    if leaf == "bias":
        return seeded_randn(shape, seed, 0.05)
    if len(shape) == 1 and ("norm" in name or leaf == "weight"):
        return 1.0 + seeded_randn(shape, seed, 0.1)
    if len(shape) >= 2 and leaf == "weight":
        fan_in = int(np.prod(shape[1:]))
        return seeded_randn(shape, seed, 1.0 / np.sqrt(fan_in))
    return seeded_randn(shape, seed, 0.1)


InitRule = Callable[[str, tuple[int, ...], int], "torch.Tensor | None"]


@torch.no_grad()
def seeded_init_(module: torch.nn.Module, seed: int, rules: Iterable[InitRule] = (), buffers: bool = False) -> None:
    """Overwrite every parameter (and optionally floating buffer) of `module` in place with seeded values.

    `rules` are tried in order; the first one returning a tensor wins, else `default_init_value`. This also fills
    the `torch.empty` tensors (scale_shift_table*) that the official constructors leave uninitialised.
    """
    rules = list(rules)
    items = list(module.named_parameters())
    if buffers:
        items += [(n, b) for n, b in module.named_buffers() if b.is_floating_point()]
    for name, p in sorted(items, key=lambda kv: kv[0]):
        shape = tuple(p.shape)
        s = name_seed(seed, name)
        value = None
        for rule in rules:
            value = rule(name, shape, s)
            if value is not None:
                break
        if value is None:
            value = default_init_value(name, shape, s)
        p.copy_(value.to(p.dtype))


def write_safetensors(path: Path, tensors: dict[str, torch.Tensor], metadata: dict[str, str] | None = None) -> None:
    """Write a safetensors file deterministically: tensors in sorted-name order, metadata keys sorted, the header
    padded with spaces to a multiple of 8 bytes (allowed by the format), little-endian data."""
    header: dict[str, object] = {}
    if metadata:
        header["__metadata__"] = {k: str(metadata[k]) for k in sorted(metadata)}
    blobs = []
    offset = 0
    for name in sorted(tensors):
        t = tensors[name].detach().cpu().contiguous()
        if t.dtype not in _ST_DTYPES:
            raise TypeError(f"{path}: tensor {name} has unsupported dtype {t.dtype}")
        if t.dtype == torch.bfloat16:
            data = t.view(torch.int16).numpy().astype("<i2").tobytes()
        else:
            data = t.numpy().astype(t.numpy().dtype.newbyteorder("<")).tobytes()
        header[name] = {"dtype": _ST_DTYPES[t.dtype], "shape": list(t.shape), "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    raw = json.dumps(header, sort_keys=False, separators=(",", ":"), ensure_ascii=True).encode()
    raw += b" " * ((8 - len(raw) % 8) % 8)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(raw)))
        f.write(raw)
        for b in blobs:
            f.write(b)


def read_safetensors(path: Path) -> tuple[dict[str, torch.Tensor], dict[str, str]]:
    from safetensors import safe_open

    with safe_open(str(path), framework="pt") as f:
        return {k: f.get_tensor(k) for k in f.keys()}, dict(f.metadata() or {})


def canonical_json(obj: object) -> str:
    """The JSON text used for metadata `config` strings and manifests: sorted keys, no whitespace variance."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=True)


class Recorder:
    """Forward hooks that capture module outputs under their official module path plus a suffix.

    `rec.capture(model, {"transformer_blocks.0.attn1": "out"})` stores the hook output as
    "transformer_blocks.0.attn1.out". A tuple output is split by `pick` (default: first element) or, if `pick`
    returns a dict, stored as several entries "<path>.<key>".
    """

    def __init__(self) -> None:
        self.values: dict[str, torch.Tensor] = {}
        self._handles: list = []

    def capture(self, root: torch.nn.Module, paths: dict[str, str], pick=None) -> None:
        modules = dict(root.named_modules())
        for path, suffix in paths.items():
            if path not in modules:
                raise KeyError(f"no module {path!r} to hook")
            self._handles.append(modules[path].register_forward_hook(self._hook(f"{path}.{suffix}", pick)))

    def capture_inputs(self, root: torch.nn.Module, paths: dict[str, str]) -> None:
        """Store the first positional input of each module as "<path>.<suffix>" (a forward pre-hook)."""
        modules = dict(root.named_modules())
        for path, suffix in paths.items():
            if path not in modules:
                raise KeyError(f"no module {path!r} to hook")
            name = f"{path}.{suffix}"
            self._handles.append(modules[path].register_forward_pre_hook(lambda _m, args, n=name: self._store(n, args[0])))

    def _hook(self, name: str, pick):
        def hook(_module, _args, output):
            value = pick(output) if pick is not None else (output[0] if isinstance(output, tuple) else output)
            if isinstance(value, dict):
                for k, v in value.items():
                    self._store(f"{name}.{k}", v)
            else:
                self._store(name, value)

        return hook

    def _store(self, name: str, value: torch.Tensor) -> None:
        if name in self.values:
            raise RuntimeError(f"intermediate {name} captured twice; run one forward per Recorder")
        self.values[name] = value.detach().to(torch.float32).clone()

    def add(self, name: str, value: torch.Tensor) -> None:
        self._store(name, value)

    def close(self) -> None:
        for h in self._handles:
            h.remove()
        self._handles.clear()


def _fp32(t: torch.Tensor) -> torch.Tensor:
    return t.detach().to(torch.float32) if t.is_floating_point() else t.detach()


@dataclass
class GoldenCase:
    """One case directory: tests/golden/<group>/<case>/{manifest.json, weights, inputs, expected}.safetensors."""

    group: str
    case: str
    component: str
    description: str
    generator: str  # repo-relative path of the generator script
    weights: dict[str, torch.Tensor]
    weights_metadata: dict[str, str]  # e.g. {"config": canonical_json({"transformer": {...}})}
    inputs: dict[str, torch.Tensor]
    outputs: dict[str, torch.Tensor]
    intermediates: dict[str, torch.Tensor] = field(default_factory=dict)
    params: dict = field(default_factory=dict)
    tolerance: dict = field(
        default_factory=lambda: {"validation": {"atol": 1e-4, "rtol": 1e-4}, "production": {"atol": 5e-2, "rtol": 5e-2}}
    )
    extra_files: dict[str, str | bytes] = field(default_factory=dict)  # name -> text (an HF config.json) or bytes
    production_rule: dict | None = None  # how the production tolerance was measured (with_measured_production)
    production_media_gates: dict | None = None  # the official bf16 run's decoded-media figures (media_metrics)
    extra_tensors: dict[str, dict[str, torch.Tensor]] = field(default_factory=dict)  # name -> tensors, kept dtype

    def write(self, root: Path) -> Path:
        if self.group not in GROUPS:
            raise ValueError(f"unknown golden group {self.group}")
        clash = set(self.outputs) & set(self.intermediates)
        if clash:
            raise ValueError(f"{self.case}: names both output and intermediate: {sorted(clash)}")
        d = Path(root) / self.group / self.case
        d.mkdir(parents=True, exist_ok=True)
        for old in d.iterdir():  # a case directory holds exactly what this write produces
            if old.is_file():
                old.unlink()
        write_safetensors(d / "weights.safetensors", {k: _fp32(v) for k, v in self.weights.items()}, self.weights_metadata)
        write_safetensors(d / "inputs.safetensors", {k: _fp32(v) for k, v in self.inputs.items()}, {"format": "pt"})
        expected = {k: _fp32(v) for k, v in {**self.outputs, **self.intermediates}.items()}
        write_safetensors(d / "expected.safetensors", expected, {"format": "pt"})
        for name, content in sorted(self.extra_files.items()):
            if isinstance(content, bytes):
                (d / name).write_bytes(content)
            else:
                (d / name).write_text(content)
        for name, tensors in sorted(self.extra_tensors.items()):
            write_safetensors(d / name, tensors)
        manifest = {
            "format": FORMAT_VERSION,
            "component": self.component,
            "case": self.case,
            "description": self.description,
            # The kernel set is the case's: `ltx verify` replays with it (tests/golden/README.md).
            "reference": {**reference_versions(self.generator), "torch_cpu_capability": torch_cpu_capability()},
            "weights": "weights.safetensors",
            "inputs": "inputs.safetensors",
            "expected": "expected.safetensors",
            "params": self.params,
            "outputs": sorted(self.outputs),
            "intermediates": sorted(self.intermediates),
            "tolerance": self.tolerance,
        }
        if self.production_rule is not None:
            manifest["production_tolerance_rule"] = self.production_rule
        if self.production_media_gates is not None:
            manifest["production_media_gates"] = self.production_media_gates
        if self.extra_files or self.extra_tensors:
            manifest["extra_files"] = sorted({**self.extra_files, **self.extra_tensors})
        (d / "manifest.json").write_text(json.dumps(manifest, sort_keys=True, indent=1) + "\n")
        return d


# ---------------------------------------------------------------------------------------------------------------
# Production tolerances, measured against the reference's own bf16 run.
#
# Rule (every case with a production tolerance): the generator makes the case twice with the same code, once in
# float32 (what is written) and once in bfloat16 as ltx-pipelines runs it (ModelLedger(dtype=torch.bfloat16): every
# module's parameters and buffers bf16, the activations it is fed bf16; the same seeded weights, inputs and
# recorded noise, rounded to bf16; positions stay float32, see float32_positions). For every expected tensor
# (outputs and intermediates) the reference's own bf16 error is
#     e_ref = max over the tensor's elements of |bf16 - f32| / (1 + |f32|),
# the smallest t for which the official bf16 run passes the production check |a - e| <= t + t·|e|. The tensor's
# production tolerance is atol = rtol = max(validation tolerance, PRODUCTION_FACTOR · e_ref), the product rounded
# up to two significant digits (manifest tolerance.production_per_tensor; tolerance.production is their maximum). Production precision therefore means "no worse than PRODUCTION_FACTOR times the
# official bf16 module"; a production result that matches f32 is never failed (the validation floor).
# PRODUCTION_FACTOR is 2 because the engine's bf16 roundings fall at other points than torch's (fused elementwise
# passes, other accumulation orders): its error is an independent sample of the same size, whose worst element can
# exceed the reference's worst one; twice the reference's worst element bounds that while still failing an engine
# that rounds more, or more often, than the official module. The measurement is stored in the manifest
# ("production_tolerance_rule").
PRODUCTION_FACTOR = 2.0


@dataclass
class _ReferenceRun:
    dtype: torch.dtype = torch.float32
    draws: list = field(default_factory=list)  # float32 run: every recorded noise draw, in order
    replay: list | None = None  # bfloat16 run: the float32 run's draws, replayed in order


_RUN = _ReferenceRun()


def reference_dtype() -> torch.dtype:
    """The dtype the reference modules run in: float32 for the written case, bfloat16 for the measuring run."""
    return _RUN.dtype


def to_reference(x):
    """Floating tensors (also inside tuples, lists and dicts) in the reference dtype; anything else unchanged. As
    the pipelines feed a bf16 module: latents, contexts, hidden states and decoder inputs are bf16 there."""
    if isinstance(x, torch.Tensor):
        return x.to(_RUN.dtype) if x.is_floating_point() else x
    if isinstance(x, tuple):
        return tuple(to_reference(v) for v in x)
    if isinstance(x, list):
        return [to_reference(v) for v in x]
    if isinstance(x, dict):
        return {k: to_reference(v) for k, v in x.items()}
    return x


def module_to_reference(module: torch.nn.Module) -> torch.nn.Module:
    """The module's state dict (parameters and persistent buffers) in the reference dtype, as ltx-core's
    SingleGPUModelBuilder.build(dtype) loads it (load_state_dict(assign=True) of the cast state dict); buffers that
    are not in the state dict (e.g. RoPE inverse frequencies) keep the dtype their constructor gave them."""
    if _RUN.dtype != torch.float32:
        sd = module.state_dict()
        module.load_state_dict({k: v.to(_RUN.dtype) if v.is_floating_point() else v for k, v in sd.items()}, assign=True)
    return module


@contextlib.contextmanager
def record_randn(draws: list):
    """Records every float32 torch.randn drawn from an explicit generator (a pipeline's or a decoder's noise) in
    call order into `draws` (float32 run). In the bfloat16 measuring run the same draws are replayed instead, in the
    requested dtype, so both runs see the same noise; `draws` then receives the float32 values again."""
    original = torch.randn

    def wrapped(*args, **kwargs):
        # float64 draws are the res_2s sampler's SDE noise, from generators of its own with fixed seeds: made live in
        # both runs, and by the engine itself bit for bit (tests/data/noise/randn_f64.txt), so never recorded.
        if kwargs.get("generator") is None or kwargs.get("dtype") == torch.float64:
            return original(*args, **kwargs)
        if _RUN.replay is None:
            t = original(*args, **kwargs)
            draws.append(t.detach().clone())
            _RUN.draws.append(draws[-1])
            return t
        if not _RUN.replay:
            raise RuntimeError("bf16 reference run: more noise draws than the float32 run made")
        t = _RUN.replay.pop(0)
        shape = tuple(args[0]) if len(args) == 1 and isinstance(args[0], (tuple, list, torch.Size)) else tuple(args)
        if tuple(t.shape) != shape:
            raise RuntimeError(f"bf16 reference run: noise draw of shape {shape}, the float32 run drew {tuple(t.shape)}")
        draws.append(t.clone())
        return t.to(kwargs.get("dtype") or torch.get_default_dtype())

    torch.randn = wrapped
    try:
        yield
    finally:
        torch.randn = original


@contextlib.contextmanager
def float32_positions():
    """In the bf16 measuring run, latent states keep float32 positions. ltx-core 1.0.0's
    Video/AudioLatentTools.create_initial_state cast the positions to the pipeline dtype (ltx_core/tools.py:
    `positions=positions.to(dtype)`); at bf16 that rounding of the coordinates (seconds = frame/fps and pixels) alone
    moves the high-frequency RoPE phases so far that the reference's own sin/cos tables differ from its float32 ones
    by up to 1.0, and every DiT output with them: measured with bf16 positions, the rule would give the DiT cases
    production tolerances of 2-4, which nothing fails. The goldens give the engine the float32 positions and it
    computes RoPE in float32 in both precisions, so the measurement is of the modules' bf16 weights and activations
    only: the latent is still rounded to bf16, the positions are not."""
    from ltx_core import tools

    originals = {}
    for cls in (tools.VideoLatentTools, tools.AudioLatentTools):
        originals[cls] = cls.create_initial_state

        def create_initial_state(self, device, dtype, initial_latent=None, _original=originals[cls]):
            latent = None if initial_latent is None else initial_latent.to(torch.float32)
            state = _original(self, device, torch.float32, latent)
            return dataclasses.replace(state, latent=state.latent.to(dtype), clean_latent=state.clean_latent.to(dtype))

        cls.create_initial_state = create_initial_state
    try:
        yield
    finally:
        for cls, original in originals.items():
            cls.create_initial_state = original


def reference_bf16_errors(f32: dict[str, torch.Tensor], bf16: dict[str, torch.Tensor]) -> dict[str, float]:
    """Per expected tensor: max over its elements of |bf16 - f32| / (1 + |f32|)."""
    errors = {}
    for name in sorted(f32):
        if name not in bf16:
            raise RuntimeError(f"bf16 reference run did not produce {name}")
        e, b = f32[name].detach().double(), bf16[name].detach().double()
        if e.shape != b.shape:
            raise RuntimeError(f"{name}: bf16 run shape {tuple(b.shape)} vs float32 {tuple(e.shape)}")
        if not torch.isfinite(b).all():
            raise RuntimeError(f"{name}: the bf16 reference run is not finite")
        errors[name] = ((b - e).abs() / (1.0 + e.abs())).max().item() if e.numel() else 0.0
    return errors


def _frames_unit(decoded: torch.Tensor) -> np.ndarray:
    """A decoder output [B,3,F,H,W] in [-1,1] as the frames a person sees: [B*F,H,W,3] in [0,1]."""
    x = ((decoded.detach().double() + 1.0) / 2.0).clamp(0.0, 1.0)
    return x.permute(0, 2, 3, 4, 1).reshape(-1, x.shape[3], x.shape[4], x.shape[1]).numpy()


def _ssim_plane(a: np.ndarray, b: np.ndarray) -> float:
    """SSIM of one plane as src/verify/media_metrics.cpp defines it: an 11-tap Gaussian window (sigma 1.5; smaller,
    odd, on planes under 11 pixels) over the valid region, C1 = 0.01^2, C2 = 0.03^2, averaged."""
    k = max(1, (min(11, *a.shape) - 1) // 2 * 2 + 1)
    g = np.exp(-((np.arange(k) - k // 2) ** 2) / (2 * 1.5**2))
    g /= g.sum()

    def filt(x):
        rows = np.stack([np.convolve(r, g[::-1], mode="valid") for r in x])
        return np.stack([np.convolve(c, g[::-1], mode="valid") for c in rows.T]).T

    ma, mb = filt(a), filt(b)
    va, vb, cov = filt(a * a) - ma * ma, filt(b * b) - mb * mb, filt(a * b) - ma * mb
    c1, c2 = 0.01**2, 0.03**2
    return float(np.mean((2 * ma * mb + c1) * (2 * cov + c2) / ((ma * ma + mb * mb + c1) * (va + vb + c2))))


def media_metrics(name: str, test: torch.Tensor, ref: torch.Tensor) -> dict[str, float] | None:
    """Issue 19's end-to-end figures of `test` against `ref` for a decoded video (PSNR, SSIM of the frames in
    [0,1]) or waveform (relative L2, cosine), as src/verify/media_metrics.cpp computes them; None for other tensors."""
    if name == "video.decoded":
        a, b = _frames_unit(test), _frames_unit(ref)
        mse = float(np.mean((a - b) ** 2))
        psnr = float("inf") if mse == 0 else 10 * math.log10(1.0 / mse)
        ssim = float(np.mean([_ssim_plane(a[f, :, :, c], b[f, :, :, c]) for f in range(a.shape[0])
                              for c in range(a.shape[3])]))
        return {"psnr_db": round(psnr, 4), "ssim": round(ssim, 6)}
    if name in ("audio.waveform", "waveform"):  # a pipeline's decoded audio, a vocoder case's output
        a, b = test.detach().double().flatten(), ref.detach().double().flatten()
        rel = float((a - b).norm() / b.norm())
        cos = float(a.dot(b) / (a.norm() * b.norm()))
        return {"rel_l2": round(rel, 6), "cosine": round(cos, 6)}
    return None


def round_up_2(x: float) -> float:
    """x rounded up to two significant digits (0 stays 0)."""
    if x <= 0:
        return 0.0
    exp = math.floor(math.log10(x)) - 1
    mant = math.ceil(round(x / 10.0**exp, 9))
    return float(f"{mant}e{exp}")


def production_tolerance(validation: dict, e_ref: float) -> dict:
    t = round_up_2(PRODUCTION_FACTOR * e_ref)
    return {"atol": max(validation["atol"], t), "rtol": max(validation["rtol"], t)}


def with_measured_production(make: Callable[[], "GoldenCase"]) -> "GoldenCase":
    """Makes the case (float32), makes it again in bfloat16 with the same seeds and noise, and sets its production
    tolerance from the difference by the rule above. The global torch RNG continues as after the float32 run, so
    the written case is byte-identical to what `make()` alone writes."""
    if _RUN.replay is not None or _RUN.dtype != torch.float32:
        raise RuntimeError("with_measured_production does not nest")
    rng = torch.get_rng_state()
    _RUN.draws = []
    case = make()
    after, draws = torch.get_rng_state(), _RUN.draws
    torch.set_rng_state(rng)
    _RUN.dtype, _RUN.replay, _RUN.draws = torch.bfloat16, list(draws), []
    try:
        with float32_positions():
            bf16 = make()
        if _RUN.replay:
            raise RuntimeError(f"{case.case}: the bf16 run drew {len(draws) - len(_RUN.replay)} of {len(draws)} noises")
    finally:
        _RUN.dtype, _RUN.replay, _RUN.draws = torch.float32, None, []
    torch.set_rng_state(after)
    errors = reference_bf16_errors({**case.outputs, **case.intermediates}, {**bf16.outputs, **bf16.intermediates})
    worst = max(errors, key=lambda n: errors[n])
    validation = case.tolerance["validation"]
    case.tolerance = {
        "validation": validation,
        "production": production_tolerance(validation, errors[worst]),
        # Each tensor against its own reference error (the case-wide value above is their maximum).
        "production_per_tensor": {n: production_tolerance(validation, e) for n, e in sorted(errors.items())},
    }
    case.production_rule = {
        "rule": "per expected tensor, production atol = rtol = max(validation, factor * reference_bf16_error rounded "
        "up to 2 significant digits); reference_bf16_error = max |bf16 - f32| / (1 + |f32|) over the tensor, the "
        "bf16 run being the same case made by the reference in bfloat16 as ltx-pipelines runs it, with float32 "
        "positions (tools/reference/golden_case.py)",
        "factor": PRODUCTION_FACTOR,
        "reference_bf16_error": float(f"{errors[worst]:.4g}"),
        "reference_bf16_worst_tensor": worst,
    }
    # The decoded media's figures for the official bf16 run against its float32 run: where they miss issue 19's
    # gates, the engine's production run is held to "no worse than the official bf16 run" (ltx verify --gates).
    gates = {n: m for n in sorted(case.outputs) if (m := media_metrics(n, bf16.outputs[n], case.outputs[n]))}
    if gates:
        case.production_media_gates = gates
    return case


def file_digest(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()

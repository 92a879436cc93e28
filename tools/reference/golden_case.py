"""Shared writer for golden test cases (format 1, documented in tests/golden/README.md).

Every generator in tools/reference builds a tiny module from the official code, fills its parameters with
`seeded_init_`, runs it on seeded inputs while `Recorder` captures named intermediates, and hands the result to
`GoldenCase.write`. Files are written by our own safetensors writer so that the bytes depend only on the tensors
(sorted keys, fixed header, no hash-ordered metadata), which is what tools/reference/check_goldens.sh compares.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import struct
import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch

FORMAT_VERSION = 1
GROUPS = ("text", "dit", "vae", "audio", "upsampler", "schedule", "pipeline")

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
    extra_files: dict[str, str] = field(default_factory=dict)  # name -> text (e.g. an HF config.json)

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
        for name, text in sorted(self.extra_files.items()):
            (d / name).write_text(text)
        manifest = {
            "format": FORMAT_VERSION,
            "component": self.component,
            "case": self.case,
            "description": self.description,
            "reference": reference_versions(self.generator),
            "weights": "weights.safetensors",
            "inputs": "inputs.safetensors",
            "expected": "expected.safetensors",
            "params": self.params,
            "outputs": sorted(self.outputs),
            "intermediates": sorted(self.intermediates),
            "tolerance": self.tolerance,
        }
        if self.extra_files:
            manifest["extra_files"] = sorted(self.extra_files)
        (d / "manifest.json").write_text(json.dumps(manifest, sort_keys=True, indent=1) + "\n")
        return d


def file_digest(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()

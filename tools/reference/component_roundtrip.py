"""Builds an official ltx-core component the way the official pipelines do, through a checkpoint file.

Used by the VAE, audio and upsampler generators. For a tiny `config` (same structure as a real checkpoint's
metadata `config`), `roundtrip` does:
  1. construct the module with the official configurator (`XConfigurator.from_config(config)`),
  2. fill parameters (and the buffers the caller names) with seeded values,
  3. name the state dict as in the real single-file checkpoint (`vae.decoder.…`, `audio_vae.encoder.…`,
     `vocoder.…`, or no prefix for an upsampler file),
  4. write it with the `config` metadata, and load it back through ltx-core's `SingleGPUModelBuilder` with the
     official key filter (SDOps) — exactly the loader ModelLedger uses,
  5. check that every parameter and buffer of the loaded module came from the file.
The golden case then runs the *loaded* module, so a case whose keys or config were wrong cannot be written.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path

import torch
from golden_case import (
    InitRule,
    canonical_json,
    name_seed,
    reference_dtype,
    seeded_init_,
    seeded_randn,
    seeded_uniform,
    write_safetensors,
)
from ltx_core.loader.single_gpu_model_builder import SingleGPUModelBuilder

KeyMap = Callable[[str], str]


def stats_rule(name: str, shape: tuple[int, ...], seed: int) -> torch.Tensor | None:
    """Per-channel latent statistics: std-of-means positive (0.5..1.5), mean-of-means N(0, 0.3²)."""
    if name.endswith("std-of-means"):
        return seeded_uniform(shape, seed, 0.5, 1.5)
    if name.endswith("mean-of-means"):
        return seeded_randn(shape, seed, 0.3)
    return None


def init_buffers_(module: torch.nn.Module, seed: int, names: Iterable[str], rules: Iterable[InitRule]) -> None:
    """Seed the named floating buffers (e.g. latent statistics); all other buffers keep their constructed values
    (anti-aliasing filters, blur kernels), which are the fixed constants a real checkpoint stores."""
    rules = list(rules)
    wanted = set(names)
    found = set()
    with torch.no_grad():
        for name, buf in sorted(module.named_buffers(), key=lambda kv: kv[0]):
            if name not in wanted:
                continue
            found.add(name)
            s = name_seed(seed, name)
            value = None
            for rule in rules:
                value = rule(name, tuple(buf.shape), s)
                if value is not None:
                    break
            if value is None:
                raise ValueError(f"no init rule for buffer {name}")
            buf.copy_(value.to(buf.dtype))
    missing = wanted - found
    if missing:
        raise KeyError(f"buffers not found: {sorted(missing)}")


def checkpoint_state_dict(module: torch.nn.Module, key_map: KeyMap) -> dict[str, torch.Tensor]:
    """The module's persistent state dict under checkpoint names (fp32, detached copies)."""
    return {key_map(k): v.detach().to(torch.float32).clone() for k, v in module.state_dict().items()}


def load_official(
    weights: dict[str, torch.Tensor], config: dict, configurator: type, sd_ops
) -> torch.nn.Module:
    """Write `weights` + metadata `config` to a temporary safetensors file and build the component from it with
    ltx-core's SingleGPUModelBuilder (meta-device construction + load_state_dict(assign=True)) in the reference
    dtype (float32; bfloat16 in the run that measures the production tolerance, as ModelLedger builds it)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "ckpt.safetensors"
        write_safetensors(path, weights, {"config": canonical_json(config)})
        builder = SingleGPUModelBuilder(model_class_configurator=configurator, model_path=str(path), model_sd_ops=sd_ops)
        model = builder.build(device=torch.device("cpu"), dtype=reference_dtype())
    on_meta = [n for n, p in model.named_parameters() if p.device.type == "meta"]
    on_meta += [n for n, b in model.named_buffers() if b.device.type == "meta"]
    if on_meta:
        raise RuntimeError(f"{configurator.__name__}: not loaded from the checkpoint: {on_meta}")
    return model.eval()


def roundtrip(
    config: dict,
    configurator: type,
    sd_ops,
    key_map: KeyMap,
    seed: int,
    rules: Iterable[InitRule] = (),
    seeded_buffers: Iterable[str] = (),
    fill: Callable[[torch.nn.Module], None] | None = None,
) -> tuple[torch.nn.Module, dict[str, torch.Tensor]]:
    """Returns (module loaded through the official loader, checkpoint-named weights)."""
    rules = list(rules)
    module = configurator.from_config(config)
    seeded_init_(module, seed, rules)
    init_buffers_(module, seed, seeded_buffers, rules)
    if fill is not None:
        fill(module)
    weights = checkpoint_state_dict(module, key_map)
    loaded = load_official(weights, config, configurator, sd_ops)
    # The loaded module must hold exactly the tensors we generated (rounded to the reference dtype).
    for k, v in loaded.state_dict().items():
        if not torch.equal(v, module.state_dict()[k].to(v.dtype)):
            raise RuntimeError(f"{configurator.__name__}: {k} differs after loading")
    return loaded, weights


def prefixed(prefix: str) -> KeyMap:
    return lambda k: prefix + k

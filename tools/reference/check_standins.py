"""Checks `ltx synth` stand-ins against the reference, once (not run by CI; results go in a note).

1. Headers: every stand-in's tensor names, shapes and dtypes, and its `config` metadata, as ltx-core reads them. Each
   module ltx-pipelines' ModelLedger builds from the file is built by ltx-core's configurator from the file's own
   metadata on torch's meta device (no weights), every file key goes through the ledger's key map (SDOps) with a meta
   tensor of the file's shape and dtype, and the result must cover the module's state dict with equal shapes and the
   dtypes the published files have: bf16 everywhere but the DiT's AdaLN tables (F32), and for the fp8 file ltx-core's fp8-scaled-mm policy
   (ltx_core/quantization: FP8Linear weights float8_e4m3fn [in, out] after FP8_TRANSPOSE_SD_OPS, float32 scalar
   weight_scale/input_scale). Gemma: transformers' Gemma3ForConditionalGeneration (what ltx-core's
   GemmaTextEncoderConfigurator builds) from the folder's config.json, against the shards named by
   model.safetensors.index.json through GEMMA_LLM_KEY_OPS.
2. A 4-block cut (`ltx synth --layers 4`, seeded values) loaded into ltx-core's LTXModel, one X0Model call on 48 video
   and 5 audio tokens, written as a golden DiT case (tests/golden/README.md, production bounds measured as for the
   committed cases), then `ltx verify` on it in production and validation precision.

    /tmp/venv-ref/bin/python tools/reference/check_standins.py build/ltx /tmp/refcheck [--keep]

The work folder needs ~13 GB free (the seeded cut; the full-size stand-ins are sparse zeros) and the process ~12 GB
of memory (the cut's DiT in float32). Stand-ins are deleted at the end unless --keep (the case's weights link then
dangles). Exit status 1 when a check fails.
"""

from __future__ import annotations

import argparse
import json
import shutil
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from golden_case import (  # noqa: E402
    GoldenCase,
    reference_dtype,
    seeded_randn,
    setup_determinism,
    with_measured_production,
)
from make_dit_goldens import (  # noqa: E402
    AV_TIMESTEP_SEMANTICS,
    CONTEXT_TOKENS,
    FPS,
    PREFIX,
    TOLERANCE,
    _modality,
    make_states,
    run_and_record,
)
from make_layouts import ltx_parts, meta_build, siglip_legacy_hop  # noqa: E402

ST_DTYPES = {"BF16": torch.bfloat16, "F16": torch.float16, "F32": torch.float32, "F8_E4M3": torch.float8_e4m3fn,
             "I64": torch.int64}
CUT_LAYERS = 4
SIGMA = 0.5
VIDEO_SHAPE = (128, 2, 4, 6)  # channels, frames, height, width: 48 tokens
AUDIO_SHAPE = (8, 5, 16)  # channels, frames, mel bins: 5 tokens of 128


def synth(ltx: str, out: Path, *args: str) -> None:
    r = subprocess.run([ltx, "synth", "--out", str(out), *args], capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"ltx synth {' '.join(args)} failed:\n{r.stderr}")


def read_header(path: Path) -> tuple[dict[str, tuple[torch.dtype, list[int]]], dict[str, str]]:
    """{name: (dtype, shape)} and __metadata__ of a safetensors file: 8-byte little-endian length, then JSON."""
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(n))
    meta = header.pop("__metadata__", {})
    return {k: (ST_DTYPES[v["dtype"]], v["shape"]) for k, v in header.items()}, meta


def map_keys(sd_ops, header: dict) -> dict[str, tuple[str, torch.Tensor]]:
    """{module key: (file key, meta value)}: what ltx-core's loader makes of each file tensor
    (ltx_core/loader/sft_loader.py: apply_to_key, then apply_to_key_value), with meta tensors instead of data."""
    out = {}
    for fk, (dtype, shape) in header.items():
        name = sd_ops.apply_to_key(fk)
        if name is None:
            continue
        for key, value in sd_ops.apply_to_key_value(name, torch.empty(shape, dtype=dtype, device="meta")):
            out[key] = (fk, value)
    return out


def compare(label: str, module: torch.nn.Module, mapped: dict, expected_dtype) -> tuple[bool, set[str]]:
    """Prints what `module` gets from the file; returns whether it gets all of it right, and the file keys it loads."""
    sd = module.state_dict()
    missing = sorted(set(sd) - set(mapped))
    ignored = sorted(k for k in mapped if k not in sd)  # the key map accepts them; strict=False drops them
    shapes = [f"{k}: file {list(mapped[k][1].shape)} model {list(sd[k].shape)}" for k in sd
              if k in mapped and mapped[k][1].shape != sd[k].shape]
    dtypes = [f"{k}: {mapped[k][1].dtype} (want {expected_dtype(k, sd[k])})" for k in sd
              if k in mapped and mapped[k][1].dtype != expected_dtype(k, sd[k])]
    ok = not (missing or shapes or dtypes)
    print(f"  {'ok  ' if ok else 'FAIL'} {label:26s} model {len(sd):5d}  loaded {len(sd) - len(missing):5d}  missing "
          f"{len(missing)}  shape {len(shapes)}  dtype {len(dtypes)}  (mapped but no such tensor: {len(ignored)})")
    for line in (missing[:10] + shapes[:10] + dtypes[:10]):
        print(f"       {line}")
    return ok, {mapped[k][0] for k in sd if k in mapped}


def check_ltx_file(path: Path, fp8: bool) -> bool:
    from ltx_core.loader.sd_ops import SDOps
    from ltx_core.quantization import FP8_PREPARE_MODULE_OPS, FP8_TRANSPOSE_SD_OPS
    from ltx_core.quantization.fp8_scaled_mm import FP8Linear

    header, meta = read_header(path)
    config = json.loads(meta["config"])
    print(f"{path.name}: {len(header)} tensors, metadata keys {sorted(meta)}, "
          f"{config['transformer']['num_layers']} layers")
    claimed: set[str] = set()
    all_ok = True
    for name, configurator, sd_ops, _ in ltx_parts():
        module = meta_build(configurator, config)
        fp8_keys: set[str] = set()
        if fp8 and name == "transformer":
            # QuantizationPolicy.fp8_scaled_mm() without its tensorrt_llm import check: the same two ops, chained
            # after the checkpoint's key map as ModelLedger.transformer() chains them.
            module = FP8_PREPARE_MODULE_OPS.mutator(module)
            chained = (*sd_ops.mapping, *FP8_TRANSPOSE_SD_OPS.mapping)
            sd_ops = SDOps(f"{sd_ops.name}+{FP8_TRANSPOSE_SD_OPS.name}", chained)
            fp8_keys = {f"{n}.{p}" for n, m in module.named_modules() if isinstance(m, FP8Linear)
                        for p in ("weight", "weight_scale", "input_scale")}
        # FP8Linear's own tensors keep their dtype; the rest is as published (ModelLedger casts to its dtype):
        # the transformer's AdaLN tables float32 (diffusers PR #13918), everything else bf16.
        def want(k, t, fp8_keys=fp8_keys, name=name):
            if k in fp8_keys:
                return t.dtype
            return torch.float32 if name == "transformer" and "scale_shift_table" in k else torch.bfloat16
        ok, keys = compare(name, module, map_keys(sd_ops, header), want)
        all_ok, claimed = all_ok and ok, claimed | keys
        if fp8_keys:
            print(f"       fp8 policy: {len(fp8_keys) // 3} FP8Linear layers")
    unclaimed = sorted(set(header) - claimed)
    print(f"  file keys no module loads: {len(unclaimed)} {unclaimed[:10]}")
    return all_ok


def check_gemma(folder: Path) -> bool:
    from ltx_core.text_encoders.gemma import GEMMA_LLM_KEY_OPS, GemmaTextEncoderConfigurator
    from ltx_core.text_encoders.gemma.encoders.encoder_configurator import GEMMA_MODEL_OPS
    from ltx_core.text_encoders.gemma.encoders.base_encoder import GemmaTextEncoder
    from transformers import Gemma3Config, Gemma3ForConditionalGeneration

    index = json.loads((folder / "model.safetensors.index.json").read_text())["weight_map"]
    header: dict = {}
    ok = True
    for shard in sorted(set(index.values())):
        tensors, _ = read_header(folder / shard)
        stray = sorted(k for k in tensors if index.get(k) != shard)
        header.update(tensors)
        if stray:
            ok = False
            print(f"  FAIL {shard}: {len(stray)} tensors the index does not place there: {stray[:5]}")
    absent = sorted(set(index) - set(header))
    print(f"{folder.name}: {len(set(index.values()))} shards, {len(header)} tensors, index entries not in any shard: "
          f"{len(absent)} {absent[:5]}")
    ok = ok and not absent
    config = Gemma3Config.from_pretrained(folder)
    with torch.device("meta"):
        module = GemmaTextEncoder(model=Gemma3ForConditionalGeneration(config))
    # ltx-core builds Gemma from its own GEMMA3_CONFIG_FOR_LTX, not from config.json: the two must agree.
    ref = meta_build(GemmaTextEncoderConfigurator, {}).state_dict()
    same = {k: list(v.shape) for k, v in ref.items()} == {k: list(v.shape) for k, v in module.state_dict().items()}
    print(f"  config.json model == ltx-core's GEMMA3_CONFIG_FOR_LTX model (names, shapes): {same}")
    bf16 = lambda k, t: torch.bfloat16  # noqa: E731
    # Informational: ltx-core 1.0.0 maps the published `vision_tower.vision_model.*` names as they are, but
    # transformers >= 5 flattened SiglipVisionModel's `vision_model` level, so the vision tower finds nothing there.
    compare("(info) GEMMA_LLM_KEY_OPS", module, map_keys(GEMMA_LLM_KEY_OPS, header), bf16)
    # The check: the same names after transformers' own conversion for old checkpoints (what from_pretrained does).
    hop = f"vision_tower.{siglip_legacy_hop()}."
    renamed = {k.replace(hop, "vision_tower.", 1): v for k, v in header.items()}
    ok = compare("+ transformers' SigLIP", module, map_keys(GEMMA_LLM_KEY_OPS, renamed), bf16)[0] and ok and same
    try:  # ModelLedger's text encoder module op, also written against the unflattened tree
        GEMMA_MODEL_OPS.mutator(meta_build(GemmaTextEncoderConfigurator, {}))
        print("  GEMMA_MODEL_OPS: ok")
    except AttributeError as e:
        print(f"  GEMMA_MODEL_OPS fails with this transformers: AttributeError: {e}")
    return ok


def load_dit(path: Path, dtype: torch.dtype) -> torch.nn.Module:
    """The file's DiT as SingleGPUModelBuilder.build(dtype) loads it, on the CPU."""
    from ltx_core.model.transformer import LTXV_MODEL_COMFY_RENAMING_MAP, LTXModelConfigurator
    from safetensors import safe_open

    with safe_open(str(path), framework="pt") as f:
        config = json.loads(f.metadata()["config"])
        assert config["transformer"]["num_layers"] == CUT_LAYERS, config["transformer"]["num_layers"]
        model = meta_build(LTXModelConfigurator, config)
        keys = set(model.state_dict())
        sd = {}
        for fk in f.keys():
            name = LTXV_MODEL_COMFY_RENAMING_MAP.apply_to_key(fk)
            if name in keys:
                sd[name] = f.get_tensor(fk).to(dtype)
    model.load_state_dict(sd, strict=True, assign=True)
    return model.eval()


def cut_case(path: Path) -> GoldenCase:
    """One DiT call on the cut (float32 for the case, bfloat16 when with_measured_production measures)."""
    from ltx_core.guidance.perturbations import BatchedPerturbationConfig

    model = load_dit(path, reference_dtype())
    v_state, a_state, _ = make_states(1, 50_000, SIGMA, SIGMA, video_shape=VIDEO_SHAPE, audio_shape=AUDIO_SHAPE)
    tc = json.loads(read_header(path)[1]["config"])["transformer"]
    v_ctx = seeded_randn((1, CONTEXT_TOKENS, tc["num_attention_heads"] * tc["attention_head_dim"]), 50_010)
    a_ctx = seeded_randn((1, CONTEXT_TOKENS, tc["audio_num_attention_heads"] * tc["audio_attention_head_dim"]), 50_020)
    video, audio = _modality(v_state, v_ctx, SIGMA, 1), _modality(a_state, a_ctx, SIGMA, 1)
    inputs, outputs, intermediates = run_and_record(model, video, audio, BatchedPerturbationConfig.empty(1))
    params = {
        "style": "LTX-2.3",
        "model_type": "audio_video",
        "weights_prefix": PREFIX,
        "fps": FPS,
        "video_latent_shape": [1, *VIDEO_SHAPE],
        "audio_latent_shape": [1, *AUDIO_SHAPE],
        "perturbations": [[]],
        "context_mask": None,
        "denoised": "x0 = latent - velocity * timesteps per token, in fp32 (X0Model / to_denoised)",
        "av_timestep_semantics": AV_TIMESTEP_SEMANTICS,
    }
    return GoldenCase(
        group="dit", case="case_cut4", component="dit", generator="tools/reference/check_standins.py",
        description=f"ltx synth ltx-2.3-22b bf16 --layers {CUT_LAYERS} (full width, seed 0), sigma {SIGMA}: "
                    "48 video and 5 audio tokens; weights.safetensors links to the stand-in",
        weights={}, weights_metadata={}, inputs=inputs, outputs=outputs, intermediates=intermediates, params=params,
        tolerance=TOLERANCE,
    )


def write_cut_case(path: Path, out: Path) -> None:
    setup_determinism(0)
    torch.set_num_threads(2)
    case = with_measured_production(lambda: cut_case(path))
    with tempfile.TemporaryDirectory(dir=out.parent) as tmp:
        d = case.write(Path(tmp))
        shutil.rmtree(out, ignore_errors=True)
        shutil.move(str(d), out)
    (out / "weights.safetensors").unlink()
    (out / "weights.safetensors").symlink_to(path.resolve())
    rule = case.production_rule
    print(f"{out}: {len(case.outputs)} outputs, {len(case.intermediates)} intermediates; reference bf16 error "
          f"{rule['reference_bf16_error']} at {rule['reference_bf16_worst_tensor']}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("ltx", help="the ltx binary")
    ap.add_argument("work", type=Path, help="folder for the stand-ins and the case")
    ap.add_argument("--keep", action="store_true", help="keep the stand-ins")
    args = ap.parse_args()
    start = time.monotonic()
    torch.set_num_threads(2)
    work = args.work
    failed = 0
    files = {
        "ltx23_bf16": (["--model", "ltx-2.3-22b", "--format", "bf16"], "ltx-2.3-22b-dev.safetensors", False),
        "ltx23_fp8": (["--model", "ltx-2.3-22b", "--format", "fp8"], "ltx-2.3-22b-dev-fp8.safetensors", True),
        "ltx2_bf16": (["--model", "ltx-2-19b", "--format", "bf16"], "ltx-2-19b-dev.safetensors", False),
    }
    print("== 1. headers through ltx-core's configurators and key maps (meta device)")
    for folder, (flags, name, fp8) in files.items():
        synth(args.ltx, work / folder, *flags, "--zeros")
        failed += not check_ltx_file(work / folder / name, fp8)
    synth(args.ltx, work / "gemma", "--model", "gemma-3-12b", "--format", "hf-bf16", "--zeros")
    failed += not check_gemma(work / "gemma" / "gemma-3-12b-it")
    print(f"   ({time.monotonic() - start:.0f} s)")

    print(f"== 2. {CUT_LAYERS}-block cut: one ltx-core DiT call, then ltx verify")
    cut = work / "cut4" / "ltx-2.3-22b-dev.safetensors"
    synth(args.ltx, cut.parent, "--model", "ltx-2.3-22b", "--format", "bf16", "--layers", str(CUT_LAYERS))
    write_cut_case(cut, work / "case_cut4")
    print(f"   ({time.monotonic() - start:.0f} s)")
    for precision in ("production", "validation"):
        cmd = [args.ltx, "verify", str(work / "case_cut4"), "--precision", precision, "--verbose"]
        print("$ " + " ".join(cmd), flush=True)
        failed += subprocess.run(cmd).returncode != 0
        print(f"   ({time.monotonic() - start:.0f} s)", flush=True)
    if not args.keep:
        for folder in [*files, "gemma", "cut4"]:
            shutil.rmtree(work / folder, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())

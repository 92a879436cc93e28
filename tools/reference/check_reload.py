"""Reload every dit and text/connectors golden case from its files alone, through ltx_core's own checkpoint key maps
(LTXV_MODEL_COMFY_RENAMING_MAP, EMBEDDINGS_PROCESSOR_KEY_OPS) and configurators reading the `config` metadata, run
it on inputs.safetensors and compare with expected.safetensors. Shows that a case holds everything an engine needs:
the official key names and config, and the exact inputs the model consumed.

    .venv/bin/python tools/reference/check_reload.py [golden_root]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import torch

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from golden_case import read_safetensors, setup_determinism  # noqa: E402


def check_dit(d: Path) -> float:
    from ltx_core.guidance.perturbations import (
        BatchedPerturbationConfig,
        Perturbation,
        PerturbationConfig,
        PerturbationType,
    )
    from ltx_core.model.transformer.modality import Modality
    from ltx_core.model.transformer.model import X0Model
    from ltx_core.model.transformer.model_configurator import (
        LTXV_MODEL_COMFY_RENAMING_MAP,
        LTXModelConfigurator,
        LTXVideoOnlyModelConfigurator,
    )

    manifest = json.loads((d / "manifest.json").read_text())
    weights, meta = read_safetensors(d / "weights.safetensors")
    configurator = LTXVideoOnlyModelConfigurator if manifest["params"]["model_type"] == "video_only" else LTXModelConfigurator
    model = configurator.from_config(json.loads(meta["config"])).to_empty(device="cpu").float().eval()
    model.load_state_dict({LTXV_MODEL_COMFY_RENAMING_MAP.apply_to_key(k): v for k, v in weights.items()}, strict=True)
    inputs, expected = read_safetensors(d / "inputs.safetensors")[0], read_safetensors(d / "expected.safetensors")[0]
    mods = {
        s: Modality(
            latent=inputs[f"{s}.latent"],
            sigma=inputs[f"{s}.sigma"],
            timesteps=inputs[f"{s}.timesteps"],
            positions=inputs[f"{s}.positions"],
            context=inputs[f"{s}.context"],
            attention_mask=inputs.get(f"{s}.attention_mask"),
        )
        for s in ("video", "audio")
        if f"{s}.latent" in inputs
    }
    pert = BatchedPerturbationConfig(
        [
            PerturbationConfig([Perturbation(PerturbationType(t), blocks) for t, blocks in sample])
            for sample in manifest["params"]["perturbations"]
        ]
    )
    with torch.no_grad():
        out = dict(zip(("video", "audio"), X0Model(model)(mods.get("video"), mods.get("audio"), pert)))
    return max((out[s] - expected[f"{s}.denoised"]).abs().max().item() for s in mods)


def check_connectors(d: Path) -> float:
    from ltx_core.text_encoders.gemma.embeddings_connector import (
        AudioEmbeddings1DConnectorConfigurator,
        Embeddings1DConnectorConfigurator,
    )
    from ltx_core.text_encoders.gemma.embeddings_processor import EmbeddingsProcessor, convert_to_additive_mask
    from ltx_core.text_encoders.gemma.encoders.encoder_configurator import EMBEDDINGS_PROCESSOR_KEY_OPS

    weights, meta = read_safetensors(d / "weights.safetensors")
    cfg = json.loads(meta["config"])
    proc = EmbeddingsProcessor(
        video_connector=Embeddings1DConnectorConfigurator.from_config(cfg),
        audio_connector=AudioEmbeddings1DConnectorConfigurator.from_config(cfg),
    ).eval()
    proc.load_state_dict({EMBEDDINGS_PROCESSOR_KEY_OPS.apply_to_key(k): v for k, v in weights.items()}, strict=True)
    inputs, expected = read_safetensors(d / "inputs.safetensors")[0], read_safetensors(d / "expected.safetensors")[0]
    with torch.no_grad():
        mask = convert_to_additive_mask(inputs["attention_mask"], torch.float32)
        v, a, _ = proc.create_embeddings(inputs["video_features"], inputs["audio_features"], mask)
    return max((v - expected["video_encoding"]).abs().max().item(), (a - expected["audio_encoding"]).abs().max().item())


def main() -> int:
    root = Path(sys.argv[1]) if len(sys.argv) > 1 else HERE.parent.parent / "tests" / "golden"
    setup_determinism(0)
    failed = 0
    cases = [(d, check_dit) for d in sorted((root / "dit").iterdir())]
    cases += [(d, check_connectors) for d in sorted((root / "text").glob("connectors_*"))]
    for d, check in cases:
        err = check(d)
        ok = err <= 1e-6
        failed += not ok
        print(f"{'ok  ' if ok else 'FAIL'} {d.parent.name}/{d.name} max abs err {err:.3g}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())

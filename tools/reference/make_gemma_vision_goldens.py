"""Golden cases for Gemma 3's image path (prompt enhancement's enhance_i2v), tiny config (tests/golden/text/):

- gemma3_image_preprocess: ltx-pipelines' image chain for enhance_i2v on decoded RGB images: media_io.py
  resize_aspect_ratio_preserving (torch's uint8 bilinear resize to the long side, then a centre crop), then
  transformers' Gemma3ImageProcessor as Gemma3Processor calls it (PIL bilinear squash to the processor's square size,
  rescale 1/255, normalize with mean = std = 0.5, pan-and-scan off). Exact: atol = rtol = 0.
- gemma3_vision: Gemma3ForConditionalGeneration.get_image_features on given pixel values: the SigLIP vision tower
  (patch conv, position table, pre-LN encoder layers with biased projections and full attention, post-LN) and the
  multimodal projector (average pool over the patch grid, RMSNorm with (1 + w), matmul by [vision, text]).
- gemma3_image_generation: the same model generating from a prompt with an image block (the soft tokens'
  embeddings replaced by the image features, attending to each other both ways in prefill), right-padded to a
  multiple of 8 as base_encoder.py _pad_inputs_for_attention_alignment pads it. Greedy generate() gives the tokens;
  the expected values are each step's logits with the run forced along those tokens (the calls generate() makes:
  prefill with pixel values and token types, then one token per call at the mask's cumulative position).

transformers 4.57.6 (the version ltx-core 1.0.0's lock pins); ltx-pipelines' media_io.py is read from its source
(LTX_PIPELINES_SRC, default /tmp/ltxsrc: `pip download ltx-pipelines==1.0.0 --no-deps` unzipped), imported without
the package's __init__, which needs the whole pipeline stack.
"""

from __future__ import annotations

import os
import sys
import types
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))

from golden_case import (  # noqa: E402
    GoldenCase,
    canonical_json,
    module_to_reference,
    seeded_init_,
    seeded_randn,
    to_reference,
    with_measured_production,
)
from tiny_configs import GEMMA_TEXT_CONFIG  # noqa: E402

GROUPS = ("text",)
GENERATOR = "tools/reference/make_gemma_vision_goldens.py"
TOL_FP32 = {"validation": {"atol": 1e-4, "rtol": 1e-4}, "production": {"atol": 5e-2, "rtol": 5e-2}}
EXACT = {"validation": {"atol": 0.0, "rtol": 0.0}, "production": {"atol": 0.0, "rtol": 0.0}}

# A 6x6 patch grid pooled 2x2 into 9 soft tokens (the real one: 64x64 pooled 4x4 into 256), two encoder layers.
VISION_CONFIG = {
    "model_type": "siglip_vision_model",
    "hidden_size": 32,
    "intermediate_size": 48,
    "num_hidden_layers": 2,
    "num_attention_heads": 2,
    "num_channels": 3,
    "image_size": 84,
    "patch_size": 14,
    "layer_norm_eps": 1e-06,
    "hidden_act": "gelu_pytorch_tanh",
    "attention_dropout": 0.0,
    "vision_use_head": False,
}
MM_TOKENS = 9
BOI, EOI, IMAGE = 60, 61, 62  # in the tiny vocabulary of 64 (the real ones: 255999, 256000, 262144)
HF_CONFIG = {
    "architectures": ["Gemma3ForConditionalGeneration"],
    "model_type": "gemma3",
    "text_config": GEMMA_TEXT_CONFIG,
    "vision_config": VISION_CONFIG,
    "mm_tokens_per_image": MM_TOKENS,
    "boi_token_index": BOI,
    "eoi_token_index": EOI,
    "image_token_index": IMAGE,
    "torch_dtype": "float32",
}
# The pipeline's image_long_side for this image size (helpers.py generate_enhanced_prompt passes 896 for 896).
LONG_SIDE = VISION_CONFIG["image_size"]
NEW_TOKENS = 6


def _norm_rule(name: str, shape: tuple[int, ...], seed: int):
    # Gemma RMSNorms (text layers, the projector's soft-embedding norm) multiply by (1 + w), stored centred at 0;
    # SigLIP's LayerNorms (layer_norm1/2, post_layernorm) by w: those keep the default 1 + N(0, 0.1^2).
    if name.endswith("norm.weight") and "vision_tower" not in name:
        return seeded_randn(shape, seed, 0.1)
    return None


def _model():
    from transformers import Gemma3Config, Gemma3ForConditionalGeneration

    cfg = Gemma3Config(
        text_config={k: v for k, v in GEMMA_TEXT_CONFIG.items() if k != "model_type"},
        vision_config={k: v for k, v in VISION_CONFIG.items() if k != "model_type"},
        mm_tokens_per_image=MM_TOKENS,
        boi_token_index=BOI,
        eoi_token_index=EOI,
        image_token_index=IMAGE,
    )
    cfg._attn_implementation = "sdpa"  # the transformers default GemmaTextEncoder runs with
    model = Gemma3ForConditionalGeneration(cfg).eval()
    seeded_init_(model, seed=211, rules=[_norm_rule])
    model.lm_head.weight = model.model.language_model.embed_tokens.weight  # tied, as the checkpoint has no lm_head
    return model


def _published_weights(model) -> dict[str, torch.Tensor]:
    """The state dict under the published google/gemma-3-12b-it names (no lm_head: tied to the embeddings)."""
    out = {}
    for k, v in model.state_dict().items():
        if k == "lm_head.weight" or k.endswith("embed_scale"):
            continue
        k = k.replace("model.language_model.", "language_model.model.", 1)
        k = k.replace("model.vision_tower.", "vision_tower.", 1).replace("model.multi_modal_projector.",
                                                                         "multi_modal_projector.", 1)
        out[k] = v
    return out


def _pixel_values() -> torch.Tensor:
    s = VISION_CONFIG["image_size"]
    return torch.tanh(seeded_randn((1, 3, s, s), 71, 0.8))  # in (-1, 1), as normalized pixels are


def case_vision() -> GoldenCase:
    model = module_to_reference(_model())
    pixels = _pixel_values()
    with torch.no_grad():
        hidden = model.model.vision_tower(pixel_values=to_reference(pixels)).last_hidden_state
        features = model.model.multi_modal_projector(hidden)
    return GoldenCase(
        group="text",
        case="gemma3_vision",
        component="gemma3_vision",
        description=(
            "Gemma 3's image features (transformers Gemma3Model.get_image_features): SigLIP vision tower, 2 layers of "
            "width 32 (2 heads of 16, MLP 48), 84x84 pixels in 14x14 patches (a 6x6 grid), post-LN; the multimodal "
            "projector pools the grid 2x2 into 9 soft tokens, RMSNorm (1 + w), times the [32, 32] projection."
        ),
        generator=GENERATOR,
        weights=_published_weights(model),
        weights_metadata={"format": "pt"},
        inputs={"pixel_values": pixels},
        outputs={"vision_hidden": hidden, "image_features": features},
        params={"hf_config": "config.json", "attn_implementation": "sdpa"},
        tolerance=TOL_FP32,
        extra_files={"config.json": canonical_json(HF_CONFIG) + "\n"},
    )


def _prompt() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Ids as Gemma3Processor builds them for [<bos>, text, <start_of_image>, text] (the block expanded to
    "\\n\\n" <boi> soft tokens <eoi> "\\n\\n"; here id 5 stands for the newline pair), right-padded to a multiple of 8."""
    gen = torch.Generator().manual_seed(23)
    before = torch.randint(3, 58, (7,), generator=gen).tolist()
    after = torch.randint(3, 58, (5,), generator=gen).tolist()
    ids = [2, 2] + before + [5, BOI] + [IMAGE] * MM_TOKENS + [EOI, 5] + after
    pad = (-len(ids)) % 8
    mask = [1] * len(ids) + [0] * pad
    ids = ids + [0] * pad
    ids_t = torch.tensor([ids])
    return ids_t, torch.tensor([mask]), (ids_t == IMAGE).long()


def _greedy_tokens() -> list[int]:
    model = _model()
    ids, mask, types_ = _prompt()
    with torch.no_grad():
        out = model.generate(input_ids=ids, attention_mask=mask, token_type_ids=types_, pixel_values=_pixel_values(),
                             max_new_tokens=NEW_TOKENS, do_sample=False, top_k=None, top_p=None, eos_token_id=[])
    return out[0, ids.shape[1]:].tolist()


_TOKENS: list[int] = []


def case_generation() -> GoldenCase:
    if not _TOKENS:
        _TOKENS.extend(_greedy_tokens())
    model = module_to_reference(_model())
    ids, mask, types_ = _prompt()
    pixels = _pixel_values()
    # generate()'s calls: positions = cumsum(mask) - 1 with pads at 1 (generation/utils.py), cache slots in order.
    positions = (mask.cumsum(-1) - 1).masked_fill(mask == 0, 1)
    logits = []
    with torch.no_grad():
        out = model(input_ids=ids, attention_mask=mask, token_type_ids=types_, pixel_values=to_reference(pixels),
                    position_ids=positions, cache_position=torch.arange(ids.shape[1]), use_cache=True)
        logits.append(out.logits[0, -1])
        cache, full_mask = out.past_key_values, mask
        next_pos = int(mask.sum())
        for j, tok in enumerate(_TOKENS[:-1]):
            full_mask = torch.cat([full_mask, torch.ones(1, 1, dtype=mask.dtype)], 1)
            slot = ids.shape[1] + j
            out = model(input_ids=torch.tensor([[tok]]), attention_mask=full_mask, past_key_values=cache,
                        position_ids=torch.tensor([[next_pos + j]]), cache_position=torch.tensor([slot]),
                        use_cache=True)
            cache = out.past_key_values
            logits.append(out.logits[0, -1])
    step_logits = torch.stack(logits)
    if model.dtype == torch.float32:  # the forced run is the greedy run's calls
        assert step_logits.argmax(-1).tolist() == _TOKENS, (step_logits.argmax(-1).tolist(), _TOKENS)
    return GoldenCase(
        group="text",
        case="gemma3_image_generation",
        component="gemma3_image_generation",
        description=(
            f"Gemma 3 (tiny: the gemma3_text model with the gemma3_vision tower) generating from a prompt with an "
            f"image block of {MM_TOKENS} soft tokens, right-padded to a multiple of 8: each step's logits, the run "
            f"forced along transformers' greedy tokens ({NEW_TOKENS} steps; step 0 is the prefill's last slot, a pad)."
        ),
        generator=GENERATOR,
        weights=_published_weights(model),
        weights_metadata={"format": "pt"},
        inputs={"input_ids": ids, "attention_mask": mask, "token_type_ids": types_, "pixel_values": pixels,
                "greedy_tokens": torch.tensor(_TOKENS)},
        outputs={"step_logits": step_logits},
        params={
            "hf_config": "config.json",
            "attn_implementation": "sdpa",
            "positions": "cumsum(attention_mask) - 1, pads at 1 (transformers 4.57 generate)",
            "prefill_mask": "causal (sliding: window 4 by slot) OR both keys and query soft tokens of one image; "
                            "pad keys masked",
        },
        tolerance=TOL_FP32,
        extra_files={"config.json": canonical_json(HF_CONFIG) + "\n"},
    )


def _media_io():
    root = Path(os.environ.get("LTX_PIPELINES_SRC", "/tmp/ltxsrc"))
    for name, path in (("ltx_pipelines", root / "ltx_pipelines"), ("ltx_pipelines.utils", root / "ltx_pipelines/utils")):
        if name not in sys.modules:
            m = types.ModuleType(name)
            m.__path__ = [str(path)]
            sys.modules[name] = m
    from ltx_pipelines.utils import media_io

    return media_io


def _quirk_side() -> int:
    """A long side L with int(L * (LONG_SIDE / L)) == LONG_SIDE - 1 (the size maths' truncation quirk)."""
    for side in range(LONG_SIDE + 1, 4 * LONG_SIDE):
        if int(side * (LONG_SIDE / float(side))) == LONG_SIDE - 1:
            return side
    raise RuntimeError("no quirk side")


def case_preprocess() -> GoldenCase:
    from transformers import Gemma3ImageProcessor
    from transformers.image_utils import PILImageResampling

    media_io = _media_io()
    s = VISION_CONFIG["image_size"]
    processor = Gemma3ImageProcessor(size={"height": s, "width": s}, resample=PILImageResampling.BILINEAR,
                                     image_mean=[0.5] * 3, image_std=[0.5] * 3, rescale_factor=1 / 255)
    rng = np.random.default_rng(5)
    # Downscaled then squashed (landscape, portrait), upscaled, the truncation quirk, already square at the size.
    sizes = [(100, 150), (130, 61), (30, 40), (_quirk_side() // 2, _quirk_side()), (s, s)]
    inputs, outputs = {}, {}
    for i, (h, w) in enumerate(sizes):
        # Smooth gradients with noise, so that every interpolation weight shows in the result.
        yy, xx = np.mgrid[0:h, 0:w]
        base = np.stack([xx * 255.0 / max(w - 1, 1), yy * 255.0 / max(h - 1, 1), (xx + yy) * 127.0 / (h + w)], -1)
        image = np.clip(base + rng.normal(0, 40, (h, w, 3)), 0, 255).astype(np.uint8)
        resized = media_io.resize_aspect_ratio_preserving(torch.from_numpy(image), LONG_SIDE).to(torch.uint8)
        pixels = processor(images=resized, do_pan_and_scan=False, do_convert_rgb=True, return_tensors="pt")
        inputs[f"image.{i}"] = torch.from_numpy(image)
        outputs[f"pixel_values.{i}"] = pixels["pixel_values"]
        outputs[f"resized.{i}"] = resized.contiguous()
    return GoldenCase(
        group="text",
        case="gemma3_image_preprocess",
        component="gemma3_image_preprocess",
        description=(
            f"enhance_i2v's image chain on decoded RGB images {sizes}: media_io.resize_aspect_ratio_preserving to a "
            f"long side of {LONG_SIDE} (torch uint8 bilinear, centre crop), then Gemma3ImageProcessor (PIL bilinear "
            f"to {s}x{s}, 1/255, mean = std = 0.5) as Gemma3Processor calls it; bit-exact."
        ),
        generator=GENERATOR,
        weights={},
        weights_metadata={"format": "pt"},
        inputs=inputs,
        outputs=outputs,
        params={"long_side": LONG_SIDE, "image_size": s},
        tolerance=EXACT,
    )


CASES = {
    "gemma3_image_preprocess": (case_preprocess, False),
    "gemma3_vision": (case_vision, True),
    "gemma3_image_generation": (case_generation, True),
}


def generate(out_root: Path, only_cases: set[str] | None, groups: set[str]) -> list[Path]:
    if "text" not in groups:
        return []
    written = []
    for name, (make, measured) in CASES.items():
        if only_cases is None or name in only_cases:
            torch.manual_seed(0)
            written.append((with_measured_production(make) if measured else make()).write(out_root))
    return written

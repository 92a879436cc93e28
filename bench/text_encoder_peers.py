"""The peers of bench/text_encoder.sh (issue 4): Gemma-3 from prompt text to hidden states, on the same GGUF file.

  python bench/text_encoder_peers.py llama GGUF PROMPTS [--reps N] [--threads T] [--batch-mode auto|one|sequential]
      llama.cpp through llama-cpp-python: the context in embeddings mode with pooling NONE, so one decode runs
      every layer over the prompt's tokens and returns the final-norm hidden state of each token (no lm_head over
      the 262k vocabulary). The batch goes either as one multi-sequence llama_batch (one seq_id per prompt,
      unified KV cache) or as one decode per prompt; `auto` times both and reports the faster.
  python bench/text_encoder_peers.py transformers GGUF PROMPTS [--reps N] [--threads T]
      What the LTX reference pipeline runs (ltx_core text_encoders/gemma/encoders/base_encoder.py encode and
      tokenizer.py): one prompt per call, text.strip(), left-padded to 1024 tokens, model.model(...,
      output_hidden_states=True), in bfloat16 as every ltx_pipelines pipeline builds its models
      (ti2vid_two_stages_hq.py, distilled.py: self.dtype = torch.bfloat16). Weights: transformers' GGUF loader
      dequantizes the same file, then they are cast to bf16. The batch of 8 is encoded one prompt after another,
      as the pipeline does.

PROMPTS holds the single prompt on its first line and the batch on the following lines. Prints key=value lines
like bench_text_encoder (first_single_s, first_batch_s, single_s, batch_s medians of wall time, cpu_single_s,
cpu_batch_s medians of the process's CPU time per call, tokens_*, threads, load_s).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time


def read_prompts(path: str) -> tuple[list[str], list[str]]:
    with open(path, encoding="utf-8") as f:
        lines = [line.rstrip("\n") for line in f if line.strip()]
    return lines[:1], lines[1:]


CPU = {"single": [], "batch": []}  # process CPU seconds (all threads) of each timed call


def timed(fn, cpu_key=None):
    c0, t0 = time.process_time(), time.perf_counter()
    fn()
    wall = time.perf_counter() - t0
    if cpu_key:
        CPU[cpu_key].append(time.process_time() - c0)
    return wall


def report(first_single, first_batch, singles, batches, **extra):
    print(f"first_single_s={first_single:.4f}")
    print(f"first_batch_s={first_batch:.4f}")
    print(f"single_s={statistics.median(singles):.4f}")
    print(f"batch_s={statistics.median(batches):.4f}")
    print(f"cpu_single_s={statistics.median(CPU['single']):.4f}")
    print(f"cpu_batch_s={statistics.median(CPU['batch']):.4f}")
    for k, v in extra.items():
        print(f"{k}={v}")


def run_llama(args) -> None:
    import ctypes

    import llama_cpp
    import numpy as np
    from llama_cpp import Llama

    single, batch = read_prompts(args.prompts)
    t0 = time.perf_counter()
    llm = Llama(model_path=args.gguf, embedding=True, pooling_type=llama_cpp.LLAMA_POOLING_TYPE_NONE, n_ctx=1024,
                n_batch=1024, n_ubatch=1024, n_threads=args.threads, n_threads_batch=args.threads, verbose=False)
    load_s = time.perf_counter() - t0
    ctx, n_embd = llm._ctx, llm.n_embd()

    def tokens_of(text: str) -> list[int]:  # LTX: text.strip(), one leading <bos>
        return llm.tokenize(text.strip().encode("utf-8"), add_bos=True, special=False)

    def decode(seqs: list[list[int]]) -> list[np.ndarray]:
        ctx.kv_cache_clear()
        llm._batch.reset()
        for i, toks in enumerate(seqs):
            llm._batch.add_sequence(toks, i, True)
        ctx.decode(llm._batch)
        n = sum(len(t) for t in seqs)
        ptr = llama_cpp.llama_get_embeddings(ctx.ctx)
        states = np.ctypeslib.as_array(ctypes.cast(ptr, ctypes.POINTER(ctypes.c_float)), shape=(n, n_embd)).copy()
        return np.split(states, np.cumsum([len(t) for t in seqs])[:-1])

    def encode_one(prompts):
        return decode([tokens_of(p) for p in prompts])

    def encode_sequential(prompts):
        return [decode([tokens_of(p)])[0] for p in prompts]

    counts = (sum(len(tokens_of(p)) for p in single), sum(len(tokens_of(p)) for p in batch))
    out = encode_one(batch)
    assert len(out) == len(batch) and all(o.shape[1] == n_embd for o in out), [o.shape for o in out]
    modes = {"one": encode_one, "sequential": encode_sequential}
    if args.batch_mode == "auto":  # one warm call each, then the faster of 3 alternating timings
        trial = {m: [] for m in modes}
        for m in modes:
            modes[m](batch)
        for _ in range(3):
            for m in modes:
                trial[m].append(timed(lambda: modes[m](batch)))
        mode = min(trial, key=lambda m: statistics.median(trial[m]))
        print("# llama.cpp batch modes (s): " + ", ".join(f"{m} {statistics.median(v):.4f}" for m, v in trial.items()),
              file=sys.stderr)
    else:
        mode = args.batch_mode
    # A fresh context for the first-call figures would need a reload; the first calls here follow the mode trial
    # above, so llama.cpp's "first" times are warm (its graph is rebuilt every decode anyway).
    first_single = timed(lambda: encode_one(single))
    first_batch = timed(lambda: modes[mode](batch))
    singles, batches = [], []
    for r in range(args.reps):
        singles.append(timed(lambda: encode_one(single), "single"))
        batches.append(timed(lambda: modes[mode](batch), "batch"))
        print(f"# llama.cpp rep {r}: single {singles[-1]:.4f} s, batch {batches[-1]:.4f} s", file=sys.stderr)
    report(first_single, first_batch, singles, batches, tokens_single=counts[0], tokens_batch=counts[1],
           threads=args.threads, load_s=f"{load_s:.4f}", batch_mode=mode,
           version=llama_cpp.__version__)


def run_transformers(args) -> None:
    import os
    from pathlib import Path

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import torch
    import transformers
    from transformers import AutoModelForCausalLM, AutoTokenizer

    torch.set_num_threads(args.threads)
    single, batch = read_prompts(args.prompts)
    gguf = Path(args.gguf)
    t0 = time.perf_counter()
    tok = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    tok.padding_side = "left"
    model = AutoModelForCausalLM.from_pretrained(str(gguf.parent), gguf_file=gguf.name, dtype=torch.bfloat16)
    model.eval()
    load_s = time.perf_counter() - t0
    # Dense bf16 Linears, as the pipeline's bf16 Gemma has (not GGUF blocks behind a packed-matmul kernel).
    linears = [m for m in model.model.modules() if isinstance(m, torch.nn.Linear)]
    assert linears and all(type(m) is torch.nn.Linear and m.weight.dtype == torch.bfloat16 for m in linears), {
        type(m).__name__ for m in model.model.modules()}

    def encode(prompt: str):
        enc = tok([prompt.strip()], padding="max_length", max_length=1024, truncation=True, return_tensors="pt")
        with torch.inference_mode():
            out = model.model(input_ids=enc.input_ids, attention_mask=enc.attention_mask, output_hidden_states=True)
        assert len(out.hidden_states) == model.config.num_hidden_layers + 1
        return out.hidden_states

    def encode_all(prompts):
        return [encode(p) for p in prompts]

    def count(prompts):
        return sum(int(tok([p.strip()], return_tensors="pt").attention_mask.sum()) for p in prompts)

    first_single = timed(lambda: encode_all(single))
    first_batch = timed(lambda: encode_all(batch))
    singles, batches = [], []
    for r in range(args.reps):
        singles.append(timed(lambda: encode_all(single), "single"))
        batches.append(timed(lambda: encode_all(batch), "batch"))
        print(f"# transformers rep {r}: single {singles[-1]:.4f} s, batch {batches[-1]:.4f} s", file=sys.stderr)
    report(first_single, first_batch, singles, batches, tokens_single=count(single), tokens_batch=count(batch),
           threads=torch.get_num_threads(), load_s=f"{load_s:.4f}", dtype="bfloat16",
           attn=model.config._attn_implementation, version=f"transformers {transformers.__version__} torch "
           f"{torch.__version__}")


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("side", choices=["llama", "transformers"])
    p.add_argument("gguf")
    p.add_argument("prompts")
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--batch-mode", choices=["auto", "one", "sequential"], default="auto")
    args = p.parse_args()
    (run_llama if args.side == "llama" else run_transformers)(args)


if __name__ == "__main__":
    main()

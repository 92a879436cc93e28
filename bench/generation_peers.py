"""The peers' side of bench/generation.sh: Gemma 3 from the same GGUF, a prompt of N tokens (the text ltx bench
--generation uses, tokenized by the peer, <bos> first, cut to N), prefilled, then M tokens greedily with no stop
token; prompt tokens/s and generation tokens/s (M - 1 decode steps after the prefill's token), median of the
repetitions after a warm-up, as key=value lines.

  llama        llama-cpp-python (llama.cpp), n_threads = $THREADS, n_batch = N: one eval of the prompt, then one
               eval per token, the next token the argmax of the last logits
  transformers Gemma3ForCausalLM from the GGUF (dequantized), float32 or bfloat16 (--dtype), torch threads = $THREADS,
               the prompt's forward with a DynamicCache, then one forward per token
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

TEXT = ("A red fox runs through a snowy forest at dawn, its breath clouding in the cold air while the low sun turns "
        "the frost on the branches gold and a raven calls from the pines. ")


def prompt_ids(tokenize, n: int, bos: int) -> list[int]:
    ids = [bos]
    while len(ids) < n:
        ids += tokenize(TEXT)
    return ids[:n]


def run_llama(gguf: str, n: int, m: int, reps: int, threads: int) -> tuple[float, float]:
    import numpy as np
    from llama_cpp import Llama

    llm = Llama(model_path=gguf, n_ctx=n + m + 8, n_batch=n, n_threads=threads, n_threads_batch=threads,
                logits_all=False, verbose=False)
    ids = prompt_ids(lambda t: llm.tokenize(t.encode(), add_bos=False, special=False), n, llm.token_bos())
    pp, tg = [], []
    for r in range(reps + 1):
        llm.reset()
        t0 = time.perf_counter()
        llm.eval(ids)
        t1 = time.perf_counter()
        for _ in range(m - 1):
            token = int(np.argmax(np.ctypeslib.as_array(llm._ctx.get_logits(), shape=(llm.n_vocab(),))))
            llm.eval([token])
        t2 = time.perf_counter()
        if r:
            pp.append(n / (t1 - t0))
            tg.append((m - 1) / (t2 - t1))
    return statistics.median(pp), statistics.median(tg)


def run_transformers(gguf: str, n: int, m: int, reps: int, threads: int, dtype: str) -> tuple[float, float]:
    from pathlib import Path

    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer, DynamicCache

    torch.set_num_threads(threads)
    path = Path(gguf)
    tok = AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
    model = AutoModelForCausalLM.from_pretrained(str(path.parent), gguf_file=path.name,
                                                 dtype=getattr(torch, dtype)).eval()
    ids = torch.tensor([prompt_ids(lambda t: tok(t, add_special_tokens=False).input_ids, n, tok.bos_token_id)])
    pp, tg = [], []
    with torch.no_grad():
        for r in range(reps + 1):
            cache = DynamicCache()
            t0 = time.perf_counter()
            out = model(input_ids=ids, past_key_values=cache, use_cache=True)
            t1 = time.perf_counter()
            for _ in range(m - 1):
                token = out.logits[:, -1].argmax(-1, keepdim=True)
                out = model(input_ids=token, past_key_values=out.past_key_values, use_cache=True)
            t2 = time.perf_counter()
            if r:
                pp.append(n / (t1 - t0))
                tg.append((m - 1) / (t2 - t1))
    return statistics.median(pp), statistics.median(tg)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("peer", choices=["llama", "transformers"])
    ap.add_argument("gguf")
    ap.add_argument("--prompt-tokens", type=int, default=200)
    ap.add_argument("--new-tokens", type=int, default=128)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--dtype", default="float32")
    a = ap.parse_args()
    threads = int(os.environ.get("THREADS", os.cpu_count() or 1))
    if a.peer == "llama":
        pp, tg = run_llama(a.gguf, a.prompt_tokens, a.new_tokens, a.reps, threads)
    else:
        pp, tg = run_transformers(a.gguf, a.prompt_tokens, a.new_tokens, a.reps, threads, a.dtype)
    print(f"prompt_tokens_per_s={pp:.1f}\ngeneration_tokens_per_s={tg:.1f}")


if __name__ == "__main__":
    main()

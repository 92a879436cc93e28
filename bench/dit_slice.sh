#!/usr/bin/env bash
# The issue-5 DiT slice benchmark: two LTX-2.3 blocks at the official widths (video 32x128, audio 32x64, gated
# attention, cross-attention AdaLN), seeded bf16 weights, 768x512 px x 25 frames (1536 video tokens, 26 audio
# tokens), 1024-token contexts, one sigma. Our DiT (`ltx bench --dit-slice`, production precision = bf16) and
# ltx-core's PyTorch LTXModel on the CPU in bf16 (tools/reference/bench_dit_slice.py run), each in a fresh process,
# with the same weights and inputs; prints one markdown table.
#
#   bench/dit_slice.sh [DIR]     DIR (default /tmp/ltx_dit_slice) receives the ~2.4 GB weights on first use
# Environment: PYTHON (the reference venv's python; default .venv/bin/python), LTX (default build/ltx), REPS
# (timed calls per side after one warm-up; default 3), LTX_THREADS (ours) / torch's default (PyTorch).
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-/tmp/ltx_dit_slice}
py=${PYTHON:-.venv/bin/python}
ltx=${LTX:-build/ltx}
reps=${REPS:-3}
script=tools/reference/bench_dit_slice.py

if [[ ! -f $dir/weights.safetensors || ! -f $dir/inputs.safetensors ]]; then
  echo "generating the slice into $dir ..." >&2
  "$py" "$script" generate "$dir" >&2
fi

# One side's key=value lines into an associative array; stderr (per-call times) passes through.
declare -A ours torch
read_kv() {
  local -n into=$1
  shift
  local line
  while IFS= read -r line; do into[${line%%=*}]=${line#*=}; done < <("$@")
}
read_kv torch "$py" "$script" run "$dir" --reps "$reps"
read_kv ours "$ltx" bench --dit-slice "$dir" --reps "$reps"

gb() { awk -v b="$1" 'BEGIN { printf "%.2f", b / 1e9 }'; }
gb_kb() { awk -v k="$1" 'BEGIN { printf "%.2f", k * 1024 / 1e9 }'; }
target=$((ours[weights_bytes] + ours[plan_peak_bytes]))

echo
echo "DiT slice (LTX-2.3 widths, 2 blocks, 1536 video + 26 audio tokens, 1024-token contexts), bf16 weights; median"
echo "of $reps calls after one warm-up, wall clock; peak RSS = VmHWM of each side's own process (GB = 1e9 bytes)."
echo "Threads: ours ${ours[threads]}, PyTorch ${torch[threads]}."
echo
echo "| | time per call (s) | ours/PyTorch time | CPU per call (s) | ours/PyTorch CPU | peak RSS (GB) | RSS before load (GB) | weights + plan peak (GB) |"
echo "|---|---|---|---|---|---|---|---|"
ratio=$(awk -v a="${ours[time_s]}" -v b="${torch[time_s]}" 'BEGIN { printf "%.2f", a / b }')
cpu_ratio=$(awk -v a="${ours[cpu_s]}" -v b="${torch[cpu_s]}" 'BEGIN { printf "%.2f", a / b }')
echo "| ours (ltx) | ${ours[time_s]} | **$ratio** | ${ours[cpu_s]} | $cpu_ratio | $(gb_kb "${ours[peak_rss_kb]}") | $(gb_kb "${ours[baseline_rss_kb]}") | $(gb "${ours[weights_bytes]}") + $(gb "${ours[plan_peak_bytes]}") = **$(gb $target)** |"
echo "| PyTorch (ltx-core LTXModel) | ${torch[time_s]} | 1.00 | ${torch[cpu_s]} | 1.00 | $(gb_kb "${torch[peak_rss_kb]}") | $(gb_kb "${torch[baseline_rss_kb]}") | - |"
echo
echo "CPU = user + system seconds of the whole process per call: on a loaded machine it leaves out the time other"
echo "processes held the cores (spinning worker threads would count in it). Load: $(cut -d' ' -f1-3 /proc/loadavg)."
echo
echo "Targets (issue 5): ours/PyTorch time <= 0.50; our peak RSS <= weights + plan peak."
# The plan holds the call's inputs in its arena (CompileOptions::inputs_in_arena), so its peak is all the
# activation memory of a call. RSS before load = code, libraries and the caller's own inputs (read first).
gb3() { awk -v b="$1" 'BEGIN { printf "%.3f", b / 1e9 }'; }
peak=$(awk -v p="${ours[peak_rss_kb]}" 'BEGIN { printf "%.0f", p * 1024 }')
before=$(awk -v p="${ours[baseline_rss_kb]}" 'BEGIN { printf "%.0f", p * 1024 }')
verdict() { awk -v a="$1" -v b="$2" 'BEGIN { d = (a - b) / 1e9; if (d <= 0) printf "met, %.3f GB under", -d; else printf "NOT met, %.3f GB over", d }'; }
echo "Ours, plan peak $(gb3 "${ours[plan_peak_bytes]}") GB = the whole arena, which holds the call's inputs too ($(gb3 "${ours[plan_input_bytes]}") GB of"
echo "latents, contexts, RoPE tables, timestep rows, live from the start to their last reader, then reused)."
echo "- peak RSS $(gb3 "$peak") GB vs weights + plan peak $(gb3 "$target") GB: $(verdict "$peak" "$target")."
echo "- peak RSS above RSS before load (code and libraries $(gb3 $((before - ours[caller_input_bytes]))) GB + the caller's inputs"
echo "  $(gb3 "${ours[caller_input_bytes]}") GB): $(gb3 $((peak - before))) GB vs weights + plan peak $(gb3 "$target") GB: $(verdict $((peak - before)) "$target")."
over=$(awk -v p="$peak" -v b="$before" -v t="$target" 'BEGIN { printf "%.3f", (p - b - t) / 1e9 }')
echo "- the rest of the peak above RSS before load, $over GB, is outside the plan: the calls' malloc'd memory"
echo "  $(gb3 $((ours[heap_bytes] - ours[heap_load_bytes]))) GB (the returned outputs, graph and plan structures, the small kernels' grow-only"
echo "  per-thread buffers; the GEMM's scratch is in the plan's arena), thread stacks and allocator slack."
echo "  At the end: resident file pages $(gb_kb "${ours[rss_file_kb]}") GB (mapped weights and inputs, code), anonymous"
echo "  $(gb_kb "${ours[rss_anon_kb]}") GB (arena, heap)."

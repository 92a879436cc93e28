#!/usr/bin/env bash
# Issue-33 benchmark: the XLA backend on XLA's CPU plugin beside our CPU backend, on this machine, in one run.
#   pipeline - the embedded default model (17 frames at 192x128, 30 steps, audio): `ltx generate --repeat ROUNDS+1
#              --progress json` once per backend in a fresh cache folder; the first run of each process compiles
#              (XLA: every program, then kept in the cache), the others are warm. Per stage: text encode (Gemma 3
#              270M Q4_K_M + connectors), denoise (the DiT, 30 guided steps), decode (video VAE, audio VAE, vocoder).
#   slice    - with DIT_SLICE=DIR (from bench/dit_slice.sh: two LTX-2.3 blocks at the official widths, 1536 video
#              tokens), `ltx bench --dit-slice DIR --backend B` for both.
# Medians in seconds, and xla / cpu (> 1: XLA is slower). THREADS (2) for both (LTX_THREADS; XLA's CPU client uses
# its own thread pool over every core it is given).
# Usage: bench/xla_cpu.sh [ROUNDS=3]   (LTX=path/to/ltx, DIT_SLICE=DIR)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
threads=${THREADS:-2}
ltx=${LTX:-build/ltx}
prompt="A red circle moves to the left across a plain blue background. A steady tone plays."
[ -x "$ltx" ] || { echo "xla_cpu: $ltx not built (scripts/setup)" >&2; exit 1; }
work=$(mktemp -d /tmp/ltx_xla_cpu.XXXXXX)
trap 'rm -rf "$work"' EXIT

for backend in cpu xla; do
  echo "generating on $backend ..." >&2
  LTX_CACHE_DIR="$work/cache" LTX_THREADS=$threads "$ltx" generate --prompt "$prompt" --backend $backend \
    --output "$work/$backend.mp4" --repeat $((rounds + 1)) --progress json >"$work/$backend.jsonl"
done
slice=()
if [ -n "${DIT_SLICE:-}" ]; then
  for backend in cpu xla; do
    echo "DiT slice on $backend ..." >&2
    LTX_THREADS=$threads "$ltx" bench --dit-slice "$DIT_SLICE" --reps "$rounds" --backend $backend >"$work/slice_$backend.txt"
  done
  slice=(slice)
fi
"$ltx" compare-media "$work/xla.mp4" "$work/cpu.mp4" >"$work/compare.txt" || true

python3 - "$work" "$rounds" "$threads" "${slice[@]}" <<'PY'
import json, statistics, sys
work, rounds, threads = sys.argv[1], int(sys.argv[2]), sys.argv[3]
def runs(backend):
    out = []
    for line in open(f"{work}/{backend}.jsonl"):
        e = json.loads(line)
        if e["event"] == "done":
            s = e["stage_seconds"]
            out.append({"text encode": s["encode prompt"], "denoise": s["denoise"], "decode": s["decode"],
                        "total": e["seconds"]})
    return out
print(f"Embedded default model, 17 frames 192x128, 30 steps, {threads} threads; first run (compiles) and median of "
      f"{rounds} warm runs\n")
print("| stage | cpu first | xla first | cpu warm (s) | xla warm (s) | xla / cpu warm |")
print("|---|---:|---:|---:|---:|---:|")
cpu, xla = runs("cpu"), runs("xla")
for key in ["text encode", "denoise", "decode", "total"]:
    c = statistics.median(r[key] for r in cpu[1:])
    x = statistics.median(r[key] for r in xla[1:])
    print(f"| {key} | {cpu[0][key]:.2f} | {xla[0][key]:.2f} | {c:.3f} | {x:.3f} | {x / c:.2f} |")
print("\nxla against cpu (compare-media): " + " / ".join(l.strip() for l in open(f"{work}/compare.txt")))
if len(sys.argv) > 4:
    def kv(backend):
        return dict(l.strip().split("=", 1) for l in open(f"{work}/slice_{backend}.txt") if "=" in l)
    c, x = kv("cpu"), kv("xla")
    print("\n| DiT slice (2 blocks, 1536 video tokens) | cpu | xla | xla / cpu |")
    print("|---|---:|---:|---:|")
    for key in ["first_call_s", "time_s", "cpu_s", "peak_rss_kb"]:
        print(f"| {key} | {c[key]} | {x[key]} | {float(x[key]) / float(c[key]):.2f} |")
PY

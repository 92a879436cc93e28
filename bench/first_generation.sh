#!/usr/bin/env bash
# Issue-7 benchmark: the first generation of a process against the second at the same shape, on the embedded
# default model (`ltx generate --repeat 2`), in two situations:
#   cold  - a fresh process and an empty cache folder: the default model's file is written first;
#   warm  - a fresh process reusing the cached checkpoint file (the on-disk cache).
# Each situation runs ROUNDS times, alternating; the tables give medians in seconds and first/second (target
# <= 1.2), then where the first run's extra time goes (seconds per stage, first vs second, from the warm runs):
# once in wall time (the target) and once in process CPU time (all threads; steadier on a shared machine).
# Usage: bench/first_generation.sh [ROUNDS=3] [extra ltx generate options...]   (LTX=path/to/ltx to override)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
shift || true
extra=("$@")
ltx=${LTX:-build/ltx}
[ -x "$ltx" ] || { echo "first_generation: $ltx not built (scripts/setup)" >&2; exit 1; }
work=$(mktemp -d /tmp/ltx_first_generation.XXXXXX)
trap 'rm -rf "$work"' EXIT

run() {  # $1: cold|warm, $2: round
  local cache="$work/cache-$1"
  [ "$1" = cold ] && rm -rf "$cache"
  LTX_CACHE_DIR="$cache" "$ltx" generate --prompt "A red circle moves to the left across a plain blue background. A steady tone plays." \
    --output "$work/out.mp4" --repeat 2 --progress json "${extra[@]}" >"$work/$1-$2.jsonl"
}
LTX_CACHE_DIR="$work/cache-warm" "$ltx" generate --prompt warmup --output "$work/out.mp4" --quiet "${extra[@]}"  # makes the warm cache
for ((i = 1; i <= rounds; i++)); do
  run cold "$i"
  run warm "$i"
done

python3 - "$work" "$rounds" <<'PY'
import json, statistics, sys
work, rounds = sys.argv[1], int(sys.argv[2])
def runs(kind):
    out = []
    for i in range(1, rounds + 1):
        done = [json.loads(l) for l in open(f"{work}/{kind}-{i}.jsonl") if '"done"' in l]
        done = [d for d in done if d["event"] == "done"]
        out.append(done)
    return out
med = statistics.median
def table(key, setup_key, stage_key, unit):
    print(f"| process | first ({unit}) | second ({unit}) | first / second |")
    print("|---|---|---|---|")
    for kind in ("cold", "warm"):
        r = runs(kind)
        first = med(d[0][key] + d[0][setup_key] for d in r)
        second = med(d[1][key] for d in r)
        print(f"| {kind} cache | {first:.2f} | {second:.2f} | {first / second:.2f} |")
    r = runs("warm")
    print()
    print(f"| stage (warm process) | first ({unit}) | second ({unit}) |")
    print("|---|---|---|")
    print(f"| setup (find Gemma, cached model) | {med(d[0][setup_key] for d in r):.2f} | 0 |")
    for s in list(r[0][0][stage_key].keys()):
        a = med(d[0][stage_key].get(s, 0.0) for d in r)
        b = med(d[1][stage_key].get(s, 0.0) for d in r)
        print(f"| {s} | {a:.2f} | {b:.2f} |")
    print()
print("Wall time (the target: first / second <= 1.2):\n")
table("seconds", "setup_seconds", "stage_seconds", "s")
print("Process CPU time, all threads (steadier on a shared machine):\n")
table("cpu_seconds", "setup_cpu_seconds", "stage_cpu_seconds", "CPU s")
rc = runs("cold")
print(f"cold setup (writes the default model's file): median {med(d[0]['setup_seconds'] for d in rc):.2f} s")
PY

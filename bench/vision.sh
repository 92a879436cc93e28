#!/usr/bin/env bash
# Issue-17 benchmark: Gemma 3's vision tower and projector (enhance_i2v's image path) at the released size, seconds per
# image: ours (`ltx bench --vision`, production and validation precision) beside transformers (bfloat16 and float32,
# SDPA) on the same configuration and thread count, as one markdown table.
# Usage: bench/vision.sh FOLDER   (a Gemma 3 folder with a vision_config: the gemma-3-12b-it download, or the stand-in
#        `ltx synth --model gemma-3-12b --format hf-bf16 --layers 1 --out DIR` makes)
#        THREADS, REPS, LTX=path/to/ltx, PYTHON (torch + transformers) for the peer
set -euo pipefail
cd "$(dirname "$0")/.."
folder=${1:?usage: bench/vision.sh FOLDER}
ltx=${LTX:-build/ltx}
threads=${THREADS:-$(nproc)}
reps=${REPS:-3}
value() { sed -n "s/^$1=//p" <<<"$2"; }
echo "Gemma 3 vision tower + projector, one 896x896 image (4096 patches, 256 tokens), $threads threads, median of $reps"
echo
echo "| engine | seconds per image |"
echo "|---|---:|"
for precision in production validation; do
  ours=$(LTX_THREADS=$threads "$ltx" bench --vision "$folder" --reps "$reps" --precision "$precision")
  echo "| ltx ($precision) | $(value seconds_per_image "$ours") |"
done
if [ -n "${PYTHON:-}" ]; then
  for dtype in bfloat16 float32; do
    peer=$(THREADS=$threads "$PYTHON" bench/vision_peers.py "$folder" --reps "$reps" --dtype "$dtype" 2>/dev/null)
    echo "| transformers ($dtype) | $(value seconds_per_image "$peer") |"
  done
fi

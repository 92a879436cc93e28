#!/usr/bin/env bash
# Issue-16 benchmark: each official mode beyond text-to-video on the embedded default model (17 frames of 192x128,
# 8 steps), seconds per stage beside the text-to-video run at the same size, in one process per run, ROUNDS rounds
# with the modes alternating; then the res_2s step's cost relative to Euler's (denoise seconds per step; res_2s makes
# two DiT evaluations per step and one more at the end, so ~2.1x is the arithmetic). Inputs are made with FFmpeg:
# an image for keyframe interpolation, a tone for audio-to-video, the text-to-video output itself for retake and as
# the IC-LoRA's reference video (with a rank-1 IC-LoRA on two layers of the default DiT written here, metadata
# reference_downscale_factor 2, and a grey mask).
# Usage: bench/modes.sh [ROUNDS=3]   (LTX=path/to/ltx to override)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
ltx=${LTX:-build/ltx}
[ -x "$ltx" ] || { echo "modes: $ltx not built (scripts/setup)" >&2; exit 1; }
work=$(mktemp -d /tmp/ltx_modes.XXXXXX)
trap 'rm -rf "$work"' EXIT

ffmpeg -v error -y -f lavfi -i testsrc=size=200x150 -frames:v 1 "$work/image.png"
ffmpeg -v error -y -f lavfi -i sine=frequency=440:sample_rate=48000:duration=2 "$work/tone.wav"
prompt="A red circle moves to the left across a plain blue background. A steady tone plays."
# The retake source, the IC-LoRA reference, and a warm-up; its first line names the default checkpoint.
checkpoint=$("$ltx" generate --prompt "$prompt" --output "$work/source.mp4" 2>&1 | sed -n 's/^embedded default model //p')
ffmpeg -v error -y -f lavfi -i gradients=size=96x64:rate=24:duration=0.7 -vf format=gray "$work/mask.mp4"
python3 - "$checkpoint" "$work/ic_lora.safetensors" <<'PY'
import json, struct, sys
src, out = sys.argv[1], sys.argv[2]
with open(src, "rb") as f:
    header = json.loads(f.read(struct.unpack("<Q", f.read(8))[0]))
tensors, blob = {}, b""
for m in ("transformer_blocks.0.attn1.to_q", "transformer_blocks.1.attn1.to_q"):
    rows, cols = header[f"model.diffusion_model.{m}.weight"]["shape"]
    for name, shape in ((f"diffusion_model.{m}.lora_A.weight", [1, cols]), (f"diffusion_model.{m}.lora_B.weight", [rows, 1])):
        data = struct.pack(f"<{shape[0] * shape[1]}f", *([0.05] * (shape[0] * shape[1])))
        tensors[name] = {"dtype": "F32", "shape": shape, "data_offsets": [len(blob), len(blob) + len(data)]}
        blob += data
tensors["__metadata__"] = {"reference_downscale_factor": "2"}
head = json.dumps(tensors).encode()
head += b" " * (-len(head) % 8)
with open(out, "wb") as f:
    f.write(struct.pack("<Q", len(head)) + head + blob)
PY

declare -A options=(
  [t2v]=""
  [res2s]="--sampler res2s"
  [keyframes]="--image $work/image.png --image $work/image.png:16 --keyframe-interpolation"
  [a2v]="--audio $work/tone.wav"
  [retake]="--retake $work/source.mp4 --start 0.2 --end 0.5"
  [ic_lora]="--lora $work/ic_lora.safetensors --video $work/source.mp4 --conditioning-mask $work/mask.mp4"
)
modes=(t2v res2s keyframes a2v retake ic_lora)
for ((i = 1; i <= rounds; i++)); do
  for mode in "${modes[@]}"; do
    # shellcheck disable=SC2086  # the options are words
    "$ltx" generate --prompt "$prompt" --steps 8 --output "$work/$mode.mp4" --progress json ${options[$mode]} |
      grep '"event":"done"' >"$work/$mode-$i.json"
  done
done

python3 - "$work" "$rounds" "${modes[@]}" <<'PY'
import json, statistics, sys
work, rounds, modes = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
runs = {m: [json.load(open(f"{work}/{m}-{i}.json")) for i in range(1, rounds + 1)] for m in modes}
stages = []
for m in modes:
    for s in runs[m][0]["stage_seconds"]:
        if s not in stages:
            stages.append(s)
med = statistics.median
print(f"Seconds per stage, median of {rounds} (embedded default, 17 frames 192x128, 8 steps)\n")
print("| stage | " + " | ".join(modes) + " |")
print("|---|" + "---|" * len(modes))
for s in stages:
    cells = [f"{med(r['stage_seconds'].get(s, 0.0) for r in runs[m]):.2f}" for m in modes]
    print(f"| {s} | " + " | ".join(cells) + " |")
print()
euler = med(r["stage_seconds"]["denoise"] for r in runs["t2v"])
res2s = med(r["stage_seconds"]["denoise"] for r in runs["res2s"])
print(f"res_2s denoise / Euler denoise at 8 steps: {res2s / euler:.2f}x "
      f"(DiT evaluations 17 vs 8: {17 / 8:.2f}x)")
PY

#!/usr/bin/env bash
# Regenerate every golden case into a temporary directory and byte-compare it with the committed tests/golden.
# Exits non-zero on any difference, missing or extra file. Usage: tools/reference/check_goldens.sh [--only GROUP]...
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
# The reference venv of the README (python3 -m venv .venv && .venv/bin/pip install -r tools/reference/requirements.txt).
python="${LTX_REF_PYTHON:-$repo/.venv/bin/python}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
"$python" "$repo/tools/reference/make_goldens.py" --out "$tmp" "$@" >/dev/null
status=0
# Compare only the groups that were regenerated (all of them unless --only was given).
for group_dir in "$tmp"/*/; do
  group="$(basename "$group_dir")"
  if ! diff -r "$repo/tests/golden/$group" "$tmp/$group"; then
    status=1
  fi
done
# Test data without manifests (op, quant and noise goldens), unless only some groups were asked for.
if [ "$#" -eq 0 ]; then
  LTX_OP_GOLDENS_OUT="$tmp/ops_a" "$python" "$repo/tools/reference/make_op_goldens_a.py" >/dev/null
  "$python" "$repo/tools/reference/make_op_goldens_b.py" --out "$tmp/ops_b" >/dev/null
  "$python" "$repo/tools/reference/make_quant_goldens.py" "$tmp/quant" >/dev/null
  "$python" "$repo/tools/reference/make_noise_goldens.py" "$tmp/noise" >/dev/null
  "$python" "$repo/tools/reference/make_dit_format_data.py" "$tmp/dit_formats" >/dev/null
  "$python" "$repo/tools/reference/make_lora_example.py" "$tmp/lora" >/dev/null
  "$python" "$repo/tools/reference/make_layouts.py" --out "$tmp/layouts" >/dev/null 2>&1
  diff -r "$repo/tests/golden/ops/a" "$tmp/ops_a" || status=1
  diff -r "$repo/tests/golden/ops/b" "$tmp/ops_b" || status=1
  diff -r "$repo/tests/data/quant" "$tmp/quant" || status=1
  diff -r "$repo/tests/data/noise" "$tmp/noise" || status=1
  diff -r "$repo/tests/data/dit_formats" "$tmp/dit_formats" || status=1
  diff -r "$repo/tests/data/lora" "$tmp/lora" || status=1
  diff -r -x README.md "$repo/src/synth/layouts" "$tmp/layouts" || status=1
fi
if [ "$status" -ne 0 ]; then
  echo "check_goldens: regenerated goldens differ from tests/golden (see above)" >&2
else
  echo "check_goldens: all regenerated goldens match"
fi
exit "$status"

#!/usr/bin/env bash
# Regenerate every golden case into a temporary directory and byte-compare it with the committed tests/golden.
# Exits non-zero on any difference, missing or extra file. Usage: tools/reference/check_goldens.sh [--only GROUP]...
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
python="${LTX_REF_PYTHON:-/work/venv-ref/bin/python}"
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
if [ "$status" -ne 0 ]; then
  echo "check_goldens: regenerated goldens differ from tests/golden (see above)" >&2
else
  echo "check_goldens: all regenerated goldens match"
fi
exit "$status"

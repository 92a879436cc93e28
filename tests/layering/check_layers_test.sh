#!/usr/bin/env bash
# Test of scripts/check_layers. Usage: tests/layering/check_layers_test.sh REPO_ROOT
#  (a) the real tree is clean: the guard exits 0 on REPO_ROOT.
#  (b) on a copy of the tree, each kind of violation, planted one at a time, makes the guard exit 1 and
#      name the planted file and line (violations already in the tree do not matter to (b)).
set -uo pipefail

root=$(cd "${1:-$(dirname "$0")/../..}" && pwd)
guard="$root/scripts/check_layers"
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# (a) the real tree.
if out=$("$guard" "$root" 2>&1); then
  echo "PASS (a): real tree clean: $(tail -n 1 <<<"$out")"
else
  fail "(a) real tree has layering violations:"
  sed 's/^/    /' <<<"$out"
fi

# (b) plants in a copy.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for d in src include tools tests/api examples bench scripts; do
  if [[ -d "$root/$d" ]]; then
    mkdir -p "$tmp/$(dirname "$d")"
    cp -r "$root/$d" "$tmp/$d"
  fi
done

first() { (cd "$tmp" && find "$@" -type f | sort | head -n 1); }

# expect_plant FILE LINE WHAT: the guard on the copy exits 1 and reports FILE:LINE.
expect_plant() {
  local file=$1 line=$2 what=$3 out rc
  out=$("$guard" "$tmp" 2>&1)
  rc=$?
  if [[ $rc -ne 1 ]]; then
    fail "(b) $what: exit $rc, expected 1"
  elif ! grep -qF "$file:$line:" <<<"$out"; then
    fail "(b) $what: output does not name $file:$line"
    sed 's/^/    /' <<<"$out"
  else
    echo "PASS (b): $what -> $(grep -F "$file:$line:" <<<"$out" | head -n 1)"
  fi
}

# plant FILE INCLUDE WHAT: appends the include to FILE (created if missing), checks, then restores FILE.
plant() {
  local file=$1 include=$2 what=$3 existed=0
  [[ -f "$tmp/$file" ]] && existed=1 && cp "$tmp/$file" "$tmp/$file.orig"
  mkdir -p "$(dirname "$tmp/$file")"
  printf '\n#include "%s"\n' "$include" >>"$tmp/$file"
  expect_plant "$file" "$(wc -l <"$tmp/$file" | tr -d ' ')" "$what"
  if [[ $existed -eq 1 ]]; then mv "$tmp/$file.orig" "$tmp/$file"; else rm -f "$tmp/$file"; fi
}

plant "$(first src/models -name '*.cpp')" backend/cpu/kernels.h "backend header in src/models"
plant "$(first include/ltx -name '*.hpp')" graph/plan.h "internal header in the public API"
plant examples/planted.c stages/generate.h "internal header in an API client"
plant "$(first tools/ltx -name '*.cpp')" backend/cpu/kernels.h "CPU backend header in tools"
plant "$(first src/core -name '*.h')" io/json.h "io header in src/core"
plant "$(first src/stages -name '*.cpp')" tools/ltx/commands.h "tools header in src/stages"
plant "$(first src/synth -name '*.cpp')" models/ltx/dit/dit.h "model header in src/synth"
plant "$(first src/server -name '*.cpp')" stages/generate.h "engine-internal header in src/server"

long=src/stages/planted_long.cpp
for i in $(seq 1 1001); do echo "// line $i"; done >"$tmp/$long"
expect_plant "$long" 1001 "1001-line file in src/stages"
rm -f "$tmp/$long"

if [[ $failures -ne 0 ]]; then
  echo "check_layers_test: $failures failure(s)"
  exit 1
fi
echo "check_layers_test: all passed"

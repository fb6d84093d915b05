#!/usr/bin/env bash
# bench/autosched: issue 16's auto-scheduler benchmark (never a test). For each operator of
# ops.tsl (written as a new user would, no schedule block): the default loop nest
# (tunecli run-op --file, no records), the auto-scheduled kernel after TRIALS trials of
# tune-op --file (its sketches, --search SEARCH; tuning wall time), and the hand template
# where tessel has one (tune-op of the built-in operator, same trials). Peers: bench/matmul
# (oneDNN, OpenBLAS) for the matmul. Prints one table row per operator.
#   bench/autosched/run.sh [BUILD_DIR] [TRIALS] [SEARCH] [OPS...]
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
build="${1:-$here/../../build}"
trials="${2:-64}"
search="${3:-evolution}"
shift 3 2>/dev/null || shift $#
tunecli="$build/tools/tunecli"
ops="$here/ops.tsl"
work="$(mktemp -d /tmp/tessel-autosched-XXXXXX)"
trap 'rm -rf "$work"' EXIT

# name | shapes | built-in op with a template (or -) | its shapes
cases=(
  "as_matmul|--shape A=1024x1024 --shape B=1024x1024|matmul|--shape A=1024x1024 --shape B=1024x1024"
  "as_bmm|--shape A=16x256x64 --shape B=16x64x256|-|"
  "as_softmax|--shape X=4096x1000|-|"
  "as_layernorm|--shape X=8192x768|-|"
  "as_depthwise|--shape data=1x96x56x56 --shape weight=96x5x5|-|"
  "as_conv|--shape data=1x64x56x56 --shape weight=64x64x3x3|conv2d|--shape data=1x64x56x56 --shape weight=64x64x3x3 --param pad_h=1 --param pad_w=1"
  "as_convT|--shape data=1x64x28x28 --shape weight=64x32x2x2|-|"
  "as_maxpool|--shape data=1x64x56x56|-|"
  "as_gelu_scale|--shape X=1x256x56x56|-|"
  "as_chsum|--shape X=1x256x56x56|-|"
)

ms() { sed -n 's/.*time per call: median \([0-9.]*\) ms.*/\1/p' | head -1; }

printf '%-14s %12s %12s %8s %10s %12s %s\n' "operator" "default ms" "auto ms" "speedup" "tune s" "hand ms" "auto config"
for c in "${cases[@]}"; do
  IFS='|' read -r name shapes builtin bshapes <<<"$c"
  if [ $# -gt 0 ] && ! printf '%s\n' "$@" | grep -qx "$name"; then continue; fi
  rec="$work/$name.jsonl"
  # shellcheck disable=SC2086
  d=$("$tunecli" run-op "$name" --file "$ops" $shapes 2>&1 | ms)
  t0=$(date +%s.%N)
  # shellcheck disable=SC2086
  tout=$("$tunecli" tune-op "$name" --file "$ops" $shapes --trials "$trials" --search "$search" --no-peak \
         --records "$rec" 2>/dev/null)
  t1=$(date +%s.%N)
  cfg=$(printf '%s\n' "$tout" | sed -n 's/^ *config //p' | head -1)
  # shellcheck disable=SC2086
  a=$("$tunecli" run-op "$name" --file "$ops" $shapes --records "$rec" 2>&1 | ms)
  h="-"
  if [ "$builtin" != "-" ]; then
    hrec="$work/$name.hand.jsonl"
    # shellcheck disable=SC2086
    "$tunecli" tune-op "$builtin" $bshapes --trials "$trials" --no-peak --records "$hrec" >/dev/null 2>&1
    # shellcheck disable=SC2086
    h=$("$tunecli" run-op "$builtin" $bshapes --records "$hrec" 2>&1 | ms)
  fi
  sp=$(awk -v d="${d:-nan}" -v a="${a:-nan}" 'BEGIN { if (a > 0) printf "%.1fx", d / a; else print "-" }')
  printf '%-14s %12s %12s %8s %10.1f %12s %s\n' "$name" "${d:--}" "${a:--}" "$sp" "$(echo "$t1 - $t0" | bc)" "${h:--}" \
    "${cfg:0:60}"
done
if [ -x "$build/bench/matmul" ] && { [ $# -eq 0 ] || printf '%s\n' "$@" | grep -qx as_matmul; }; then
  echo "peers (bench/matmul, 1024^3):"
  "$build/bench/matmul" --sizes 1024 --rounds 1 2>&1 | tail -n 12
fi

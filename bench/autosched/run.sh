#!/usr/bin/env bash
# bench/autosched: issue 16's auto-scheduler benchmark (never a test). For each operator of
# ops.tsl (written as a new user would, no schedule block):
#   default    the default loop nest (tunecli run-op --file, no records)
#   auto@64    the best of the first 64 trials of tune-op --file (its sketches, --search
#              SEARCH), and the tuning wall time up to that trial (from the records'
#              timestamps)
#   auto@N     the best of all TRIALS trials (default 256) and the whole tuning wall time
#   hand       tessel's hand template where one exists (tune-op of the built-in operator,
#              the same TRIALS)
# Tuning runs with --run-timeout 120 (the checking reference of a 1024^3 matmul, its
# plain loop nest, takes over 20 s on a loaded machine); its messages go to
# WORK/NAME.tune.err. Each kernel time is tunecli run-op's median (--no-check: tune-op checked every
# candidate against the interpreter; the float64 interpretation of a 1024^3 matmul takes
# minutes per run). Peers (oneDNN, OpenBLAS) for the matmul:
# bench/matmul (1024^3, 1 and 2 threads) runs the tuned auto schedule and then the tuned hand
# template's schedule (each extracted from its records with `tunecli show --records` into
# WORK/as_matmul.auto.sched and .hand.sched, run with --schedule-file), each against
# oneDNN and OpenBLAS in the same process. The conv2d's peers (bench/conv_layers:
# resnet18's 64x56x56 3x3 layer, oneDNN direct, 1 thread) are printed after the table
# from their own process. Records stay in KEEP_DIR when given (else a temporary folder).
#   bench/autosched/run.sh [BUILD_DIR] [TRIALS] [SEARCH] [OPS...]
#   KEEP_DIR=/tmp/x bench/autosched/run.sh build 256 evolution as_matmul as_conv
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
build="${1:-$here/../../build}"
trials="${2:-256}"
search="${3:-evolution}"
shift 3 2>/dev/null || shift $#
tunecli="$build/tools/tunecli"
ops="$here/ops.tsl"
if [ -n "${KEEP_DIR:-}" ]; then
  work="$KEEP_DIR"
  mkdir -p "$work"
else
  work="$(mktemp -d /tmp/tessel-autosched-XXXXXX)"
  trap 'rm -rf "$work"' EXIT
fi

# name | shapes | built-in op with a template (or -) | its shapes
cases=(
  "as_matmul|--shape A=1024x1024 --shape B=1024x1024|matmul|--shape A=1024x1024 --shape B=1024x1024"
  "as_bmm|--shape A=16x256x64 --shape B=16x64x256|-|"
  "as_softmax|--shape X=4096x1000|-|"
  "as_layernorm|--shape X=8192x768|-|"
  "as_depthwise|--shape data=1x96x56x56 --shape weight=96x5x5|-|"
  "as_conv|--shape data=1x64x56x56 --shape weight=64x64x3x3|conv2d|--shape data=1x64x56x56 --shape weight=64x64x3x3"
  "as_convT|--shape data=1x64x28x28 --shape weight=64x32x2x2|-|"
  "as_maxpool|--shape data=1x64x56x56|-|"
  "as_gelu_scale|--shape X=1x256x56x56|-|"
  "as_chsum|--shape X=1x256x56x56|-|"
)

# the schedule text `tunecli show` prints (the lines after "# schedule", up to a blank
# or comment line)
sched() { awk '/^# schedule/ { on = 1; next } on && (/^$/ || /^#/) { exit } on { print }'; }
ms() { sed -n 's/.*time per call: median \([0-9.]*\) ms.*/\1/p' | head -1; }
# the wall time (s) from t0 to the timestamp of record line n of file f (the last field
# of "result")
stamp() { sed -n "${2}p" "$1" | sed -n 's/.*"result":\[\[[^]]*\],[^,]*,[^,]*,\([0-9.]*\)\].*/\1/p'; }

printf '%-14s %10s %10s %8s %10s %8s %8s %10s %s\n' "operator" "default ms" "auto@64" "tune64 s" "auto@$trials" \
  "tune s" "speedup" "hand ms" "auto config"
for c in "${cases[@]}"; do
  IFS='|' read -r name shapes builtin bshapes <<<"$c"
  if [ $# -gt 0 ] && ! printf '%s\n' "$@" | grep -qx "$name"; then continue; fi
  rec="$work/$name.jsonl"
  rm -f "$rec"
  # shellcheck disable=SC2086
  d=$("$tunecli" run-op "$name" --file "$ops" $shapes --no-check 2>&1 | ms)
  t0=$(date +%s.%N)
  # shellcheck disable=SC2086
  tout=$("$tunecli" tune-op "$name" --file "$ops" $shapes --trials "$trials" --search "$search" --no-peak \
         --run-timeout 120 --records "$rec" 2>"$work/$name.tune.err")
  t1=$(date +%s.%N)
  cfg=$(printf '%s\n' "$tout" | sed -n 's/^ *config //p' | head -1)
  head -n 64 "$rec" >"$work/$name.64.jsonl"
  s64=$(stamp "$rec" "$(wc -l <"$work/$name.64.jsonl")")
  t64=$(awk -v a="${s64:-0}" -v b="$t0" 'BEGIN { if (a > 0) printf "%.1f", a - b; else print "-" }')
  # shellcheck disable=SC2086
  a64=$("$tunecli" run-op "$name" --file "$ops" $shapes --no-check --records "$work/$name.64.jsonl" 2>&1 | ms)
  # shellcheck disable=SC2086
  a=$("$tunecli" run-op "$name" --file "$ops" $shapes --no-check --records "$rec" 2>&1 | ms)
  h="-"
  if [ "$builtin" != "-" ]; then
    hrec="$work/$name.hand.jsonl"
    rm -f "$hrec"
    # shellcheck disable=SC2086
    "$tunecli" tune-op "$builtin" $bshapes --trials "$trials" --no-peak --run-timeout 120 --records "$hrec" \
      >/dev/null 2>"$work/$name.hand.err"
    # shellcheck disable=SC2086
    h=$("$tunecli" run-op "$builtin" $bshapes --no-check --records "$hrec" 2>&1 | ms)
    # shellcheck disable=SC2086
    "$tunecli" show "$builtin" $bshapes --records "$hrec" 2>/dev/null | sched >"$work/$name.hand.sched"
  fi
  # shellcheck disable=SC2086
  "$tunecli" show "$name" --file "$ops" $shapes --records "$rec" 2>/dev/null | sched >"$work/$name.auto.sched"
  sp=$(awk -v d="${d:-nan}" -v a="${a:-nan}" 'BEGIN { if (a > 0) printf "%.1fx", d / a; else print "-" }')
  printf '%-14s %10s %10s %8s %10s %8.1f %8s %10s %s\n' "$name" "${d:--}" "${a64:--}" "$t64" "${a:--}" \
    "$(echo "$t1 - $t0" | bc)" "$sp" "${h:--}" "${cfg:0:60}"
done
if [ -x "$build/bench/matmul" ] && { [ $# -eq 0 ] || printf '%s\n' "$@" | grep -qx as_matmul; }; then
  for kind in auto hand; do
    f="$work/as_matmul.$kind.sched"
    [ -s "$f" ] || continue
    echo "tessel's tuned $kind schedule vs peers (bench/matmul --schedule-file $f, 1024^3, 1 and 2 threads;"
    echo "GFLOP/s, ms = 2.147 / GFLOP/s * 1e3):"
    "$build/bench/matmul" --sizes 1024 --threads 1,2 --rounds 5 --no-peak --schedule-file "$f" 2>&1 | sed -n '/size thr/,$p'
  done
fi
if [ -x "$build/bench/conv_sched" ] && [ -s "$work/as_conv.auto.sched" ]; then
  echo "tessel's tuned auto schedule and hand template (NCHW conv2d) vs oneDNN in one process"
  echo "(bench/conv_sched, 64x56x56 -> 64 3x3 s1 p1, 1 thread):"
  hand=()
  [ -s "$work/as_conv.hand.sched" ] && hand=("hand=conv2d:$work/as_conv.hand.sched")
  "$build/bench/conv_sched" --layer 64,56x56,64,3x3,1,1 --file "$ops" "auto=as_conv:$work/as_conv.auto.sched" \
    "${hand[@]}" 2>&1 | tail -n 4
fi
if [ -x "$build/bench/conv_layers" ] && { [ $# -eq 0 ] || printf '%s\n' "$@" | grep -qx as_conv; }; then
  echo "peers (bench/conv_layers, resnet18's 64x56x56 -> 64 3x3 s1 layer, 1 thread; GFLOP/s, ms = 0.231 / GFLOP/s * 1e3):"
  "$build/bench/conv_layers" --models resnet18 --filter "C64 56x56 K64 3x3 s1" --rounds 3 2>&1 | tail -n 12
fi

#!/bin/sh
# tessel vs ONNX Runtime, end to end, on the shared models, measured in one script
# on this machine: ONNX Runtime (onnxruntime-node, CPU) at 1 and 2 threads, then
# bench/models at 1 and 2 threads (default schedules, or tuned with --records FILE), in
# one table with the ratios.
#
#   bench/models_vs_ort.sh [--models-dir DIR] [--ort-dir DIR] [--build DIR] [--records FILE]
#                          [--repeat N] [--rounds R] [--chrt PRIO] [MODEL...]
#
# --models-dir: the folder of ONNX files (default $TSL_SHARED_DIR/models, else
#   ../shared/models next to the source tree; e.g. ../shared/models_v2). MODEL...: those
#   files (MODEL.onnx) only; default every *.onnx file of the folder. The input is the
#   folder's input_1x3x224x224.f32 for ONNX Runtime, a fixed pattern for tessel (the
#   latency does not depend on the values).
# --ort-dir: where onnxruntime-node@1.30.0 is (or gets) installed with
#   `npm install --ignore-scripts` (default /tmp/tessel-ort; the package's postinstall
#   downloads GPU binaries and is not needed for the CPU provider). An existing install
#   there is reused.
# --build: the meson build directory holding bench/models (default: build).
# --rounds R: R rounds (default 1). With R > 1 each round runs, model by model, ONNX
#   Runtime and then tessel, so a change of the machine's speed over the minutes of a run
#   (this shared machine's times drift by 10-20% between runs) hits both alike; every
#   round's row is printed, then per model the median of the rounds' ratios (and of the
#   times), and the geometric mean of those medians.
# --chrt PRIO: run both runtimes under `chrt -f PRIO` (SCHED_FIFO; needs root or
#   CAP_SYS_NICE; checked before anything runs), as the project's measurements are taken
#   (e.g. --chrt 50); default: normal priority.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
src=$(dirname "$here")
ort_dir=/tmp/tessel-ort
build="$src/build"
records=""
repeat=20
rounds=1
rt=""
models_dir="${TSL_SHARED_DIR:-$src/../shared}/models"
while [ $# -gt 0 ]; do
  case "$1" in
    --models-dir) models_dir=$2; shift 2 ;;
    --ort-dir) ort_dir=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --records) records=$2; shift 2 ;;
    --repeat) repeat=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --chrt) rt="chrt -f $2"; shift 2 ;;
    -*) echo "models_vs_ort.sh: unknown argument '$1'" >&2; exit 2 ;;
    *) break ;;
  esac
done
case "$rounds" in '' | *[!0-9]* | 0 | 0*) echo "models_vs_ort.sh: --rounds wants a positive integer, not '$rounds'" >&2; exit 2 ;; esac
[ -d "$models_dir" ] || { echo "models_vs_ort.sh: no models folder $models_dir" >&2; exit 1; }
models_dir=$(cd "$models_dir" && pwd) # ONNX Runtime runs from $ort_dir
[ -x "$build/bench/models" ] || { echo "models_vs_ort.sh: build $build/bench/models first (ninja -C $build)" >&2; exit 1; }
if [ -n "$rt" ]; then
  $rt true 2>/dev/null || { echo "models_vs_ort.sh: '$rt' does not run here (root or CAP_SYS_NICE needed, PRIO 1-99)" >&2; exit 2; }
fi
command -v node >/dev/null || { echo "models_vs_ort.sh: node (nodejs) is needed for ONNX Runtime" >&2; exit 1; }
if [ ! -d "$ort_dir/node_modules/onnxruntime-node" ]; then
  mkdir -p "$ort_dir"
  (cd "$ort_dir" && npm install --ignore-scripts --no-audit --no-fund onnxruntime-node@1.30.0 >&2)
fi
cp "$here/ort_models.mjs" "$ort_dir/ort_models.mjs"
if [ $# -gt 0 ]; then
  models="$*"
else
  models=$(cd "$models_dir" && ls ./*.onnx | sed 's|^\./||; s|\.onnx$||' | tr '\n' ' ')
fi
[ -n "$models" ] || { echo "models_vs_ort.sh: no *.onnx in $models_dir" >&2; exit 1; }
ort_file=$(mktemp /tmp/tessel-ort-XXXXXX.txt)
rows_file=$(mktemp /tmp/tessel-rounds-XXXXXX.txt)
trap 'rm -f "$ort_file" "$rows_file" "$rows_file.one"' EXIT
set -- --repeat "$repeat" --models "$models_dir" --ort "$ort_file"
[ -n "$records" ] && set -- "$@" --records "$records"
if [ "$rounds" -eq 1 ]; then
  echo "ONNX Runtime (onnxruntime-node 1.30.0), $repeat runs per model and thread count..." >&2
  (cd "$ort_dir" && $rt node ort_models.mjs "$models_dir" 1,2 "$repeat" $models) > "$ort_file"
  $rt "$build/bench/models" "$@" $models
  exit 0
fi
r=1
while [ "$r" -le "$rounds" ]; do
  for m in $models; do
    echo "round $r of $rounds: $m: ONNX Runtime, then tessel..." >&2
    (cd "$ort_dir" && $rt node ort_models.mjs "$models_dir" 1,2 "$repeat" "$m") > "$ort_file"
    $rt "$build/bench/models" "$@" "$m" > "$rows_file.one"
    [ "$r" -eq 1 ] && [ "$m" = "${models%% *}" ] && sed -n '1,/^|---/p' "$rows_file.one" | sed 's/^| model |/| round | model |/; s/^|---|/|---|---|/'
    grep "^| $m |" "$rows_file.one" | sed "s/^|/| $r |/" | tee -a "$rows_file"
  done
  r=$((r + 1))
done
rm -f "$rows_file.one"
echo
echo "median of $rounds rounds (ms, and tessel/ORT of each round):"
echo
echo "| model | tessel 1t | tessel 2t | ORT 1t | ORT 2t | tessel/ORT 1t | tessel/ORT 2t | rounds' 1t ratios | rounds' 2t ratios |"
echo "|---|---:|---:|---:|---:|---:|---:|---|---|"
# columns of a round row: | round | model | t1 (min) | t2 (min) | o1 (min) | o2 (min) | r1x | r2x | ...
awk -F'|' '
  function med(list,   a, n, i, j, t) {
    n = split(list, a, " ")
    for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j - 1] + 0 > a[j] + 0; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
  }
  function first(f,   a) { split(f, a, " "); return a[1] }
  $8 ~ /x/ {
    m = $3; gsub(/ /, "", m)
    if (!(m in seen)) { seen[m] = 1; order[++nm] = m }
    t1[m] = t1[m] " " first($4); t2[m] = t2[m] " " first($5); o1[m] = o1[m] " " first($6); o2[m] = o2[m] " " first($7)
    x1 = $8; x2 = $9; gsub(/[ x]/, "", x1); gsub(/[ x]/, "", x2)
    r1[m] = r1[m] " " x1; r2[m] = r2[m] " " x2
  }
  END {
    g1 = 0; g2 = 0
    for (k = 1; k <= nm; k++) {
      m = order[k]; a = med(r1[m]); b = med(r2[m])
      printf "| %s | %.2f | %.2f | %.2f | %.2f | %.2fx | %.2fx |%s |%s |\n", m, med(t1[m]), med(t2[m]), med(o1[m]), med(o2[m]), a, b, r1[m], r2[m]
      g1 += log(a); g2 += log(b)
    }
    if (nm) printf "| geometric mean | | | | | %.2fx | %.2fx | | |\n", exp(g1 / nm), exp(g2 / nm)
  }' "$rows_file"

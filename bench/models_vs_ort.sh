#!/bin/sh
# tessel vs ONNX Runtime, end to end, on the shared models, measured in one script
# on this machine: ONNX Runtime (onnxruntime-node, CPU) at 1 and 2 threads, then
# bench/models at 1 and 2 threads (default schedules, or tuned with --records FILE), in
# one table with the ratios.
#
#   bench/models_vs_ort.sh [--models-dir DIR] [--ort-dir DIR] [--build DIR] [--records FILE]
#                          [--repeat N] [MODEL...]
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
set -eu
here=$(cd "$(dirname "$0")" && pwd)
src=$(dirname "$here")
ort_dir=/tmp/tessel-ort
build="$src/build"
records=""
repeat=20
models_dir="${TSL_SHARED_DIR:-$src/../shared}/models"
while [ $# -gt 0 ]; do
  case "$1" in
    --models-dir) models_dir=$2; shift 2 ;;
    --ort-dir) ort_dir=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --records) records=$2; shift 2 ;;
    --repeat) repeat=$2; shift 2 ;;
    -*) echo "models_vs_ort.sh: unknown argument '$1'" >&2; exit 2 ;;
    *) break ;;
  esac
done
[ -d "$models_dir" ] || { echo "models_vs_ort.sh: no models folder $models_dir" >&2; exit 1; }
models_dir=$(cd "$models_dir" && pwd) # ONNX Runtime runs from $ort_dir
[ -x "$build/bench/models" ] || { echo "models_vs_ort.sh: build $build/bench/models first (ninja -C $build)" >&2; exit 1; }
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
trap 'rm -f "$ort_file"' EXIT
echo "ONNX Runtime (onnxruntime-node 1.30.0), $repeat runs per model and thread count..." >&2
(cd "$ort_dir" && node ort_models.mjs "$models_dir" 1,2 "$repeat" $models) > "$ort_file"
set -- --repeat "$repeat" --models "$models_dir" --ort "$ort_file"
[ -n "$records" ] && set -- "$@" --records "$records"
"$build/bench/models" "$@" $models

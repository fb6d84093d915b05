#!/usr/bin/env bash
# Records what a behaviour-preserving change must keep bit-identical: every model's
# output (raw f32 of output 0, at 1 and 2 threads) and every kernel's final lowered loop
# IR (TSL_DEBUG=lower, the last pass of each kernel: the default schedules, or the
# recorded ones with --records) for the built-in models, the ONNX files of ../shared and
# an armv8 ahead-of-time compile (files of ../shared as onnx_<name>), on each x86-64 target this machine runs.
#
#   scripts/snapshot.sh OUT [BUILDDIR] [RECORDS]   # writes OUT/<target>/<model>.*
#   diff -r OLD NEW                                # nothing printed: bit-identical
#
# Not a test (it takes minutes and needs ../shared); the refactors' issue notes quote it.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: scripts/snapshot.sh OUT [BUILDDIR] [RECORDS]}
builddir=${2:-build}
records=${3:-}
cli="$builddir/tools/tunecli"
[ -x "$cli" ] || { echo "snapshot: no $cli (build first)" >&2; exit 1; }
py=/usr/bin/python3
[ -x "$py" ] || py=python3
shared=../shared
mkdir -p "$out"
export TSL_CACHE=0 # every kernel lowered, none taken from the disk cache

# the final lowered IR of each kernel, from a TSL_DEBUG=lower trace on stdin, kernels
# in the order they were first built
last_ir() {
  "$py" -c '
import sys, re
order, last, cur = [], {}, None
for line in sys.stdin:
    m = re.match(r"--- lower (\S+): (\S+) ---$", line)
    if m:
        cur = m.group(1)
        if cur not in last: order.append(cur)
        last[cur] = []
    elif cur is not None:
        last[cur].append(line)
for k in order:
    sys.stdout.write("=== " + k + "\n" + "".join(last[k]))
'
}

models=(squeezenet1_0 squeezenet1_1 resnet18 resnet50 mobilenet_v2 shufflenet_v2_x1_0 bsqueezenet1_1 bresnet18)
for f in "$shared"/models/*.onnx "$shared"/models_v2/*.onnx; do [ -f "$f" ] && models+=("$f"); done

targets=(host)
grep -q -w avx512f /proc/cpuinfo && targets+=(x86-64-avx2)
for t in "${targets[@]}"; do
  dir="$out/$t"
  mkdir -p "$dir"
  if [ "$t" = host ]; then unset TSL_HOST_TARGET; else export TSL_HOST_TARGET=$t; fi
  for m in "${models[@]}"; do
    name=$m
    input=()
    case "$m" in *.onnx) name=onnx_$(basename "$m" .onnx); input=(--input "$(dirname "$m")/input_1x3x224x224.f32") ;; esac
    rec=()
    [ -n "$records" ] && rec=(--records "$records")
    rm -f "$dir/$name".*   # a snapshot taken again into OUT keeps nothing of an older one
    if ! TSL_DEBUG=lower "$cli" run "$m" "${input[@]}" "${rec[@]}" --threads 1 --repeat 1 \
         --output "$dir/$name.t1.f32" 2>"$dir/$name.trace" >"$dir/$name.log"; then
      echo "snapshot: $t $name: not run ($(tail -n 1 "$dir/$name.trace"))" | tee "$dir/$name.refused"
      rm -f "$dir/$name.trace" "$dir/$name.log"
      continue
    fi
    last_ir <"$dir/$name.trace" >"$dir/$name.ir"
    rm -f "$dir/$name.trace"
    "$cli" run "$m" "${input[@]}" "${rec[@]}" --threads 2 --repeat 1 --output "$dir/$name.t2.f32" >/dev/null
    grep -E '^(model|records)' "$dir/$name.log" | sed -e 's/load [0-9.]* ms, compile [0-9.]* ms/load, compile/' \
      >"$dir/$name.summary"
    rm -f "$dir/$name.log"
    echo "snapshot: $t $name: $(grep -c '^=== ' "$dir/$name.ir") kernels"
  done
done
unset TSL_HOST_TARGET
# armv8, ahead of time: the lowered kernels of a whole model compiled for the board
TSL_DEBUG=lower "$cli" compile squeezenet1_1 --target armv8 -o "$out/armv8_squeezenet1_1.so" 2>"$out/armv8.trace" >/dev/null
last_ir <"$out/armv8.trace" >"$out/armv8_squeezenet1_1.ir"
rm -f "$out/armv8.trace" "$out/armv8_squeezenet1_1.so"
echo "snapshot: armv8 squeezenet1_1: $(grep -c '^=== ' "$out/armv8_squeezenet1_1.ir") kernels"

#!/usr/bin/env bash
# Builds the libFuzzer harnesses of tests/fuzz (docs/fuzzing.md) in build-fuzz/ with
# clang-19 (-Dfuzz=true: libFuzzer + ASan + UBSan), writes their seed corpora and runs
# each harness for SECONDS (default 60), two at a time, then prints one line per
# harness: executions, coverage (cov/ft of libFuzzer's last status line), corpus size,
# and whether it found a crash, leak, timeout, out-of-memory or UBSan report.
# Exit status 1 when any did (its input is in build-fuzz/fuzz/artifacts/HARNESS/), 2 for
# a usage error.
#   scripts/fuzz.sh [SECONDS] [HARNESS...]   # HARNESS: onnx_load onnx_compile dsl records
#                                            #          schedule_text rpc_request (default all)
# Environment: TSL_FUZZ_JOBS (harnesses at a time, default 2), TSL_FUZZ_RSS_MB (libFuzzer's
# -rss_limit_mb, default 2048), TSL_FUZZ_TIMEOUT (seconds one input may take, default 30).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
if ! [[ "$seconds" =~ ^[0-9]+$ ]] || [ "$seconds" -lt 1 ]; then
  echo "usage: scripts/fuzz.sh [SECONDS] [HARNESS...]" >&2
  exit 2
fi
[ $# -gt 0 ] && shift
all=(onnx_load onnx_compile dsl records schedule_text rpc_request)
harnesses=("${@:-${all[@]}}")
for h in "${harnesses[@]}"; do
  case " ${all[*]} " in *" $h "*) ;; *) echo "scripts/fuzz.sh: unknown harness '$h' (one of: ${all[*]})" >&2; exit 2 ;; esac
done

scripts/setup.sh --deps-only clang-19 libclang-rt-19-dev libfuzzer-19-dev
builddir=build-fuzz
if [ ! -f "$builddir/build.ninja" ]; then
  CC=clang-19 meson setup "$builddir" -Dfuzz=true -Db_lundef=false >/dev/null
fi
ninja -C "$builddir" fuzzers >/dev/null
echo "fuzz: harnesses built in $builddir/tests/fuzz/"

# Seeds are made fresh each run (nothing binary is committed); the corpora the runs
# grow stay in $work/corpus/ between runs.
work=$builddir/fuzz
rm -rf "$work/seeds" "$work/logs"
mkdir -p "$work/seeds" "$work/logs" "$work/cache"
ASAN_OPTIONS=detect_leaks=0 "$builddir/tests/fuzz/fuzz-seeds" "$work/seeds"
# ONNX node tests of libonnx-testdata: every small model file
testdata=/usr/share/libonnx-testdata/data
if [ -d "$testdata" ]; then
  find "$testdata" -name model.onnx -size -16k | sort | while read -r f; do
    name=$(basename "$(dirname "$f")").onnx
    cp "$f" "$work/seeds/onnx_load/$name"
    cp "$f" "$work/seeds/onnx_compile/$name"
  done
fi
# the DSL examples of docs/dsl.md, one ```dsl block a seed
awk -v dir="$work/seeds/dsl" '
  /^```dsl/ { n++; file = sprintf("%s/docs_dsl_%02d.tsl", dir, n); inside = 1; next }
  /^```/ { inside = 0; next }
  inside { print > file }' docs/dsl.md

export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:allocator_may_return_null=1"
export LSAN_OPTIONS="suppressions=$PWD/scripts/lsan.supp:print_suppressions=0"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
export TSL_CACHE_DIR="$PWD/$work/cache" # a kernel cache of the fuzz run's own

run() {
  local h=$1 bin="$builddir/tests/fuzz/fuzz_$1"
  mkdir -p "$work/corpus/$h" "$work/artifacts/$h"
  local rc=0
  "$bin" "$work/corpus/$h" "$work/seeds/$h" -max_total_time="$seconds" \
    -rss_limit_mb="${TSL_FUZZ_RSS_MB:-2048}" -timeout="${TSL_FUZZ_TIMEOUT:-30}" \
    -artifact_prefix="$work/artifacts/$h/" -print_final_stats=1 -close_fd_mask=1 \
    > "$work/logs/$h.log" 2>&1 || rc=$?
  echo "$rc" > "$work/logs/$h.rc"
}

start=$SECONDS
running=0
for h in "${harnesses[@]}"; do
  if [ "$running" -ge "${TSL_FUZZ_JOBS:-2}" ]; then
    wait -n || true
    running=$((running - 1))
  fi
  echo "fuzz: $h for ${seconds} s"
  run "$h" 2>>"$work/logs/$h.log" & # the shell's own "Aborted" line goes to the log too
  running=$((running + 1))
done
wait || true

echo
printf '%-14s %12s %9s %9s %8s  %s\n' harness executions cov ft corpus status
bad=0
for h in "${harnesses[@]}"; do
  log=$work/logs/$h.log
  rc=$(cat "$work/logs/$h.rc" 2>/dev/null || echo 99)
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
  last=$(grep -E '^#[0-9]+.*cov: ' "$log" | tail -n 1 || true)
  cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
  ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
  corpus=$(find "$work/corpus/$h" -type f | wc -l)
  status=ok
  if grep -qE 'ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error:|SUMMARY: UndefinedBehaviorSanitizer' "$log" \
     || [ "$rc" != 0 ]; then
    what=$(grep -oE 'ERROR: LeakSanitizer|ERROR: AddressSanitizer: [a-z-]+|ERROR: libFuzzer: [a-z-]+|runtime error: .{0,60}|deadly signal' "$log" \
           | head -n 1 || true)
    artifact=$(ls -t "$work/artifacts/$h" 2>/dev/null | head -n 1 || true) # the newest
    status="FAILED (exit $rc${what:+: $what}${artifact:+; input $work/artifacts/$h/$artifact}; log $log)"
    bad=1
  fi
  printf '%-14s %12s %9s %9s %8s  %s\n' "$h" "${execs:-?}" "${cov:-?}" "${ft:-?}" "$corpus" "$status"
done
echo "fuzz: ${#harnesses[@]} harnesses, ${seconds} s each, in $((SECONDS - start)) s"
exit "$bad"

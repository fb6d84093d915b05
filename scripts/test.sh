#!/usr/bin/env bash
# Installs dependencies if missing, builds, and runs the whole test suite.
#   scripts/test.sh               # normal build (build/)
#   scripts/test.sh --sanitize    # under AddressSanitizer + UndefinedBehaviorSanitizer (build-asan/)
#   scripts/test.sh --builddir DIR   # the suite of a folder built already (e.g. by
#                                    # scripts/build_matrix.sh); no set-up, no build
#
# Passes: every module with "host" as the machine's own target; then, on an x86-64
# machine, the modules that compile for the host once more for each other x86-64 target
# this machine runs with other vector lanes (TSL_HOST_TARGET=x86-64-avx2 on an AVX-512
# machine: the AVX2 code path, 8 f32 lanes). A target the machine cannot run is skipped
# with a line that says so. TSL_TEST_TARGETS=host runs the host pass only.
set -euo pipefail
cd "$(dirname "$0")/.."
builddir=build
if [ "${1:-}" = "--builddir" ]; then
  builddir=${2:?scripts/test.sh: --builddir needs a build folder}
  [ -x "$builddir/tests/tessel-tests" ] || { echo "scripts/test.sh: no $builddir/tests/tessel-tests (build it first)" >&2; exit 1; }
else
  scripts/setup.sh "$@"
fi
if [ "${1:-}" = "--sanitize" ]; then builddir=build-asan; fi
# a sanitizer build (--sanitize, or --builddir of one) runs with the sanitizers' options
if [ "${1:-}" = "--sanitize" ] || grep -q -- '-fsanitize=address' "$builddir/build.ninja" 2>/dev/null; then
  # LLVM's own allocations live for the process; only our leaks matter to LeakSanitizer
  # through the suppressions file.
  export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}"
  export LSAN_OPTIONS="suppressions=$PWD/scripts/lsan.supp:print_suppressions=0"
  export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
fi
# "host" means the machine itself in the first pass, whatever the caller's environment says.
unset TSL_HOST_TARGET
runner="$builddir/tests/tessel-tests"
logroot="$builddir/test-logs"
rm -rf "$logroot"
mkdir -p "$logroot"
mods=$("$runner" --list)
if [ -z "$mods" ]; then
  echo "scripts/test.sh: $runner --list named no test module" >&2
  exit 1
fi
# Modules that never compile for the host (IR, DSL interpreter, runtime): one pass is enough.
host_independent=" ir dsl runtime install "

passed=0
failed=0
bad=""
summary=""

# run_pass LABEL TARGET MODULES...: one process per module, TSL_TEST_JOBS at a time
# (default: the core count), heaviest modules first so the processes finish together.
# TARGET is "" for the machine's own host target, else the TSL_HOST_TARGET value. Each
# module's CUnit output goes to $logroot/LABEL/<module>.log and is printed whole, in
# order, afterwards.
run_pass() {
  local label=$1 target=$2
  shift 2
  local logdir="$logroot/$label" order="" m
  mkdir -p "$logdir"
  for m in schedule graph winograd cross ops tuner e2e models templates; do
    case " $* " in *" $m "*) order+="$m " ;; esac
  done
  for m in "$@"; do
    case " $order " in *" $m "*) ;; *) order+="$m " ;; esac
  done
  local start=$SECONDS
  # shellcheck disable=SC2086
  printf '%s\n' $order | TSL_HOST_TARGET="$target" xargs -P "${TSL_TEST_JOBS:-$(nproc)}" -I{} \
    sh -c '"$0" "$2" > "$1/$2.log" 2>&1; echo $? > "$1/$2.rc"' "$runner" "$logdir" {}
  local p=0 f=0 rc last
  for m in $order; do
    cat "$logdir/$m.log"
    rc=$(cat "$logdir/$m.rc" 2>/dev/null || echo 99)
    last=$(tail -n 1 "$logdir/$m.log")
    if [[ "$last" =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
      p=$((p + BASH_REMATCH[1]))
      f=$((f + BASH_REMATCH[2]))
    else
      last="no summary line (the process died)"
    fi
    if [ "$rc" != 0 ]; then bad+="  [$label] $m: exit status $rc, $last ($logdir/$m.log)"$'\n'; fi
  done
  passed=$((passed + p))
  failed=$((failed + f))
  summary+="  [$label] $(wc -w <<<"$order") modules in $((SECONDS - start)) s: $p passed, $f failed"$'\n'
}

# shellcheck disable=SC2086
run_pass host "" $mods
host_line=$(grep -h -m1 '^tessel-tests: target host' "$logroot"/host/*.log | head -n 1 || true)
summary="  host pass: ${host_line#tessel-tests: }"$'\n'"$summary"

# the other x86-64 passes; which targets this machine runs is checked against the
# kernel's CPU flags, so a wrong detection cannot drop a pass unnoticed
if ! passes=$("$runner" --target-passes); then
  echo "scripts/test.sh: $runner --target-passes failed" >&2
  exit 1
fi
if [ "$(uname -m)" = x86_64 ]; then
  flags=" $(grep -m1 '^flags' /proc/cpuinfo | cut -d: -f2) "
  has() { for f in "$@"; do case "$flags" in *" $f "*) ;; *) return 1 ;; esac; done; }
  want=""
  if has avx2 fma bmi2 f16c movbe; then
    if has avx512f avx512bw avx512cd avx512dq avx512vl; then want="run x86-64-avx2"; else want="skip x86-64-avx512"; fi
  fi
  if [ -n "$want" ] && ! grep -q "^$want" <<<"$passes"; then
    echo "scripts/test.sh: /proc/cpuinfo calls for '$want', but tessel-tests --target-passes says:" >&2
    echo "$passes" >&2
    exit 1
  fi
fi

jit_mods=""
for m in $mods; do
  case "$host_independent" in *" $m "*) ;; *) jit_mods+="$m " ;; esac
done
while read -r kind name reason; do
  [ -n "$kind" ] || continue
  case "$kind" in
    run)
      if [ "${TSL_TEST_TARGETS:-all}" = host ]; then
        summary+="  $name pass: skipped (TSL_TEST_TARGETS=host)"$'\n'
      else
        # shellcheck disable=SC2086
        run_pass "$name" "$name" $jit_mods
      fi ;;
    host) summary+="  $name: its code path is the host pass's"$'\n' ;;
    skip) summary+="  $name pass: skipped: $reason"$'\n' ;;
  esac
done <<<"$passes"

echo
echo "tessel-tests: $passed passed, $failed failed"
printf '%s' "$summary"
if [ -n "$bad" ]; then
  printf 'FAILED modules:\n%s' "$bad"
  exit 1
fi

#!/usr/bin/env bash
# Installs dependencies if missing, builds, and runs the whole test suite.
#   scripts/test.sh               # normal build (build/)
#   scripts/test.sh --sanitize    # under AddressSanitizer + UndefinedBehaviorSanitizer (build-asan/)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh "$@"
builddir=build
if [ "${1:-}" = "--sanitize" ]; then
  builddir=build-asan
  # LLVM's own allocations live for the process; only our leaks matter to LeakSanitizer
  # through the suppressions file.
  export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}"
  export LSAN_OPTIONS="suppressions=$PWD/scripts/lsan.supp:print_suppressions=0"
  export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
fi
# One process per test module, TSL_TEST_JOBS at a time (default: the core count), heaviest
# modules first so the processes finish together. Each module's CUnit output goes to
# $builddir/test-logs/<module>.log and is printed whole, in order, afterwards.
runner="$builddir/tests/tessel-tests"
logdir="$builddir/test-logs"
rm -rf "$logdir"
mkdir -p "$logdir"
mods=$("$runner" --list)
if [ -z "$mods" ]; then
  echo "scripts/test.sh: $runner --list named no test module" >&2
  exit 1
fi
order=""
for m in schedule graph winograd cross ops tuner e2e models templates; do
  if grep -qx "$m" <<<"$mods"; then order+="$m "; fi
done
for m in $mods; do
  case " $order " in *" $m "*) ;; *) order+="$m " ;; esac
done
start=$SECONDS
# shellcheck disable=SC2086
printf '%s\n' $order | xargs -P "${TSL_TEST_JOBS:-$(nproc)}" -I{} \
  sh -c '"$0" "$2" > "$1/$2.log" 2>&1; echo $? > "$1/$2.rc"' "$runner" "$logdir" {}
passed=0
failed=0
bad=""
for m in $order; do
  cat "$logdir/$m.log"
  rc=$(cat "$logdir/$m.rc" 2>/dev/null || echo 99)
  last=$(tail -n 1 "$logdir/$m.log")
  if [[ "$last" =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
    passed=$((passed + BASH_REMATCH[1]))
    failed=$((failed + BASH_REMATCH[2]))
  else
    last="no summary line (the process died)"
  fi
  if [ "$rc" != 0 ]; then bad+="  $m: exit status $rc, $last ($logdir/$m.log)"$'\n'; fi
done
echo
echo "tessel-tests, $(wc -w <<<"$order") modules in $((SECONDS - start)) s: $passed passed, $failed failed"
if [ -n "$bad" ]; then
  printf 'FAILED modules:\n%s' "$bad"
  exit 1
fi

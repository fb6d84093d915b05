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
"$builddir/tests/tessel-tests"

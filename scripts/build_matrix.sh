#!/usr/bin/env bash
# Builds tessel (library, tools, tests, examples, bench) in the configurations beside
# build/ (gcc, debugoptimized: scripts/setup.sh) and build-asan/ (scripts/setup.sh
# --sanitize), each set up afresh with -Dwerror=true. Fails when a configuration does not
# build or prints a warning. Build only: run a folder's suite with
#   scripts/test.sh --builddir DIR
# Usage:
#   scripts/build_matrix.sh                    # release clang clang-release plain debug
#   scripts/build_matrix.sh release clang      # some of them
# Folders (wiped and set up anew each run, so that every file compiles and every warning
# shows): release build-rel/ (gcc -O3, NDEBUG), clang build-clang/ (clang-19,
# debugoptimized), clang-release build-clang-rel/, plain build-plain/, debug build-debug/.
# TSL_BUILD_JOBS sets ninja's -j (default: ninja's own).
set -euo pipefail
cd "$(dirname "$0")/.."

configs=("$@")
[ ${#configs[@]} -gt 0 ] || configs=(release clang clang-release plain debug)
for c in "${configs[@]}"; do
  case $c in
    release | clang | clang-release | plain | debug) ;;
    *) echo "build_matrix: unknown configuration '$c' (release, clang, clang-release, plain, debug)" >&2; exit 2 ;;
  esac
done

# packages (setup.sh's list, and clang-19 for the clang configurations); no build/
extra=()
case " ${configs[*]} " in *" clang"*) extra=(clang-19) ;; esac
scripts/setup.sh --deps-only "${extra[@]}" >/dev/null

failed=""
for c in "${configs[@]}"; do
  case $c in
    release) dir=build-rel cc=gcc args=(-Dbuildtype=release) ;;
    clang) dir=build-clang cc=clang-19 args=() ;;
    clang-release) dir=build-clang-rel cc=clang-19 args=(-Dbuildtype=release) ;;
    plain) dir=build-plain cc=gcc args=(-Dbuildtype=plain) ;;
    debug) dir=build-debug cc=gcc args=(-Dbuildtype=debug) ;;
  esac
  start=$SECONDS
  rm -rf "$dir"
  if ! setup_out=$(CC=$cc meson setup "$dir" -Dwerror=true "${args[@]}" 2>&1); then
    echo "build_matrix: $c: meson setup failed:" >&2
    echo "$setup_out" >&2
    failed+=" $c"
    continue
  fi
  log="$dir/build_matrix.log"
  status=0
  ninja -C "$dir" ${TSL_BUILD_JOBS:+-j "$TSL_BUILD_JOBS"} > "$log" 2>&1 || status=$?
  warnings=$(grep -ci 'warning:' "$log" || true)
  echo "build_matrix: $c ($dir, $cc ${args[*]:-}): exit status $status, $warnings warnings, $((SECONDS - start)) s"
  if [ "$status" != 0 ] || [ "$warnings" != 0 ]; then
    grep -i -A3 -e 'warning:' -e 'error:' -e 'FAILED' "$log" | head -n 60 >&2
    failed+=" $c"
  fi
done
if [ -n "$failed" ]; then
  echo "build_matrix: FAILED:$failed (logs: <folder>/build_matrix.log)" >&2
  exit 1
fi

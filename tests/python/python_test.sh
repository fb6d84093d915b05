#!/usr/bin/env bash
# The Python module's test (tests/python/test_python.c runs it): installs the build
# folder into a temporary DESTDIR (meson install --destdir), then runs
# tests/python/test_tessel.py with the INSTALLED module and library (the module must find
# the library through its install prefix: the test checks which one it opened) and the
# installed tunecli as the C API's side of the comparisons.
#   python_test.sh SOURCE_DIR BUILD_DIR
# Uses the first of python3, /usr/bin/python3 that imports numpy (Debian's python3-numpy);
# pytest (python3-pytest) when that Python has it, else unittest. Exit status 0 when the
# tests pass; 77 (skipped) when no Python with numpy or no meson; 1 otherwise.
set -euo pipefail
src=${1:?usage: python_test.sh SOURCE_DIR BUILD_DIR}
build=${2:?usage: python_test.sh SOURCE_DIR BUILD_DIR}
py=
for cand in python3 /usr/bin/python3; do
  if command -v "$cand" >/dev/null && "$cand" -c 'import numpy' 2>/dev/null; then py=$cand; break; fi
done
[ -n "$py" ] || { echo "python_test: skipped: no python3 with numpy (install python3-numpy)"; exit 77; }
command -v meson >/dev/null || { echo "python_test: skipped: meson is not installed"; exit 77; }
source "$src/tests/install/destdir.sh"
install_to_tmp python_test "$build" # $tmp, $dest, fail
init=$(find "$dest" -path '*/tessel/__init__.py' | head -n 1)
[ -n "$init" ] || fail "meson install put no tessel/__init__.py under the DESTDIR"
[ -f "$(dirname "$init")/_installed.py" ] || fail "no _installed.py next to the installed module"
site=$(dirname "$(dirname "$init")")
tunecli=$(find "$dest" -type f -name tunecli | head -n 1)
[ -n "$tunecli" ] || fail "no tunecli under the DESTDIR"
libdir=$(dirname "$(find "$dest" -name 'libtessel.so' | head -n 1)")

# A sanitized build (scripts/test.sh --sanitize): the Python interpreter is not
# instrumented, so the AddressSanitizer runtime the library needs must be preloaded
# (it has to come first), and the interpreter's own allocations at exit are no leaks of
# tessel's. Skipped when even that cannot load the library.
sanitizer_preload "$libdir/libtessel.so"
if [ -n "$asan" ]; then
  env "${preload[@]}" "$py" -c "import ctypes, sys; ctypes.CDLL(sys.argv[1])" "$libdir/libtessel.so" >"$tmp/probe.log" 2>&1 ||
    { cat "$tmp/probe.log"; echo "python_test: skipped: $py cannot load the sanitized libtessel.so even with $asan preloaded"; exit 77; }
  echo "python_test: a sanitized build: $asan preloaded into Python, leak detection off"
fi

runner=(-m unittest -v)
"$py" -c 'import pytest' 2>/dev/null && runner=(-m pytest -q -p no:cacheprovider --capture=sys) # (the C side's stderr, e.g. a sanitizer's report, shows)
echo "python_test: $("$py" --version) with numpy $("$py" -c 'import numpy; print(numpy.__version__)'), module $site/tessel, ${runner[1]}"
# (TESSEL_LIBRARY and TESSEL_BUILD_DIR unset: the module finds the library by itself)
(cd "$tmp" && env -u TESSEL_LIBRARY -u TESSEL_BUILD_DIR "${preload[@]}" PYTHONPATH="$site:$src/tests/python" \
  TESSEL_TUNECLI="$tunecli" TESSEL_EXPECT_LIBRARY_UNDER="$dest" LD_LIBRARY_PATH="$libdir" \
  TSL_SHARED_DIR="${TSL_SHARED_DIR:-$src/../shared}" \
  "$py" "${runner[@]}" "$src/tests/python/test_tessel.py") 2>&1 || fail "the Python tests (above)"
echo "python_test: OK"

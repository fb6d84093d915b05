#!/usr/bin/env bash
# The install test (tests/install/test_install.c runs it): installs the build folder
# into a temporary DESTDIR, then builds the examples the way an application does — the
# compiler flags and libraries from pkg-config only — and checks them against the
# programs of the build folder on the same inputs.
#   install_test.sh SOURCE_DIR BUILD_DIR
# Checks: the shared libraries export exactly the functions of their public headers
# (nm -D) and carry a versioned soname; each installed header compiles alone;
# examples/model_info.c (pkg-config tessel) prints the pkg-config version and the soname
# and squeezenet1_1's names and shapes at batch 2, as build/examples/tessel-model-info does; libtessel_runtime.so needs no LLVM;
# examples/classify.c (pkg-config tessel) prints the same top-5 as build/examples/classify
# on a squeezenet1_1 run; examples/device_app.c (pkg-config tessel-runtime) runs a model
# file compiled by the installed tunecli and writes the same output bytes as
# build/examples/tessel-device-app. Exit status 0 when everything holds; 77 (skipped)
# when a tool is missing; 1 otherwise, with what failed on stderr.
set -euo pipefail
src=${1:?usage: install_test.sh SOURCE_DIR BUILD_DIR}
build=${2:?usage: install_test.sh SOURCE_DIR BUILD_DIR}
for tool in meson pkg-config cc nm readelf python3; do
  command -v "$tool" >/dev/null || { echo "install_test: skipped: $tool is not installed"; exit 77; }
done
# the example's own image decoder (Debian libstb-dev), from the system's pkg-config
stb_flags=$(pkg-config --cflags --libs stb 2>/dev/null) ||
  { echo "install_test: skipped: examples/classify.c needs libstb-dev (pkg-config stb)"; exit 77; }
source "$src/tests/install/destdir.sh"
install_to_tmp install_test "$build" # $tmp, $dest, fail
pc=$(find "$dest" -name tessel.pc | head -n 1)
[ -n "$pc" ] || fail "no tessel.pc under the DESTDIR"
[ -f "$(dirname "$pc")/tessel-runtime.pc" ] || fail "no tessel-runtime.pc next to $pc"
export PKG_CONFIG_PATH=$(dirname "$pc") PKG_CONFIG_SYSROOT_DIR=$dest
# (pkg-config puts the sysroot in front of the .pc file's paths, variables included)
libdir=$(pkg-config --variable=libdir tessel)
bindir=$(pkg-config --variable=prefix tessel)/bin
includedir=$(pkg-config --variable=includedir tessel)
case "$libdir" in "$dest"/*) ;; *) fail "pkg-config's libdir $libdir is not under the DESTDIR (no sysroot support?)" ;; esac
for h in tessel.h tune.h runtime.h status.h tensor.h plan.h version.h; do
  [ -f "$includedir/tessel/$h" ] || fail "header tessel/$h not installed"
  # each header stands alone: every type it names is defined by the public headers
  printf '#include <tessel/%s>\n' "$h" | cc -std=c11 -Wall -Wextra -Werror -fsyntax-only -x c - \
    $(pkg-config --cflags tessel) || fail "tessel/$h does not compile alone"
done
echo "headers: each of the $(ls "$includedir/tessel" | wc -l) installed headers compiles alone"
for t in tunecli tessel-device-app; do [ -x "$bindir/$t" ] || fail "$t not installed in $bindir"; done

# Exports: exactly the functions the headers declare (+ the kernels' entry points).
for lib in tessel tessel_runtime; do
  so=$libdir/lib$lib.so
  [ -e "$so" ] || fail "$so not installed"
  soname=$(readelf -d "$so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
  case "$soname" in lib$lib.so.[0-9]*) ;; *) fail "$so: soname '$soname' carries no version" ;; esac
  [ -e "$libdir/$soname" ] || fail "$libdir/$soname (the soname's link) not installed"
  nm -D --defined-only "$so" | awk '$2 ~ /^[TDBRVW]$/ {sub(/@.*/, "", $3); print $3}' | sort -u >"$tmp/$lib.exported"
  sed -n 's/^ *\(tsl_[A-Za-z0-9_]*\);$/\1/p' "$build/$lib.map" | sort -u >"$tmp/$lib.declared"
  if ! diff "$tmp/$lib.declared" "$tmp/$lib.exported" >"$tmp/$lib.diff"; then
    cat "$tmp/$lib.diff" >&2
    fail "lib$lib.so: exported symbols (>) differ from the public headers' functions (<)"
  fi
  echo "lib$lib.so: soname $soname, $(wc -l <"$tmp/$lib.exported") exported functions, all declared in its headers"
done
if readelf -d "$libdir/libtessel_runtime.so" | grep -q 'NEEDED.*LLVM'; then
  fail "libtessel_runtime.so needs LLVM"
fi

# A sanitized build folder's libraries need their sanitizer runtime first in programs
# that are not instrumented (the examples built here): preloaded (destdir.sh).
sanitizer_preload "$libdir/libtessel.so"
[ -z "$asan" ] || echo "install_test: a sanitized build: $asan preloaded into the examples, leak detection off"

# classify: pkg-config tessel (+ stb, the example's own image decoder).
cc -std=c11 -O2 -Wall -Werror "$src/examples/classify.c" -o "$tmp/classify" \
  $(pkg-config --cflags --libs tessel) $stb_flags || fail "building classify.c"
readelf -d "$tmp/classify" | grep -q 'NEEDED.*libtessel\.so' || fail "classify does not link libtessel.so"
# a 64x48 PPM picture (stb_image reads PNM), deterministic
python3 -c "
import sys
w, h = 64, 48
px = bytes(((x * 7 + y * 3) % 256 if c == 0 else (x * y) % 256 if c == 1 else (255 - x * 4) % 256)
           for y in range(h) for x in range(w) for c in range(3))
sys.stdout.buffer.write(b'P6\n%d %d\n255\n' % (w, h) + px)" >"$tmp/picture.ppm"
env "${preload[@]}" LD_LIBRARY_PATH=$libdir "$tmp/classify" "$tmp/picture.ppm" squeezenet1_1 --threads 1 >"$tmp/classify.out" 2>&1 ||
  { cat "$tmp/classify.out" >&2; fail "installed classify"; }
"$build/examples/classify" "$tmp/picture.ppm" squeezenet1_1 --threads 1 >"$tmp/classify.ref" 2>&1 ||
  { cat "$tmp/classify.ref" >&2; fail "build/examples/classify"; }
grep -v -i 'ms\b\|latency\|record' "$tmp/classify.out" >"$tmp/classify.top"
grep -v -i 'ms\b\|latency\|record' "$tmp/classify.ref" >"$tmp/classify.reftop"
grep -q . "$tmp/classify.top" || fail "classify printed nothing"
diff "$tmp/classify.reftop" "$tmp/classify.top" >&2 || fail "installed classify's top-5 differs from the build folder's"
echo "classify (pkg-config tessel): the build folder's top-5:"
sed 's/^/  /' "$tmp/classify.top"

# model_info: versions, names, shapes, batch and threads through tessel.h alone.
cc -std=c11 -O2 -Wall -Werror "$src/examples/model_info.c" -o "$tmp/model_info" $(pkg-config --cflags --libs tessel) ||
  fail "building model_info.c"
env "${preload[@]}" LD_LIBRARY_PATH=$libdir "$tmp/model_info" squeezenet1_1 --batch 2 --threads 2 >"$tmp/info.out" 2>&1 ||
  { cat "$tmp/info.out" >&2; fail "installed model_info"; }
soname=$(readelf -d "$libdir/libtessel.so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
want_version="tessel $(pkg-config --modversion tessel) ($soname, model files v"
grep -qF "$want_version" "$tmp/info.out" || { cat "$tmp/info.out" >&2; fail "model_info: no line '$want_version...'"; }
grep -qF "squeezenet1_1: 1 input(s), 1 output(s), 2 thread(s) per run" "$tmp/info.out" || fail "model_info: threads"
grep -qF "input 0 'input' f32 [2, 3, 224, 224] (1204224 bytes)" "$tmp/info.out" || fail "model_info: input shape"
grep -qF "output 0 'output' f32 [2, 1000] (8000 bytes)" "$tmp/info.out" || fail "model_info: output shape"
"$build/examples/tessel-model-info" squeezenet1_1 --batch 2 --threads 2 >"$tmp/info.ref" 2>&1 || fail "build/examples/tessel-model-info"
diff "$tmp/info.ref" "$tmp/info.out" >&2 || fail "installed model_info's output differs from the build folder's"
# a batch of 0 or a word is refused with the flag named (it was ignored: the model ran at batch 1)
for bad in "--batch 0" "--batch two" "--threads -1" "--batch +3"; do
  if "$build/examples/tessel-model-info" squeezenet1_1 $bad >"$tmp/bad.out" 2>&1; then fail "model_info accepted $bad"; fi
  grep -qF -- "${bad%% *} wants a whole number" "$tmp/bad.out" || { cat "$tmp/bad.out" >&2; fail "model_info $bad: no message"; }
done
if "$build/examples/tessel-model-info" squeezenet1_1 --batch 2 --batch 3 >"$tmp/bad.out" 2>&1 ||
  ! grep -qF -- "--batch is given twice" "$tmp/bad.out"; then fail "model_info accepted --batch twice"; fi
if "$build/examples/tessel-model-info" squeezenet1_1 --bogus >"$tmp/bad.out" 2>&1 ||
  ! grep -qF -- "unknown option '--bogus'" "$tmp/bad.out"; then fail "model_info: --bogus not named"; fi
echo "model_info (pkg-config tessel): $(head -n 1 "$tmp/info.out"), batch 2 shapes by name"

# device_app: an AOT model file from the installed tunecli, run by the app linked
# against the runtime alone (pkg-config tessel-runtime).
cc -std=c11 -O2 -Wall -Werror "$src/examples/device_app.c" -o "$tmp/device_app" \
  $(pkg-config --cflags --libs tessel-runtime) || fail "building device_app.c"
if readelf -d "$tmp/device_app" | grep -q 'NEEDED.*LLVM'; then fail "device_app needs LLVM"; fi
LD_LIBRARY_PATH=$libdir "$bindir/tunecli" compile squeezenet1_1 --target host -o "$tmp/model.so" >"$tmp/compile.log" 2>&1 ||
  { cat "$tmp/compile.log" >&2; fail "installed tunecli compile squeezenet1_1"; }
env "${preload[@]}" LD_LIBRARY_PATH=$libdir "$tmp/device_app" --threads 1 -o "$tmp/out.bin" "$tmp/model.so" seed:7 >"$tmp/app.log" 2>&1 ||
  { cat "$tmp/app.log" >&2; fail "installed device_app"; }
"$build/examples/tessel-device-app" --threads 1 -o "$tmp/ref.bin" "$tmp/model.so" seed:7 >"$tmp/ref.log" 2>&1 ||
  { cat "$tmp/ref.log" >&2; fail "build/examples/tessel-device-app"; }
cmp "$tmp/ref.bin" "$tmp/out.bin" || fail "device_app's output differs from the build folder's app"
echo "device_app (pkg-config tessel-runtime): $(stat -c %s "$tmp/out.bin") output bytes, the same as the build folder's app"
grep '^top-5' "$tmp/app.log" | sed 's/^/  /'
echo "install_test: OK"

# Sourced (bash) by the test scripts that install the build folder into a temporary
# DESTDIR (tests/install/install_test.sh, tests/python/python_test.sh):
#   install_to_tmp NAME BUILD_DIR
# makes $tmp (a folder removed when the script exits), installs BUILD_DIR into
# $dest=$tmp/dest with meson install --destdir, and defines fail MESSAGE (prints
# "NAME: FAILED: MESSAGE" on stderr, exits 1). A failing install prints meson's log.
#   sanitizer_preload LIBRARY
# sets the array preload to the environment a program that is not instrumented needs to
# load LIBRARY from a sanitized build (scripts/test.sh --sanitize): the AddressSanitizer
# runtime LIBRARY links preloaded (it has to come first) and leak detection off (the
# program's own allocations at exit are no leaks of tessel's); empty otherwise. $asan is
# that runtime's path or empty.
install_to_tmp() {
  test_name=$1
  fail() { echo "$test_name: FAILED: $*" >&2; exit 1; }
  tmp=$(mktemp -d "/tmp/tessel_$1.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  dest=$tmp/dest
  meson install -C "$2" --no-rebuild --quiet --destdir "$dest" >"$tmp/install.log" 2>&1 ||
    { cat "$tmp/install.log" >&2; fail "meson install"; }
}

sanitizer_preload() {
  preload=()
  asan=$(ldd "$1" 2>/dev/null | awk '/libasan|libclang_rt\.asan/ {print $3; exit}')
  if [ -n "$asan" ]; then
    preload=(LD_PRELOAD="$asan" ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0")
  fi
}

# Sourced (bash) by the test scripts that install the build folder into a temporary
# DESTDIR (tests/install/install_test.sh, tests/python/python_test.sh):
#   install_to_tmp NAME BUILD_DIR
# makes $tmp (a folder removed when the script exits), installs BUILD_DIR into
# $dest=$tmp/dest with meson install --destdir, and defines fail MESSAGE (prints
# "NAME: FAILED: MESSAGE" on stderr, exits 1). A failing install prints meson's log.
install_to_tmp() {
  test_name=$1
  fail() { echo "$test_name: FAILED: $*" >&2; exit 1; }
  tmp=$(mktemp -d "/tmp/tessel_$1.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  dest=$tmp/dest
  meson install -C "$2" --no-rebuild --quiet --destdir "$dest" >"$tmp/install.log" 2>&1 ||
    { cat "$tmp/install.log" >&2; fail "meson install"; }
}

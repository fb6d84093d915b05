#!/usr/bin/env bash
# Builds the device side (runtime + tessel-device-run) for AArch64 in build-aarch64/
# (or the folder given) with the meson cross file. Run programs with
#   qemu-aarch64 -L /usr/aarch64-linux-gnu build-aarch64/tessel-device-run ...
set -euo pipefail
cd "$(dirname "$0")/.."
builddir=${1:-build-aarch64}
if [ ! -f "$builddir/build.ninja" ]; then
  meson setup --cross-file cross/aarch64-linux-gnu.ini "$builddir" cross >/dev/null
fi
ninja -C "$builddir" -j2 >/dev/null
echo "cross: built $builddir/tessel-device-run (aarch64)"

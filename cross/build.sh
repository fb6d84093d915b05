#!/usr/bin/env bash
# Builds the device side (runtime + tessel-device-run) for AArch64 in build-aarch64/
# (or the folder given) with the meson cross file. Run programs with
#   qemu-aarch64 -L /usr/aarch64-linux-gnu build-aarch64/tessel-device-run ...
set -euo pipefail
cd "$(dirname "$0")/.."
builddir=${1:-build-aarch64}
# arm64 nng for tessel-rpc-server (a no-op when already unpacked)
cross/fetch-arm64-deps.sh || echo "cross: warning: no arm64 nng: tessel-rpc-server will not be built" >&2
if [ ! -f "$builddir/build.ninja" ]; then
  meson setup --cross-file cross/aarch64-linux-gnu.ini -Dwerror=true "$builddir" cross >/dev/null
fi
ninja -C "$builddir" -j2 >/dev/null
echo "cross: built $builddir/tessel-device-run and tessel-rpc-server (aarch64; the server needs cross/fetch-arm64-deps.sh first)"

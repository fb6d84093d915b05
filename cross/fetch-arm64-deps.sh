#!/usr/bin/env bash
# Unpacks Debian's arm64 nng (and the mbedtls it links against: libnng.a has the TLS
# transport) into a build-local sysroot, default build-arm64-sysroot/, for linking the
# AArch64 tessel-rpc-server statically against them. Nothing arm64 is installed: the
# packages are only downloaded and extracted with dpkg-deb -x. Idempotent.
# Needs the arm64 architecture in dpkg's list (to download arm64 packages):
#   dpkg --add-architecture arm64 && apt-get update
# which this script does when it is root and arm64 is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
dest=${1:-build-arm64-sysroot}
lib="$dest/usr/lib/aarch64-linux-gnu"
if [ -f "$lib/libnng.a" ] && [ -f "$lib/libmbedtls.a" ] && [ -f "$dest/usr/include/nng/nng.h" ]; then
  echo "cross: arm64 nng already in $dest"
  exit 0
fi
if ! dpkg --print-foreign-architectures | grep -qx arm64; then
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" dpkg --add-architecture arm64
  "${sudo_cmd[@]}" apt-get update -qq
fi
mkdir -p "$dest/debs"
dest_abs=$(cd "$dest" && pwd)
(cd "$dest_abs/debs" && apt-get download -qq libnng-dev:arm64 libnng1:arm64 libmbedtls-dev:arm64 2>/dev/null)
for d in "$dest_abs"/debs/*.deb; do dpkg-deb -x "$d" "$dest_abs"; done
[ -f "$lib/libnng.a" ] || { echo "cross: libnng.a missing after unpacking into $dest" >&2; exit 1; }
echo "cross: arm64 nng + mbedtls unpacked in $dest"

#!/usr/bin/env bash
# Installs what tessel needs on Debian 12 (idempotent: installs only what is missing)
# and configures + builds it in ./build. Run as root or with sudo available.
#   scripts/setup.sh                 # release-ish build in build/
#   scripts/setup.sh --sanitize      # ASan+UBSan build in build-asan/
#   scripts/setup.sh --deps-only [PKG...]  # only install (the packages below and PKG...),
#                                    # no build (scripts/fuzz.sh: clang-19 and libFuzzer)
set -euo pipefail
cd "$(dirname "$0")/.."

# build: compiler, LLVM 19, libffi, CUnit; models: protobuf-c + ONNX proto + ONNX test data;
# benchmarks (optional at build time): oneDNN, OpenBLAS; tuner: json-c (records), XGBoost (cost model),
# nng (RPC to a device); armv8: qemu-user and the aarch64 cross compiler; the Python module's
# tests (tests/python): numpy and pytest; tests/tuner/test_report.c: chromium renders
# `tunecli report`'s page headless (skipped without it). The static cost model
# (docs/cost_static.md) runs llvm-mca-19, from Debian's llvm-19, which llvm-19-dev depends on.
packages=(llvm-19-dev lld-19 libffi-dev libcunit1-dev meson ninja-build pkg-config gcc
          protobuf-c-compiler libprotobuf-c-dev libonnx-dev libonnx-testdata
          libdnnl-dev libopenblas-dev
          libjson-c-dev libxgboost-dev libstb-dev libnng-dev
          qemu-user gcc-aarch64-linux-gnu libc6-dev-arm64-cross
          python3-numpy python3-pytest chromium)
deps_only=false
if [ "${1:-}" = "--deps-only" ]; then
  deps_only=true
  shift
  packages+=("$@")
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get -o DPkg::Lock::Timeout=900 install -y -qq "${missing[@]}"
fi

# The AArch64 RPC server links Debian's arm64 nng (+ mbedtls) statically: downloaded and
# unpacked into build-arm64-sysroot/, nothing arm64 installed (cross/fetch-arm64-deps.sh).
cross/fetch-arm64-deps.sh >/dev/null
if $deps_only; then exit 0; fi

# werror is off in meson.build's defaults (users' builds); the project's own builds keep
# failing on any warning. An existing build folder keeps the options it was set up with.
builddir=build
opts=(-Dwerror=true)
if [ "${1:-}" = "--sanitize" ]; then
  builddir=build-asan
  opts+=(-Db_sanitize=address,undefined -Db_lundef=false -Dbuildtype=debug)
fi
if [ ! -f "$builddir/build.ninja" ]; then
  meson setup "$builddir" "${opts[@]}" >/dev/null
fi
ninja -C "$builddir" >/dev/null
echo "setup: built in $builddir/"

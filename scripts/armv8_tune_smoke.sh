#!/usr/bin/env bash
# CI smoke test of issue 8's main path: `tunecli tune squeezenet --target armv8` through the
# AArch64 tessel-rpc-server running under qemu-aarch64 on loopback, with a tiny budget
# (one trial per layer). Passes when tuning completes and every record written is an
# armv8 record measured on the server's device. qemu's timings mean nothing; only the
# path is checked.
#   scripts/armv8_tune_smoke.sh [BUILD_DIR]     (default build/, made by scripts/setup.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
builddir=${1:-build}
tunecli="$builddir/tools/tunecli"
work=$(mktemp -d /tmp/tessel-armv8-smoke-XXXXXX)
key="smoke-$$-$RANDOM"
"$tunecli" rpc-server --key "$key" --port 0 > "$work/server.log" 2>&1 &
server=$!
trap 'kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; rm -rf "$work"' EXIT
url=""
for _ in $(seq 300); do
  url=$(grep -o 'tcp://[0-9.]*:[0-9]*' "$work/server.log" | head -n 1 || true)
  [ -n "$url" ] && break
  kill -0 "$server" 2>/dev/null || break
  sleep 0.2
done
if [ -z "$url" ]; then
  echo "armv8 smoke: the RPC server did not start:" >&2
  cat "$work/server.log" >&2
  exit 1
fi
echo "armv8 smoke: server at $url"
start=$SECONDS
"$tunecli" tune squeezenet --target armv8 --device "$url" --key "$key" --trials 1 --no-e2e \
  --records "$work/armv8.jsonl"
lines=$(grep -c . "$work/armv8.jsonl" || true)
armv8=$(grep -c '^{"input":\["armv8 ' "$work/armv8.jsonl" || true)
echo "armv8 smoke: $lines records, $armv8 with an armv8 target, in $((SECONDS - start)) s"
if [ "$lines" -eq 0 ] || [ "$armv8" -ne "$lines" ]; then
  echo "armv8 smoke: expected only armv8 records" >&2
  head -n 3 "$work/armv8.jsonl" >&2
  exit 1
fi

#!/usr/bin/env bash
# The main job. Installs dependencies if missing, builds, then shows the built-in
# conv2d operator (TE, loop IR, compile time) and runs it JIT-compiled on random
# data, checked against a naive reference.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
build/tools/tunecli show conv2d --time
build/tools/tunecli run-op conv2d
